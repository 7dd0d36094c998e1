package cache

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kcache/cache/internal/features"
	fcache "github.com/kcache/cache/testing"
)

// TestSharedInformerDeliversChanges runs the whole flow under every combination of the
// feature switches an informer reads.
func TestSharedInformerDeliversChanges(t *testing.T) {
	cases := []struct {
		name string
		off  []features.Feature
	}{
		{name: "defaults"},
		{name: "no watch-list", off: []features.Feature{features.WatchListClient}},
		{name: "no atomic FIFO", off: []features.Feature{features.AtomicFIFO}},
		{name: "no unlock while processing", off: []features.Feature{features.UnlockWhileProcessingFIFO}},
		{name: "no batch processing", off: []features.Feature{features.InOrderInformersBatchProcess}},
		{name: "all beta off", off: []features.Feature{features.WatchListClient, features.AtomicFIFO,
			features.UnlockWhileProcessingFIFO, features.InOrderInformersBatchProcess}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range tc.off {
				features.SetForTesting(t, f, false)
			}
			src := infTestSource("a", "b")
			inf := infTestNewInformer(src, 0)
			r1, r2 := newInfTestRecorder(), newInfTestRecorder()
			reg1, err := inf.AddEventHandler(r1)
			if err != nil {
				t.Fatal(err)
			}
			reg2, err := inf.AddEventHandler(r2)
			if err != nil {
				t.Fatal(err)
			}
			infTestRun(t, inf)
			infTestWaitSynced(t, inf, reg1, reg2)
			for _, r := range []*infTestRecorder{r1, r2} {
				if got, want := infTestNextN(t, r, 2), []string{"add a@1 initial", "add b@2 initial"}; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("initial events %v, want %v", got, want)
				}
			}
			a := infTestPod("ns", "a", "")
			a.Labels = map[string]string{"v": "2"}
			src.Modify(a)
			src.Delete(infTestPod("ns", "b", ""))
			src.Add(infTestPod("ns", "c", ""))
			want := []string{"update a@1->a@3", "delete b@4", "add c@5"}
			for _, r := range []*infTestRecorder{r1, r2} {
				for _, w := range want {
					if got := infTestNext(t, r); got != w {
						t.Fatalf("got %q, want %q", got, w)
					}
				}
			}
			if keys := inf.GetIndexer().ListKeys(); fmt.Sprint(infTestSorted(keys)) != "[ns/a ns/c]" {
				t.Fatalf("indexer keys %v", keys)
			}
			if rv := inf.LastSyncResourceVersion(); rv == "" {
				t.Fatal("LastSyncResourceVersion empty after sync")
			}
		})
	}
}

// TestSharedInformerBlockedHandler: one blocked handler does not hold up the other one or the
// cache.
func TestSharedInformerBlockedHandler(t *testing.T) {
	src := infTestSource("a")
	inf := infTestNewInformer(src, 0)
	blocked, free := newInfTestRecorder(), newInfTestRecorder()
	blocked.gate = make(chan struct{})
	openGate := sync.OnceFunc(func() { close(blocked.gate) })
	if _, err := inf.AddEventHandler(blocked); err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(free); err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	t.Cleanup(openGate) // runs before the informer's stop, which waits for the handler
	if got := infTestNext(t, free); got != "add a@1 initial" {
		t.Fatalf("got %q", got)
	}
	const changes = 300
	for i := 0; i < changes; i++ {
		src.Add(infTestPod("ns", fmt.Sprintf("p%03d", i), ""))
	}
	for i := 0; i < changes; i++ {
		if got, want := infTestNext(t, free), fmt.Sprintf("add p%03d@%d", i, i+2); got != want {
			t.Fatalf("free handler: got %q, want %q", got, want)
		}
	}
	if n := len(inf.GetStore().List()); n != changes+1 {
		t.Fatalf("store has %d objects, want %d", n, changes+1)
	}
	blocked.expectNone(t)
	openGate()
	if got := infTestNext(t, blocked); got != "add a@1 initial" {
		t.Fatalf("blocked handler: got %q", got)
	}
	for i := 0; i < changes; i++ {
		if got, want := infTestNext(t, blocked), fmt.Sprintf("add p%03d@%d", i, i+2); got != want {
			t.Fatalf("blocked handler: got %q, want %q", got, want)
		}
	}
}

