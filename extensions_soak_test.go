package cache

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	fcache "github.com/kcache/cache/testing"
)

// The size and seed of TestExtensionsUnderFaults; make soak raises the size.
var (
	soakChanges = flag.Int("soak.changes", 3000, "changes made by TestExtensionsUnderFaults (make soak raises it)")
	soakSeed    = flag.Uint64("soak.seed", 1, "seed of TestExtensionsUnderFaults's random choices")
)

// soakHandler rebuilds the source's state from its notifications, records any notification
// that takes a key back to an older resourceVersion, and misbehaves on purpose: stall makes it
// block now and then (in the bubble's fake time), panicAfter makes it panic after it has
// recorded a notification.
type soakHandler struct {
	name       string
	stall      float64 // probability of a stall per notification
	panicAfter float64 // probability of a panic per notification

	mu        sync.Mutex // mu guards the fields below
	rng       *rand.Rand
	objects   map[string]string
	newest    map[string]int
	backwards []string
	stalls    int
	panics    int
}

func newSoakHandler(name string, seed uint64, stall, panicAfter float64) *soakHandler {
	return &soakHandler{name: name, stall: stall, panicAfter: panicAfter, rng: rand.New(rand.NewPCG(seed, 7)),
		objects: map[string]string{}, newest: map[string]int{}}
}

func (h *soakHandler) before() {
	h.mu.Lock()
	stall := h.rng.Float64() < h.stall
	d := time.Duration(1+h.rng.IntN(30)) * time.Second
	if stall {
		h.stalls++
	}
	h.mu.Unlock()
	if stall {
		time.Sleep(d) // fake time: the informer goes on while this handler is stuck
	}
}

func (h *soakHandler) after() {
	h.mu.Lock()
	p := h.rng.Float64() < h.panicAfter
	if p {
		h.panics++
	}
	h.mu.Unlock()
	if p {
		panic("soak: the handler panics on purpose")
	}
}

func (h *soakHandler) set(obj interface{}) {
	h.before()
	p := obj.(*v1.Pod)
	key := p.Namespace + "/" + p.Name
	rv, _ := strconv.Atoi(p.ResourceVersion)
	h.mu.Lock()
	if rv < h.newest[key] {
		h.backwards = append(h.backwards, fmt.Sprintf("%s@%d after @%d", key, rv, h.newest[key]))
	}
	h.newest[key] = max(h.newest[key], rv)
	h.objects[key] = p.ResourceVersion
	h.mu.Unlock()
	h.after()
}

func (h *soakHandler) OnAdd(obj interface{}, _ bool) { h.set(obj) }
func (h *soakHandler) OnUpdate(_, obj interface{})   { h.set(obj) }
func (h *soakHandler) OnDelete(obj interface{}) {
	h.before()
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		panic(err)
	}
	h.mu.Lock()
	delete(h.objects, key)
	h.mu.Unlock()
	h.after()
}

func (h *soakHandler) snapshot() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.objects)
}

// stats returns the keys that went back, the stalls and the panics so far.
func (h *soakHandler) stats() (backwards []string, stalls, panics int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.backwards...), h.stalls, h.panics
}

// TestExtensionsUnderFaults runs every extension at once against the fake source's faults:
// relist retention (the informer's queue keeps unchanged objects across relists), a handler
// with MaxPending 10 that stalls at random, one with ContainPanics that panics at random, and
// a plain one; the source changes objects, hides some changes from the watch, breaks and
// expires watches, compacts, fails lists and watches, and sends ERROR events. Afterwards
// (once a final relist has picked up the hidden changes) every handler's view and the indexer
// equal the source, no handler ever saw a key go back to an older resourceVersion, and no
// goroutine is left (synctest checks).
//
// make test runs it with 3,000 changes; make soak with many more (-soak.changes, and
// -soak.seed to vary the run). A failure names its seed in the log.
func TestExtensionsUnderFaults(t *testing.T) {
	reflTestNoErrorBackoff(t)
	ResetInformerNamesForTesting()
	defer ResetInformerNamesForTesting()
	name, err := NewInformerName("soak")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) { soakRun(t, name, *soakChanges, *soakSeed) })
}

