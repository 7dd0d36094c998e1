package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/internal/features"
	fcache "github.com/kcache/cache/testing"
)

func ctrlTestCM(name, v string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"v": v}}
}

// ctrlTestEvents is a thread-safe ResourceEventHandler recording events as "add a=1 initial",
// "update a=1 -> a=2", "delete a=2" or "delete tomb a=1".
type ctrlTestEvents struct {
	mu     sync.Mutex
	events []string
}

func ctrlTestCMString(obj interface{}) string {
	switch o := obj.(type) {
	case *v1.ConfigMap:
		return o.Name + "=" + o.Data["v"]
	case DeletedFinalStateUnknown:
		if o.Obj == nil {
			return "tomb " + o.Key + "=nil"
		}
		return "tomb " + ctrlTestCMString(o.Obj)
	}
	return fmt.Sprintf("%T", obj)
}

func (e *ctrlTestEvents) record(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, s)
}

func (e *ctrlTestEvents) OnAdd(obj interface{}, isInInitialList bool) {
	s := "add " + ctrlTestCMString(obj)
	if isInInitialList {
		s += " initial"
	}
	e.record(s)
}

func (e *ctrlTestEvents) OnUpdate(oldObj, newObj interface{}) {
	e.record("update " + ctrlTestCMString(oldObj) + " -> " + ctrlTestCMString(newObj))
}

func (e *ctrlTestEvents) OnDelete(obj interface{}) { e.record("delete " + ctrlTestCMString(obj)) }

func (e *ctrlTestEvents) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.events)
}

// take returns the events recorded since the last take, sorted (several queue flavours deliver
// a relist in different orders).
func (e *ctrlTestEvents) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.events
	e.events = nil
	sort.Strings(out)
	return out
}

// ctrlTestGates are the feature-gate combinations that select the informer's queue.
var ctrlTestGates = []struct {
	name  string
	gates map[features.Feature]bool
}{
	{"default: atomic RealFIFO, unlocked, batches", nil},
	{"atomic RealFIFO, locked, no batches", map[features.Feature]bool{features.UnlockWhileProcessingFIFO: false, features.InOrderInformersBatchProcess: false}},
	{"non-atomic RealFIFO over the store", map[features.Feature]bool{features.AtomicFIFO: false}},
	{"DeltaFIFO", map[features.Feature]bool{features.InOrderInformers: false}},
}

// TestInformerAgainstFakeSource runs NewInformerWithOptions against the fake source through
// an initial sync, watch events, a relist that drops an object, and a resync, under every
// queue flavour the feature gates select.
func TestInformerAgainstFakeSource(t *testing.T) {
	for _, g := range ctrlTestGates {
		t.Run(g.name, func(t *testing.T) {
			for f, v := range g.gates {
				features.SetForTesting(t, f, v)
			}
			synctest.Test(t, func(t *testing.T) {
				ctrlTestInformerScenario(t)
			})
		})
	}
}