// TestSharedInformerLateHandler: a handler added after sync gets the cache as initial adds,
// queued before AddEventHandler returns, and then the later changes.
func TestSharedInformerLateHandler(t *testing.T) {
	src := infTestSource("a", "b", "c")
	inf := infTestNewInformer(src, 0)
	infTestRun(t, inf)
	infTestWaitSynced(t, inf)

	late := newInfTestRecorder()
	late.gate = make(chan struct{})
	late.entered = make(chan struct{}, 8)
	openGate := sync.OnceFunc(func() { close(late.gate) })
	t.Cleanup(openGate) // runs before the informer's stop, which waits for the handler
	reg, err := inf.AddEventHandler(late)
	if err != nil {
		t.Fatal(err)
	}
	if reg.HasSynced() {
		t.Fatal("late handler synced before processing its initial adds")
	}
	// The listener runs already: once its handler is blocked in the first initial add, the
	// other two must be queued behind it, and nothing else.
	select {
	case <-late.entered:
	case <-time.After(infTestTimeout):
		t.Fatal("late handler not called")
	}
	if n := reg.(*processorListener).pendingForTest(); n != 2 {
		t.Fatalf("%d notifications queued behind the first initial add, want 2", n)
	}
	src.Add(infTestPod("ns", "d", ""))
	openGate()
	if got, want := infTestNextN(t, late, 3), []string{"add a@1 initial", "add b@2 initial", "add c@3 initial"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("initial adds %v, want %v", got, want)
	}
	if got := infTestNext(t, late); got != "add d@4" {
		t.Fatalf("then %q", got)
	}
	infTestWaitClosed(t, reg.HasSyncedChecker().Done(), "late handler sync")
}

// TestSharedInformerHandlerHasSynced: the informer syncs when the cache has the list; a
// handler only once it has processed its initial adds.
func TestSharedInformerHandlerHasSynced(t *testing.T) {
	src := infTestSource("a", "b")
	inf := infTestNewInformer(src, 0)
	slow := newInfTestRecorder()
	slow.gate = make(chan struct{})
	reg, err := inf.AddEventHandler(slow)
	if err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	infTestWaitSynced(t, inf)
	if reg.HasSynced() {
		t.Fatal("handler synced before processing anything")
	}
	slow.gate <- struct{}{}
	slow.next(t)
	if reg.HasSynced() {
		t.Fatal("handler synced with one initial add left")
	}
	slow.gate <- struct{}{}
	slow.next(t)
	infTestWaitClosed(t, reg.HasSyncedChecker().Done(), "handler sync")
	if !strings.HasPrefix(reg.HasSyncedChecker().Name(), "SharedIndexInformer *v1.Pod + event handler ") {
		t.Fatalf("checker name %q", reg.HasSyncedChecker().Name())
	}
	close(slow.gate)
}

// TestSharedInformerRemoveEventHandler: a removed handler gets nothing more and its goroutine
// ends; the others go on.
func TestSharedInformerRemoveEventHandler(t *testing.T) {
	src := infTestSource("a")
	inf := infTestNewInformer(src, 0)
	removed, kept := newInfTestRecorder(), newInfTestRecorder()
	regRemoved, _ := inf.AddEventHandler(removed)
	regKept, _ := inf.AddEventHandler(kept)
	infTestRun(t, inf)
	infTestWaitSynced(t, inf, regRemoved, regKept)
	infTestNext(t, removed)
	infTestNext(t, kept)

	if err := inf.RemoveEventHandler(regRemoved); err != nil {
		t.Fatal(err)
	}
	infTestWaitClosed(t, regRemoved.(*processorListener).stopped, "removed handler's goroutine exit")
	if err := inf.RemoveEventHandler(regRemoved); err != nil {
		t.Fatalf("second removal: %v", err)
	}
	src.Add(infTestPod("ns", "b", ""))
	if got := infTestNext(t, kept); got != "add b@2" {
		t.Fatalf("kept handler got %q", got)
	}
	removed.expectNone(t)
}

