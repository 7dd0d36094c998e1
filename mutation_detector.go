package cache

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// mutationDetectionEnabled is read once from KUBE_CACHE_MUTATION_DETECTOR.
var mutationDetectionEnabled, _ = strconv.ParseBool(os.Getenv("KUBE_CACHE_MUTATION_DETECTOR"))

// MutationDetector watches cached objects for a while to catch code that modifies objects it
// got from a cache, which all readers share. Informers feed it every object they store.
type MutationDetector interface {
	// AddObject starts watching obj (only runtime.Objects; tombstones are ignored).
	AddObject(obj interface{})

	// Run compares the watched objects with their copies periodically until stopCh is closed.
	Run(stopCh <-chan struct{})
}

// NewCacheMutationDetector returns a detector named name. Unless the environment variable
// KUBE_CACHE_MUTATION_DETECTOR is "true" (read once at start-up) it does nothing. When on, it is
// a debugging aid that costs a deep copy of every object and keeps objects alive for about two
// minutes: every second it compares the objects added in the last two to four minutes with
// their copies and, on a difference, prints both and panics, as client-go does — a mutated cache
// cannot be trusted.
func NewCacheMutationDetector(name string) MutationDetector {
	if !mutationDetectionEnabled {
		return dummyMutationDetector{}
	}
	klog.Background().Info("Warning: mutation detector is enabled, this will result in memory leakage")
	return newCacheMutationDetector(name, clock.RealClock{})
}

func newCacheMutationDetector(name string, clk clock.Clock) *defaultCacheMutationDetector {
	return &defaultCacheMutationDetector{name: name, period: time.Second, retainDuration: 2 * time.Minute, clock: clk}
}

type dummyMutationDetector struct{}

func (dummyMutationDetector) Run(<-chan struct{})   {}
func (dummyMutationDetector) AddObject(interface{}) {}

// defaultCacheMutationDetector keeps each added object with a deep copy and compares them.
type defaultCacheMutationDetector struct {
	name           string
	period         time.Duration
	retainDuration time.Duration
	clock          clock.Clock

	// failureFunc replaces the panic in tests.
	failureFunc func(message string)

	// addedMu guards added.
	addedMu sync.Mutex
	// added holds objects added since the last comparison.
	added []mutationDetectorEntry

	// compareMu serialises CompareObjects and guards the fields below.
	compareMu sync.Mutex
	// current holds the objects of the running retention window, retained those of the
	// previous one.
	current, retained []mutationDetectorEntry
	lastRotated       time.Time
}

// mutationDetectorEntry is a cached object and the copy it must stay equal to.
type mutationDetectorEntry struct {
	cached, copied interface{}
}

// Run compares every period until stopCh is closed, rotating the retention windows.
func (d *defaultCacheMutationDetector) Run(stopCh <-chan struct{}) {
	for {
		d.rotate()
		d.CompareObjects()
		select {
		case <-stopCh:
			return
		case <-d.clock.After(d.period):
		}
	}
}

// rotate drops the previous window once the current one is older than retainDuration.
func (d *defaultCacheMutationDetector) rotate() {
	d.compareMu.Lock()
	defer d.compareMu.Unlock()
	now := d.clock.Now()
	if d.lastRotated.IsZero() {
		d.lastRotated = now
		return
	}
	if now.Sub(d.lastRotated) > d.retainDuration {
		d.retained, d.current = d.current, nil
		d.lastRotated = now
	}
}

// AddObject deep-copies obj and watches it.
func (d *defaultCacheMutationDetector) AddObject(obj interface{}) {
	if _, ok := obj.(DeletedFinalStateUnknown); ok {
		return
	}
	robj, ok := obj.(runtime.Object)
	if !ok || robj == nil || reflect.ValueOf(robj).IsNil() {
		return
	}
	entry := mutationDetectorEntry{cached: robj, copied: robj.DeepCopyObject()}
	d.addedMu.Lock()
	d.added = append(d.added, entry)
	d.addedMu.Unlock()
}

// CompareObjects compares every watched object with its copy and fails on a difference.
func (d *defaultCacheMutationDetector) CompareObjects() {
	d.compareMu.Lock()
	defer d.compareMu.Unlock()

	d.addedMu.Lock()
	d.current = append(d.current, d.added...)
	d.added = nil
	d.addedMu.Unlock()

	altered := false
	for _, window := range [][]mutationDetectorEntry{d.current, d.retained} {
		for i, e := range window {
			if !reflect.DeepEqual(e.cached, e.copied) {
				fmt.Printf("CACHE %s[%d] ALTERED!\n%v\n", d.name, i, diff.Diff(e.copied, e.cached))
				altered = true
			}
		}
	}
	if !altered {
		return
	}
	msg := fmt.Sprintf("cache %s modified", d.name)
	if d.failureFunc != nil {
		d.failureFunc(msg)
		return
	}
	panic(msg)
}