func ctrlTestInformerScenario(t *testing.T) {
	source := fcache.NewFakeControllerSource()
	defer source.Shutdown()
	source.Add(ctrlTestCM("a", "1"))
	source.Add(ctrlTestCM("b", "1"))

	events := &ctrlTestEvents{}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	store, ctrl := NewInformerWithOptions(InformerOptions{
		ListerWatcher: source,
		ObjectType:    &v1.ConfigMap{},
		Handler:       events,
		ResyncPeriod:  time.Minute,
		Indexers:      Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
	})
	ctrl.(*controller).clock = clk
	if _, ok := store.(Indexer); !ok {
		t.Fatalf("store is a %T, want an Indexer (Indexers were given)", store)
	}
	if got := ctrl.LastSyncResourceVersion(); got != "" {
		t.Errorf("LastSyncResourceVersion before Run = %q", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl.RunWithContext(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	storeContents := func() []string {
		var out []string
		for _, o := range store.List() {
			out = append(out, ctrlTestCMString(o))
		}
		sort.Strings(out)
		return out
	}
	steps := []struct {
		name      string
		do        func()
		want      []string
		wantStore []string
	}{
		{
			name:      "initial sync",
			do:        func() {},
			want:      []string{"add a=1 initial", "add b=1 initial"},
			wantStore: []string{"a=1", "b=1"},
		},
		{
			name: "watch events",
			do: func() {
				source.Modify(ctrlTestCM("a", "2"))
				source.Add(ctrlTestCM("c", "1"))
				source.Delete(ctrlTestCM("b", "1"))
			},
			want:      []string{"add c=1", "delete b=1", "update a=1 -> a=2"},
			wantStore: []string{"a=2", "c=1"},
		},
		{
			name: "a relist that drops an object",
			do: func() {
				source.DeleteDropWatch(ctrlTestCM("c", "1"))
				source.ModifyDropWatch(ctrlTestCM("a", "3"))
				source.ResetWatch()
			},
			want:      []string{"delete tomb c=1", "update a=2 -> a=3"},
			wantStore: []string{"a=3"},
		},
		{
			name: "resync",
			do: func() {
				clk.Step(time.Minute)
			},
			want:      []string{"update a=3 -> a=3"},
			wantStore: []string{"a=3"},
		},
	}
	for _, s := range steps {
		s.do()
		// Let the reflector and the processing loop run; step the fake clock (by a second at
		// a time) only when they wait on it, e.g. for the backoff before a relist.
		for i := 0; i < 120 && events.count() < len(s.want); i++ {
			synctest.Wait()
			if events.count() < len(s.want) {
				clk.Step(time.Second)
			}
		}
		synctest.Wait()
		if !ctrl.HasSynced() || !IsDone(ctrl.HasSyncedChecker()) {
			t.Fatalf("%s: not synced", s.name)
		}
		if got := events.take(); !slices.Equal(got, s.want) {
			t.Errorf("%s: events\n  %q\nwant\n  %q", s.name, got, s.want)
		}
		if got := storeContents(); !slices.Equal(got, s.wantStore) {
			t.Errorf("%s: store %q, want %q", s.name, got, s.wantStore)
		}
		if got, want := ctrl.LastSyncResourceVersion(), fmt.Sprint(source.ResourceVersion()); got != want {
			t.Errorf("%s: LastSyncResourceVersion = %q, want %q", s.name, got, want)
		}
	}
}

// ctrlTestQueueConfig returns a Config over a RealFIFO fed by source, with process as its
// Process and ProcessBatch.
func ctrlTestQueueConfig(source ListerWatcher, process func(Deltas) error) (*Config, *RealFIFO) {
	fifo := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})
	cfg := &Config{
		Queue:         fifo,
		ListerWatcher: source,
		ObjectType:    &v1.ConfigMap{},
		Process: func(obj interface{}, _ bool) error {
			return process(obj.(Deltas))
		},
		ProcessBatch: func(deltas []Delta, _ bool) error {
			return process(deltas)
		},
	}
	return cfg, fifo
}

func TestControllerReportsProcessErrors(t *testing.T) {
	cases := []struct {
		name    string
		handler bool
	}{
		{"logged without a handler", false},
		{"logged and passed to the handler", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				source := fcache.NewFakeControllerSource()
				defer source.Shutdown()
				boom := errors.New("boom")
				cfg, fifo := ctrlTestQueueConfig(source, func(ds Deltas) error {
					for _, d := range ds {
						if cm, ok := d.Object.(*v1.ConfigMap); ok && cm.Name == "bad" {
							return boom
						}
					}
					return nil
				})
				type report struct {
					obj interface{}
					err error
				}
				var reports []report
				if tc.handler {
					cfg.ProcessErrorHandler = func(_ context.Context, obj interface{}, err error) {
						reports = append(reports, report{obj, err})
					}
				}
				logger, buf := fifoTestBufferLogger()
				ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
				ctrl := New(cfg)
				done := make(chan struct{})
				go func() { defer close(done); ctrl.RunWithContext(ctx) }()
				synctest.Wait()
				// One at a time, so that each is processed alone.
				source.Add(ctrlTestCM("bad", "1"))
				synctest.Wait()
				source.Add(ctrlTestCM("good", "1"))
				synctest.Wait()
				cancel()
				<-done
				if !fifo.IsClosed() {
					t.Error("the queue was not closed when the context ended")
				}
				if out := buf.String(); !strings.Contains(out, "Failed to process deltas") || !strings.Contains(out, `key="ns/bad"`) {
					t.Errorf("log lacks the failure and its key:\n%s", out)
				}
				if !tc.handler {
					return
				}
				if len(reports) != 1 || !errors.Is(reports[0].err, boom) {
					t.Fatalf("reports = %v, want one with %v", reports, boom)
				}
				ds, ok := reports[0].obj.(Deltas)
				if !ok || len(ds) != 1 || ds[0].Object.(*v1.ConfigMap).Name != "bad" {
					t.Errorf("reported object %#v, want the Deltas of ns/bad", reports[0].obj)
				}
			})
		})
	}
}