// TestSharedInformerRelistTombstones: objects deleted while the informer could not watch are
// reported as DeletedFinalStateUnknown after the relist.
func TestSharedInformerRelistTombstones(t *testing.T) {
	// In a synctest bubble: the reflector waits its backoff before relisting after the broken
	// watch, which fake time skips.
	synctest.Test(t, infTestRelistTombstones)
}

func infTestRelistTombstones(t *testing.T) {
	src := infTestSource("a", "b", "c")
	inf := infTestNewInformer(src, 0)
	rec := newInfTestRecorder()
	reg, _ := inf.AddEventHandler(rec)
	infTestRun(t, inf)
	infTestWaitSynced(t, inf, reg)
	infTestNextN(t, rec, 3)

	src.DeleteDropWatch(infTestPod("ns", "b", ""))
	changed := infTestPod("ns", "c", "")
	changed.Labels = map[string]string{"x": "y"}
	src.ModifyDropWatch(changed)
	// Make resuming impossible: the watch breaks and the history it would resume from is gone.
	src.Compact(src.ResourceVersion())
	src.CloseWatches()

	// Unchanged objects come back as same-version updates, which reach every handler while
	// no resync has been computed (as in client-go).
	got := infTestNextN(t, rec, 3)
	want := []string{"delete tombstone:b", "update a@1->a@1", "update c@3->c@5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after relist %v, want %v", got, want)
	}
	if keys := infTestSorted(inf.GetStore().ListKeys()); fmt.Sprint(keys) != "[ns/a ns/c]" {
		t.Fatalf("store keys %v", keys)
	}
}

// TestSharedInformerPanickingHandler: with crashing off, a panicking handler loses the one
// notification and keeps receiving the next ones; other handlers are unaffected.
func TestSharedInformerPanickingHandler(t *testing.T) {
	// In a synctest bubble: the listener pauses a second after a handler panic, which fake
	// time skips.
	synctest.Test(t, infTestPanickingHandler)
}

func infTestPanickingHandler(t *testing.T) {
	oldCrash, oldHandlers := utilruntime.ReallyCrash, utilruntime.PanicHandlers
	utilruntime.ReallyCrash = false
	reported := make(chan interface{}, 10)
	utilruntime.PanicHandlers = []func(context.Context, interface{}){func(_ context.Context, r interface{}) { reported <- r }}
	defer func() { utilruntime.ReallyCrash, utilruntime.PanicHandlers = oldCrash, oldHandlers }()

	src := infTestSource()
	inf := infTestNewInformer(src, 0)
	var bad *v1.Pod
	panicky := newInfTestRecorder()
	other := newInfTestRecorder()
	inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		if obj.(*v1.Pod).Name == "bad" {
			panic("handler bug")
		}
		panicky.OnAdd(obj, false)
	}})
	inf.AddEventHandler(other)
	infTestRun(t, inf)
	infTestWaitSynced(t, inf)
	bad = infTestPod("ns", "bad", "")
	src.Add(bad)
	src.Add(infTestPod("ns", "good", ""))
	select {
	case r := <-reported:
		if r != "handler bug" {
			t.Fatalf("reported %v", r)
		}
	case <-time.After(infTestTimeout):
		t.Fatal("panic not reported")
	}
	if got := infTestNext(t, panicky); got != "add good@2" {
		t.Fatalf("after the panic: %q", got)
	}
	if got := infTestNextN(t, other, 2); fmt.Sprint(got) != "[add bad@1 add good@2]" {
		t.Fatalf("other handler: %v", got)
	}
}

