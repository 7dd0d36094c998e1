// Package features holds the feature gates that change the cache stack's behaviour, with the
// defaults of client-go v0.37.2.
//
// Like client-go, the gates are read once per process from environment variables named
// KUBE_FEATURE_<Name> (for example KUBE_FEATURE_WatchListClient=false). A value that
// strconv.ParseBool does not accept is reported and ignored; a gate locked to its default ignores
// any other value. Tests override gates with SetForTesting.
package features

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Feature names a feature gate.
type Feature string

// The gates that change the behaviour of this module.
const (
	// WatchListClient makes the Reflector try a streaming watch-list before a paginated LIST.
	WatchListClient Feature = "WatchListClient"
	// AtomicFIFO makes informers' RealFIFO replace atomically (ReplacedAll, SyncAll and
	// Bookmark deltas) and makes stores report LastStoreSyncResourceVersion.
	AtomicFIFO Feature = "AtomicFIFO"
	// UnlockWhileProcessingFIFO makes informers' RealFIFO release its lock while the consumer
	// processes what it popped. It needs AtomicFIFO.
	UnlockWhileProcessingFIFO Feature = "UnlockWhileProcessingFIFO"
	// InOrderInformersBatchProcess makes the controller pop and process deltas in batches.
	InOrderInformersBatchProcess Feature = "InOrderInformersBatchProcess"
	// InOrderInformers makes informers use RealFIFO. It is GA and locked on.
	InOrderInformers Feature = "InOrderInformers"
	// InformerResourceVersion makes an informer's controller report its last synced
	// resource version. It is GA.
	InformerResourceVersion Feature = "InformerResourceVersion"
)

type spec struct {
	def    bool
	locked bool
}

// known holds client-go v0.37.2's defaults.
var known = map[Feature]spec{
	WatchListClient:              {def: true},
	AtomicFIFO:                   {def: true},
	UnlockWhileProcessingFIFO:    {def: true},
	InOrderInformersBatchProcess: {def: true},
	InOrderInformers:             {def: true, locked: true},
	InformerResourceVersion:      {def: true},
}

var (
	envOnce sync.Once
	// fromEnv is the state read from the environment: map[Feature]bool.
	fromEnv atomic.Value
	// overrides holds SetForTesting values: map[Feature]bool, copied on write.
	overrides atomic.Value
	// overridesMu serialises writers of overrides.
	overridesMu sync.Mutex
)

// Enabled reports whether f is on. An unknown feature is off.
func Enabled(f Feature) bool {
	if o, ok := overrides.Load().(map[Feature]bool); ok {
		if v, set := o[f]; set {
			return v
		}
	}
	if v, set := envState()[f]; set {
		return v
	}
	return known[f].def
}

func envState() map[Feature]bool {
	envOnce.Do(func() { fromEnv.Store(readEnv(os.LookupEnv)) })
	return fromEnv.Load().(map[Feature]bool)
}

// readEnv reads every known gate's KUBE_FEATURE_<Name> variable through lookup.
func readEnv(lookup func(string) (string, bool)) map[Feature]bool {
	logger := klog.Background()
	state := map[Feature]bool{}
	for f, s := range known {
		raw, ok := lookup("KUBE_FEATURE_" + string(f))
		if !ok {
			continue
		}
		v, err := strconv.ParseBool(raw)
		switch {
		case err != nil:
			utilruntime.HandleErrorWithLogger(logger, err, "Could not set feature gate", "feature", f, "desiredState", raw)
		case s.locked && v != s.def:
			utilruntime.HandleErrorWithLogger(logger, nil, "Could not set feature gate, feature is locked", "feature", f, "desiredState", raw, "lockedState", s.def)
		default:
			state[f] = v
			logger.V(1).Info("Feature gate updated state", "feature", f, "enabled", v)
		}
	}
	return state
}

// TB is the part of testing.TB that SetForTesting needs.
type TB interface {
	Helper()
	Cleanup(func())
}

// SetForTesting turns f on or off until the end of the test, then restores the previous state.
// Locked gates can be changed too (so tests can cover the legacy paths). It fails for an unknown
// feature. Tests that use it must not run in parallel with tests that depend on the same gate.
func SetForTesting(tb TB, f Feature, enabled bool) {
	tb.Helper()
	if _, ok := known[f]; !ok {
		panic(fmt.Sprintf("features: unknown feature %q", f))
	}
	overridesMu.Lock()
	defer overridesMu.Unlock()
	prev, _ := overrides.Load().(map[Feature]bool)
	next := make(map[Feature]bool, len(prev)+1)
	for k, v := range prev {
		next[k] = v
	}
	next[f] = enabled
	overrides.Store(next)
	tb.Cleanup(func() {
		overridesMu.Lock()
		defer overridesMu.Unlock()
		cur, _ := overrides.Load().(map[Feature]bool)
		restored := make(map[Feature]bool, len(cur))
		for k, v := range cur {
			restored[k] = v
		}
		if old, had := prev[f]; had {
			restored[f] = old
		} else {
			delete(restored, f)
		}
		overrides.Store(restored)
	})
}