// TestControllerBatchProcessing checks that the process loop pops batches only when the
// InOrderInformersBatchProcess gate is on and ProcessBatch is set, and that a failed batch is
// reported whole.
func TestControllerBatchProcessing(t *testing.T) {
	cases := []struct {
		name         string
		gate         bool
		noBatchFunc  bool
		wantReported string // what ProcessErrorHandler receives
	}{
		{"gate on: one batch", true, false, "batch ns/x,ns/y"},
		{"gate off: one item at a time", false, false, "deltas ns/x; deltas ns/y"},
		{"no ProcessBatch: one item at a time", true, true, "deltas ns/x; deltas ns/y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			features.SetForTesting(t, features.InOrderInformersBatchProcess, tc.gate)
			synctest.Test(t, func(t *testing.T) {
				source := fcache.NewFakeControllerSource()
				defer source.Shutdown()
				boom := errors.New("boom")
				// Fail what comes from the two Adds, accept the reflector's (empty) list.
				cfg, fifo := ctrlTestQueueConfig(source, func(ds Deltas) error {
					if _, isCM := ds[0].Object.(*v1.ConfigMap); isCM {
						return boom
					}
					return nil
				})
				if tc.noBatchFunc {
					cfg.ProcessBatch = nil
				}
				var reported []string
				cfg.ProcessErrorHandler = func(_ context.Context, obj interface{}, err error) {
					if !errors.Is(err, boom) {
						t.Errorf("reported error %v", err)
					}
					switch o := obj.(type) {
					case []Delta:
						reported = append(reported, "batch "+processedKey(o[0])+","+processedKey(o[1]))
					case Deltas:
						reported = append(reported, "deltas "+processedKey(o[0]))
					default:
						t.Errorf("reported a %T", obj)
					}
				}
				// Queue two objects before anything pops, so that they can form a batch.
				if err := errors.Join(fifo.Add(ctrlTestCM("x", "1")), fifo.Add(ctrlTestCM("y", "1"))); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
				ctrl := New(cfg)
				done := make(chan struct{})
				go func() { defer close(done); ctrl.RunWithContext(ctx) }()
				synctest.Wait()
				cancel()
				<-done
				if got := strings.Join(reported, "; "); got != tc.wantReported {
					t.Errorf("reported %q, want %q", got, tc.wantReported)
				}
			})
		})
	}
}

func TestControllerWatchErrorHandlerPrecedence(t *testing.T) {
	cases := []struct {
		name         string
		plain, withC bool
		want         string
	}{
		{"context handler alone", false, true, "ctx"},
		{"plain handler wins", true, true, "plain"},
		{"plain handler alone", true, false, "plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				source := fcache.NewFakeControllerSource()
				defer source.Shutdown()
				source.SetListError(errors.New("list failed"))
				source.SetWatchListSupported(false)
				cfg, _ := ctrlTestQueueConfig(source, func(Deltas) error { return nil })
				var mu sync.Mutex
				var calls []string
				if tc.plain {
					cfg.WatchErrorHandler = func(_ *Reflector, _ error) { mu.Lock(); calls = append(calls, "plain"); mu.Unlock() }
				}
				if tc.withC {
					cfg.WatchErrorHandlerWithContext = func(_ context.Context, _ *Reflector, _ error) {
						mu.Lock()
						calls = append(calls, "ctx")
						mu.Unlock()
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				ctrl := New(cfg)
				done := make(chan struct{})
				go func() { defer close(done); ctrl.RunWithContext(ctx) }()
				synctest.Wait()
				cancel()
				<-done
				mu.Lock()
				defer mu.Unlock()
				if len(calls) == 0 {
					t.Fatal("no watch error handler was called")
				}
				for _, c := range calls {
					if c != tc.want {
						t.Fatalf("calls %v, want only %q", calls, tc.want)
					}
				}
			})
		})
	}
}