// TestSharedInformerLifecycle checks the errors of calls made in the wrong state.
func TestSharedInformerLifecycle(t *testing.T) {
	src := infTestSource("a")
	inf := infTestNewInformer(src, 0)
	if err := inf.SetTransform(func(o interface{}) (interface{}, error) { return o, nil }); err != nil {
		t.Fatalf("SetTransform before start: %v", err)
	}
	if err := inf.SetWatchErrorHandler(func(*Reflector, error) {}); err != nil {
		t.Fatalf("SetWatchErrorHandler before start: %v", err)
	}
	if _, err := inf.AddEventHandler(nil); err == nil {
		t.Fatal("nil handler accepted")
	}
	if inf.LastSyncResourceVersion() != "" || inf.HasSynced() || inf.IsStopped() {
		t.Fatal("fresh informer reports progress")
	}
	stop := infTestRun(t, inf)
	infTestWaitSynced(t, inf)

	// A second Run returns at once.
	inf.Run(make(chan struct{}))

	started := []struct {
		name string
		call func() error
	}{
		{"SetTransform", func() error { return inf.SetTransform(nil) }},
		{"SetWatchErrorHandler", func() error { return inf.SetWatchErrorHandler(nil) }},
		{"SetWatchErrorHandlerWithContext", func() error { return inf.SetWatchErrorHandlerWithContext(nil) }},
	}
	for _, c := range started {
		if err := c.call(); err == nil || err.Error() != "informer has already started" {
			t.Fatalf("%s after start: %v", c.name, err)
		}
	}
	if err := inf.AddIndexers(Indexers{"by-name": func(o interface{}) ([]string, error) {
		return []string{o.(*v1.Pod).Name}, nil
	}}); err != nil {
		t.Fatalf("AddIndexers while running: %v", err)
	}
	if objs, err := inf.GetIndexer().ByIndex("by-name", "a"); err != nil || len(objs) != 1 {
		t.Fatalf("new index: %v, %v", objs, err)
	}
	stop()
	if !inf.IsStopped() {
		t.Fatal("IsStopped false after Run returned")
	}
	if _, err := inf.AddEventHandler(newInfTestRecorder()); err == nil || !strings.Contains(err.Error(), "stopped already") {
		t.Fatalf("AddEventHandler after stop: %v", err)
	}
	if err := inf.AddIndexers(Indexers{"x": MetaNamespaceIndexFunc}); err == nil {
		t.Fatal("AddIndexers after stop succeeded")
	}
	if err := inf.RemoveEventHandler(infTestForeignRegistration{newInfTestChecker("x")}); err == nil {
		t.Fatal("foreign handle accepted")
	}
}

func TestSharedInformerTransform(t *testing.T) {
	src := infTestSource("a")
	inf := infTestNewInformer(src, 0)
	if err := inf.SetTransform(func(o interface{}) (interface{}, error) {
		if p, ok := o.(*v1.Pod); ok {
			p.Annotations = map[string]string{"transformed": "yes"}
		}
		return o, nil
	}); err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	infTestWaitSynced(t, inf)
	obj, ok, err := inf.GetStore().GetByKey("ns/a")
	if err != nil || !ok || obj.(*v1.Pod).Annotations["transformed"] != "yes" {
		t.Fatalf("stored object %v (ok=%v, err=%v) not transformed", obj, ok, err)
	}
}

func TestSharedInformerGetController(t *testing.T) {
	cases := []struct {
		name    string
		enabled bool
		wantRV  bool
	}{
		{"InformerResourceVersion on", true, true},
		{"InformerResourceVersion off", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			features.SetForTesting(t, features.InformerResourceVersion, tc.enabled)
			src := infTestSource("a")
			inf := infTestNewInformer(src, 0)
			rec := newInfTestRecorder()
			if _, err := inf.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			infTestRun(t, inf)
			infTestWaitSynced(t, inf)
			c := inf.GetController()
			c.Run(make(chan struct{})) // does nothing
			if !c.HasSynced() || !IsDone(c.HasSyncedChecker()) {
				t.Fatal("controller not synced with its informer")
			}
			// As in client-go, the reflector records the list's resource version only after
			// handing the list to the queue, so the informer can sync before it is set. An
			// event from the watch, which the reflector reads after recording it, is the
			// signal that it is.
			infTestNext(t, rec)
			src.Add(infTestPod("ns", "b", ""))
			if got := infTestNext(t, rec); got != "add b@2" {
				t.Fatalf("got %q, want the watched add", got)
			}
			if got := c.LastSyncResourceVersion(); (got != "") != tc.wantRV {
				t.Fatalf("LastSyncResourceVersion = %q", got)
			}
		})
	}
}