func soakRun(t *testing.T, name *InformerName, changes int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	keys := min(max(50, changes/20), 10000)
	discard := logr.Discard()
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }, Logger: &discard})
	pod := func(i int, gen int) *v1.Pod {
		n := "p" + strconv.Itoa(i)
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns" + strconv.Itoa(i%5), Name: n, UID: types.UID("uid-" + n),
			Labels: map[string]string{"gen": strconv.Itoa(gen)}}}
	}
	// want is the source's state, key → resourceVersion, kept here because the source's own
	// List is subject to the faults.
	want := map[string]string{}
	live := map[int]bool{}
	record := func(p *v1.Pod, deleted bool) {
		if deleted {
			delete(want, p.Namespace+"/"+p.Name)
		} else {
			want[p.Namespace+"/"+p.Name] = p.ResourceVersion
		}
	}
	for i := range keys / 2 {
		p := pod(i, 0)
		src.Add(p)
		record(p, false)
		live[i] = true
	}

	metrics := &coTestMetrics{}
	inf := NewSharedIndexInformerWithOptions(src, &v1.Pod{}, SharedIndexInformerOptions{
		Indexers:                Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		Identifier:              name.WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}),
		InformerMetricsProvider: metrics,
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(context.Context, *Reflector, error) {})
	stalling := newSoakHandler("stalling", 1, 0.01, 0)
	panicking := newSoakHandler("panicking", 2, 0, 0.05)
	plain := newSoakHandler("plain", 3, 0, 0)
	for _, reg := range []struct {
		h    *soakHandler
		opts HandlerOptions
	}{
		{stalling, HandlerOptions{MaxPending: ptr.To(10), Logger: &discard}},
		{panicking, HandlerOptions{ContainPanics: ptr.To(true), Logger: &discard}},
		{plain, HandlerOptions{Logger: &discard}},
	} {
		if _, err := inf.AddEventHandlerWithOptions(reg.h, reg.opts); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), discard))
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	for i := range changes {
		k := rng.IntN(keys)
		hidden := rng.IntN(30) == 0
		p := pod(k, i)
		switch {
		case !live[k]:
			live[k] = true
			if hidden {
				src.AddDropWatch(p)
			} else {
				src.Add(p)
			}
		case rng.IntN(4) == 0:
			live[k] = false
			if hidden {
				src.DeleteDropWatch(p)
			} else {
				src.Delete(p)
			}
		default:
			if hidden {
				src.ModifyDropWatch(p)
			} else {
				src.Modify(p)
			}
		}
		record(p, !live[k])
		if rng.IntN(50) == 0 {
			synctest.Wait() // let the informer settle, so that the fault meets an open watch
			switch rng.IntN(7) {
			case 0:
				src.CloseWatches()
			case 1:
				src.ResetWatch()
			case 2:
				src.Compact(src.ResourceVersion() - rng.IntN(5))
			case 3:
				src.FailLists(1+rng.IntN(2), fcache.InternalError())
				src.CloseWatches()
				src.Compact(src.ResourceVersion())
			case 4:
				src.FailWatches(1, []error{fcache.ExpiredError(), fcache.TooManyRequestsError(1), fcache.ConnectionRefusedError()}[rng.IntN(3)])
				src.CloseWatches()
			case 5:
				src.InjectError([]error{fcache.ExpiredError(), fcache.InternalError()}[rng.IntN(2)])
			case 6:
				src.Bookmark()
			}
		}
		if rng.IntN(10) == 0 {
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
	}

	// A final relist picks up the changes hidden from the watch: the watch breaks and the next
	// one is refused as expired. (A compaction alone would not do: a Reflector that saw a change
	// after the hidden ones resumes from the newest version, which is never compacted.)
	synctest.Wait()
	src.FailWatches(1, fcache.ExpiredError())
	src.CloseWatches()
	handlers := []*soakHandler{stalling, panicking, plain}
	caughtUp := func() bool {
		for _, h := range handlers {
			if !maps.Equal(h.snapshot(), want) {
				return false
			}
		}
		return maps.Equal(infTestStoreState(inf.GetStore()), want)
	}
	for range 30 * 60 {
		synctest.Wait()
		if caughtUp() {
			break
		}
		time.Sleep(time.Second)
	}
	for _, h := range handlers {
		if got := h.snapshot(); !maps.Equal(got, want) {
			t.Errorf("handler %s differs from the source: %s", h.name, infTestDiff(got, want))
		}
		if backwards, _, _ := h.stats(); len(backwards) > 0 {
			t.Errorf("handler %s saw keys go back: %v", h.name, backwards)
		}
	}
	if got := infTestStoreState(inf.GetStore()); !maps.Equal(got, want) {
		t.Errorf("indexer differs from the source: %s", infTestDiff(got, want))
	}
	// The misbehaviour must really have happened, or the test proves nothing.
	_, stalls, _ := stalling.stats()
	_, _, panics := panicking.stats()
	if stalls == 0 || metrics.coalesced.n.Load() == 0 {
		t.Errorf("the stalling handler stalled %d times and %d notifications were coalesced; want both > 0",
			stalls, metrics.coalesced.n.Load())
	}
	if n := metrics.panics.n.Load(); panics == 0 || int(n) != panics {
		t.Errorf("the handler panicked %d times, %d panics counted; want the same, > 0", panics, n)
	}
	fills := 0
	for _, r := range src.Requests() {
		if r.Verb == fcache.VerbList || (r.Options.SendInitialEvents != nil && *r.Options.SendInitialEvents) {
			fills++
		}
	}
	t.Logf("seed %d: %d changes, %d keys, %d requests (%d relists), %d stalls, %d panics, %d coalesced notifications",
		seed, changes, keys, len(src.Requests()), fills, stalls, panics, metrics.coalesced.n.Load())
}