func TestNewInformerConstructors(t *testing.T) {
	upper := func(obj interface{}) (interface{}, error) {
		cm, ok := obj.(*v1.ConfigMap)
		if !ok {
			return obj, nil
		}
		cm = cm.DeepCopy()
		cm.Data["v"] = strings.ToUpper(cm.Data["v"])
		return cm, nil
	}
	cases := []struct {
		name        string
		build       func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller)
		wantIndexer bool
		wantV       string
	}{
		{"NewInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewInformer(lw, &v1.ConfigMap{}, 0, h)
		}, false, "x"},
		{"NewIndexerInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewIndexerInformer(lw, &v1.ConfigMap{}, 0, h, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		}, true, "x"},
		{"NewTransformingInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewTransformingInformer(lw, &v1.ConfigMap{}, 0, h, upper)
		}, false, "X"},
		{"NewTransformingIndexerInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewTransformingIndexerInformer(lw, &v1.ConfigMap{}, 0, h, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, upper)
		}, true, "X"},
		{"NewInformerWithOptions with Transform", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewInformerWithOptions(InformerOptions{ListerWatcher: lw, ObjectType: &v1.ConfigMap{}, Handler: h, Transform: upper})
		}, false, "X"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				source := fcache.NewFakeControllerSource()
				defer source.Shutdown()
				source.Add(ctrlTestCM("a", "x"))
				events := &ctrlTestEvents{}
				store, ctrl := tc.build(source, events)
				indexer, isIndexer := store.(Indexer)
				if hasIndex := isIndexer && indexer.GetIndexers()[NamespaceIndex] != nil; hasIndex != tc.wantIndexer {
					t.Errorf("store has the namespace index: %v, want %v", hasIndex, tc.wantIndexer)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); ctrl.Run(ctx.Done()) }()
				synctest.Wait()
				cancel()
				<-done
				want := []string{"add a=" + tc.wantV + " initial"}
				if got := events.take(); !slices.Equal(got, want) {
					t.Errorf("events %q, want %q", got, want)
				}
				obj, exists, err := store.GetByKey("ns/a")
				if err != nil || !exists || ctrlTestCMString(obj) != "a="+tc.wantV {
					t.Errorf("stored %v, %v, %v", obj, exists, err)
				}
			})
		})
	}
}

func TestNewQueueFIFOFollowsFeatureGates(t *testing.T) {
	cases := []struct {
		name     string
		gates    map[features.Feature]bool
		wantName string
		check    func(t *testing.T, q Queue)
	}{
		{"default", nil, "RealFIFO *v1.ConfigMap", func(t *testing.T, q Queue) {
			f := q.(*RealFIFO)
			if !f.emitAtomicEvents || !f.unlockWhileProcessing || !f.emitDeltaTypeBookmark || f.knownObjects != nil {
				t.Errorf("RealFIFO atomic=%v unlock=%v bookmark=%v known=%v", f.emitAtomicEvents, f.unlockWhileProcessing, f.emitDeltaTypeBookmark, f.knownObjects)
			}
		}},
		{"unlock off", map[features.Feature]bool{features.UnlockWhileProcessingFIFO: false}, "RealFIFO *v1.ConfigMap", func(t *testing.T, q Queue) {
			if f := q.(*RealFIFO); !f.emitAtomicEvents || f.unlockWhileProcessing {
				t.Errorf("atomic=%v unlock=%v", f.emitAtomicEvents, f.unlockWhileProcessing)
			}
		}},
		{"atomic off", map[features.Feature]bool{features.AtomicFIFO: false}, "RealFIFO *v1.ConfigMap", func(t *testing.T, q Queue) {
			if f := q.(*RealFIFO); f.emitAtomicEvents || f.knownObjects == nil {
				t.Errorf("atomic=%v known=%v", f.emitAtomicEvents, f.knownObjects)
			}
		}},
		{"in-order off", map[features.Feature]bool{features.InOrderInformers: false}, "DeltaFIFO *v1.ConfigMap", func(t *testing.T, q Queue) {
			if f := q.(*DeltaFIFO); !f.emitDeltaTypeReplaced || f.knownObjects == nil {
				t.Errorf("replaced=%v known=%v", f.emitDeltaTypeReplaced, f.knownObjects)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for f, v := range tc.gates {
				features.SetForTesting(t, f, v)
			}
			_, q := newQueueFIFO(klog.Background(), &v1.ConfigMap{}, NewStore(MetaNamespaceKeyFunc), nil, InformerNameAndResource{}, nil)
			if got := q.HasSyncedChecker().Name(); got != tc.wantName {
				t.Errorf("name %q, want %q", got, tc.wantName)
			}
			tc.check(t, q)
		})
	}
}

func TestInformerProcessRejectsNonDeltas(t *testing.T) {
	ctrl := newInformer(NewStore(MetaNamespaceKeyFunc), InformerOptions{Handler: &ctrlTestEvents{}}, MetaNamespaceKeyFunc)
	err := ctrl.(*controller).config.Process(runtime.Object(nil), false)
	if !errors.Is(err, errNotDeltas) {
		t.Errorf("Process(non-Deltas) = %v, want %v", err, errNotDeltas)
	}
}

// TestInformerTransformsOnce checks that, with a streaming watch-list (the default), each
// object of the initial list goes through the informer's transform once: the Reflector
// transforms while it buffers, and the queue does not transform again (client-go does).
func TestInformerTransformsOnce(t *testing.T) {
	cases := []struct {
		name      string
		watchList bool
	}{
		{"watch-list", true},
		{"paginated list", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			features.SetForTesting(t, features.WatchListClient, tc.watchList)
			synctest.Test(t, func(t *testing.T) {
				source := fcache.NewFakeControllerSource()
				defer source.Shutdown()
				source.Add(ctrlTestCM("a", "1"))
				source.Add(ctrlTestCM("b", "1"))
				var mu sync.Mutex
				calls := map[string]int{}
				_, ctrl := NewInformerWithOptions(InformerOptions{
					ListerWatcher: source,
					ObjectType:    &v1.ConfigMap{},
					Handler:       &ctrlTestEvents{},
					Transform: func(obj interface{}) (interface{}, error) {
						if cm, ok := obj.(*v1.ConfigMap); ok {
							mu.Lock()
							calls[cm.Name]++
							mu.Unlock()
						}
						return obj, nil
					},
				})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); ctrl.RunWithContext(ctx) }()
				synctest.Wait()
				if !ctrl.HasSynced() {
					t.Fatal("not synced")
				}
				cancel()
				<-done
				mu.Lock()
				defer mu.Unlock()
				if calls["a"] != 1 || calls["b"] != 1 {
					t.Errorf("transform calls %v, want one per object", calls)
				}
			})
		})
	}
}