func TestSharedInformerHasSyncedCheckerName(t *testing.T) {
	inf := NewSharedInformer(infTestSource(), &v1.Pod{}, 0)
	if got := inf.HasSyncedChecker().Name(); got != "SharedIndexInformer *v1.Pod" {
		t.Fatalf("Name() = %q", got)
	}
}

// TestSharedInformerWatchErrorHandler: the handler set before the start is told about list
// failures, and the informer still syncs after retrying.
func TestSharedInformerWatchErrorHandler(t *testing.T) {
	// In a synctest bubble: the reflector waits its backoff before listing again, which fake
	// time skips.
	synctest.Test(t, infTestWatchErrorHandler)
}

func infTestWatchErrorHandler(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, false)
	src := infTestSource("a")
	src.FailLists(1, fcache.InternalError())
	inf := infTestNewInformer(src, 0)
	errs := make(chan error, 10)
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, r *Reflector, err error) {
		if r == nil {
			t.Error("handler called without the reflector")
		}
		errs <- err
	}); err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	select {
	case err := <-errs:
		if err == nil {
			t.Fatal("handler called with a nil error")
		}
	case <-time.After(infTestTimeout):
		t.Fatal("watch error handler not called")
	}
	infTestWaitSynced(t, inf)
}

// TestSharedInformerInitialListIsOneRun checks that a handler behind the initial list holds it
// as one queued element that points into the list, not one notification per object, and
// that it still receives every object as an initial add, in the list's order, before the
// changes that follow.
func TestSharedInformerInitialListIsOneRun(t *testing.T) {
	const n = 3000
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p%04d", i)
	}
	src := infTestSource(names...)
	inf := infTestNewInformer(src, 0)
	blocked, free := newInfTestRecorder(), newInfTestRecorder()
	blocked.entered = make(chan struct{}, 2*n)
	blocked.gate = make(chan struct{})
	openGate := sync.OnceFunc(func() { close(blocked.gate) })
	reg, err := inf.AddEventHandler(blocked)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(free); err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	t.Cleanup(openGate) // runs before the informer's stop, which waits for the handler

	var order []string
	for range n {
		order = append(order, infTestNext(t, free))
	}
	select {
	case <-blocked.entered: // the blocked handler holds the first add
	case <-time.After(infTestTimeout):
		t.Fatal("the blocked handler never got its first add")
	}
	var listener *processorListener
	inf.processor.mu.RLock()
	for _, r := range inf.processor.listeners {
		if r.listener.handler == blocked {
			listener = r.listener
		}
	}
	inf.processor.mu.RUnlock()
	listener.mu.Lock()
	waiting, elements := listener.pending.Len(), listener.pending.plain.Len()
	listener.mu.Unlock()
	if waiting != n-1 || elements != 1 {
		t.Fatalf("blocked handler has %d adds waiting in %d elements, want %d in 1", waiting, elements, n-1)
	}

	src.Add(infTestPod("ns", "late", ""))
	if got, want := infTestNext(t, free), fmt.Sprintf("add late@%d", n+1); got != want {
		t.Fatalf("free handler: got %q, want %q", got, want)
	}
	if reg.HasSynced() {
		t.Fatal("blocked handler synced before it returned from its initial adds")
	}
	openGate()
	for i, want := range order {
		if !strings.HasSuffix(want, " initial") {
			t.Fatalf("free handler's event %d is %q, not an initial add", i, want)
		}
		if got := infTestNext(t, blocked); got != want {
			t.Fatalf("blocked handler's event %d: got %q, want %q", i, got, want)
		}
	}
	if got, want := infTestNext(t, blocked), fmt.Sprintf("add late@%d", n+1); got != want {
		t.Fatalf("blocked handler: got %q, want %q", got, want)
	}
	infTestWaitSynced(t, inf, reg)
}