// TestControllerProcessPanics checks both outcomes of a panicking process function: by default
// the panic propagates out of RunWithContext (crashing the program, as in client-go); with
// utilruntime.ReallyCrash off it is logged and the loop starts again a second later.
func TestControllerProcessPanics(t *testing.T) {
	cases := []struct {
		name        string
		reallyCrash bool
	}{
		{"panic propagates", true},
		{"panic is logged and processing resumes", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prev := utilruntime.ReallyCrash
			utilruntime.ReallyCrash = tc.reallyCrash
			defer func() { utilruntime.ReallyCrash = prev }()
			synctest.Test(t, func(t *testing.T) {
				source := fcache.NewFakeControllerSource()
				defer source.Shutdown()
				var mu sync.Mutex
				var processed []string
				cfg, fifo := ctrlTestQueueConfig(source, func(ds Deltas) error {
					cm, ok := ds[0].Object.(*v1.ConfigMap)
					if !ok {
						return nil
					}
					if cm.Name == "boom" {
						panic("handler exploded")
					}
					mu.Lock()
					processed = append(processed, cm.Name)
					mu.Unlock()
					return nil
				})
				cfg.ProcessBatch = nil
				clk := clocktesting.NewFakeClock(time.Unix(0, 0))
				ctrl := New(cfg)
				ctrl.(*controller).clock = clk
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				recovered := make(chan interface{}, 1)
				go func() {
					defer func() { recovered <- recover() }()
					ctrl.RunWithContext(ctx)
				}()
				synctest.Wait()
				if err := errors.Join(fifo.Add(ctrlTestCM("boom", "1")), fifo.Add(ctrlTestCM("after", "1"))); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if tc.reallyCrash {
					if r := <-recovered; r == nil || !strings.Contains(fmt.Sprint(r), "handler exploded") {
						t.Fatalf("recovered %v, want the handler's panic", r)
					}
					return // the deferred cancel stops the reflector
				}
				mu.Lock()
				if len(processed) != 0 {
					t.Errorf("processed %v before the restart delay", processed)
				}
				mu.Unlock()
				clk.Step(processLoopRestartDelay)
				synctest.Wait()
				mu.Lock()
				if !slices.Equal(processed, []string{"after"}) {
					t.Errorf("processed %v after the restart, want [after]", processed)
				}
				mu.Unlock()
				cancel()
				if r := <-recovered; r != nil {
					t.Fatalf("RunWithContext panicked: %v", r)
				}
			})
		})
	}
}
