package clientgo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
)

// Every handler method gets the objects kcache caches, not copies, and deletes arrive as the
// object when the watch saw them.
func TestHandlerMethods(t *testing.T) {
	src := newSource()
	src.Add(cm("a", "1"))
	informer := newInformer(src, clientgo.Options{})
	rec := newRecorder()
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	run(t, informer)
	waitSynced(t, informer.HasSyncedChecker())

	cached := func(name string) interface{} {
		obj, ok, err := informer.GetIndexer().GetByKey("ns/" + name)
		if err != nil || !ok {
			t.Fatalf("GetByKey(ns/%s) = %v, %v", name, ok, err)
		}
		return obj
	}
	e := rec.next(t)
	if e.kind != "add" || !e.initial || e.obj != cached("a") {
		t.Fatalf("first event %v, want the initial add of the cached object", e)
	}
	src.Add(cm("b", "1"))
	if e := rec.next(t); e.kind != "add" || e.initial || e.obj != cached("b") {
		t.Fatalf("got %v, want a non-initial add of the cached b", e)
	}
	oldA := cached("a")
	src.Modify(cm("a", "2"))
	e = rec.next(t)
	if e.kind != "update" || e.old != oldA || e.obj != cached("a") || e.obj.(*v1.ConfigMap).Data["k"] != "2" {
		t.Fatalf("got %v, want update from the old cached a to the new one", e)
	}
	lastB := cached("b")
	src.Delete(cm("b", "1"))
	e = rec.next(t)
	if e.kind != "delete" {
		t.Fatalf("got %v, want delete", e)
	}
	if got, ok := e.obj.(*v1.ConfigMap); !ok || got.Name != "b" || got == lastB {
		// The watch's delete event carries the server's final state, a new object.
		t.Fatalf("delete got %v, want the watch's final *ConfigMap b", describe(e.obj))
	}
	rec.none(t)
}

// A delete the watch missed reaches the handler, after the relist, as client-go's tombstone
// holding the object last cached, also through client-go's typed wrapper.
func TestTombstoneFromRelist(t *testing.T) {
	src := newSource()
	src.Add(cm("a", "1"))
	src.Add(cm("b", "1"))
	informer := newInformer(src, clientgo.Options{})
	rec := newRecorder()
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	typedDeletes := make(chan toolscache.DeletedObject[*v1.ConfigMap], 10)
	typed := toolscache.NewTypedSharedIndexInformer[*v1.ConfigMap](informer)
	if _, err := typed.AddTypedEventHandler(toolscache.TypedResourceEventHandlerFuncs[*v1.ConfigMap]{
		DeleteFunc: func(d toolscache.DeletedObject[*v1.ConfigMap]) { typedDeletes <- d },
	}); err != nil {
		t.Fatal(err)
	}
	run(t, informer)
	waitSynced(t, informer.HasSyncedChecker())
	rec.next(t)
	rec.next(t)
	last, _, _ := informer.GetIndexer().GetByKey("ns/b")

	src.DeleteDropWatch(cm("b", "1"))
	src.ResetWatch() // the watch cannot resume: the informer relists
	e := rec.next(t)
	tomb, ok := e.obj.(toolscache.DeletedFinalStateUnknown)
	if e.kind != "delete" || !ok {
		t.Fatalf("got %v, want a delete of client-go's DeletedFinalStateUnknown", e)
	}
	if tomb.Key != "ns/b" || tomb.Obj != last {
		t.Fatalf("tombstone %q %p, want ns/b holding the cached object %p", tomb.Key, tomb.Obj, last)
	}
	d := <-typedDeletes
	if d.FinalStateUnknown == nil || d.FinalStateUnknown.Key != "ns/b" || d.OptionalObj != last {
		t.Fatalf("typed delete %+v, want the tombstone of ns/b with the cached object", d)
	}
	if key := d.GetKey(); key != "ns/b" {
		t.Fatalf("typed GetKey() = %q, want ns/b", key)
	}
}

// With a default MaxPending, a stalled handler's pending update and delete coalesce into one
// delete of a tombstone, which reaches the client-go handler as client-go's type.
func TestTombstoneFromCoalescedWatchDelete(t *testing.T) {
	src := newSource()
	src.Add(cm("a", "1"))
	informer := newInformer(src, clientgo.Options{DefaultHandlerMaxPending: ptr.To(1)})
	release := make(chan struct{})
	rec := newRecorder()
	var once sync.Once
	stalling := toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, initial bool) {
			rec.OnAdd(obj, initial)
			once.Do(func() { <-release }) // stall on the first add
		},
		UpdateFunc: rec.OnUpdate,
		DeleteFunc: rec.OnDelete,
	}
	if _, err := informer.AddEventHandler(stalling); err != nil {
		t.Fatal(err)
	}
	// A handler that keeps every notification (kcache's own options, through Unwrap) tells
	// when all changes have been distributed.
	watching := newRecorder()
	if _, err := mustUnwrap(t, informer).AddEventHandlerWithOptions(watching, cache.HandlerOptions{MaxPending: ptr.To(1000)}); err != nil {
		t.Fatal(err)
	}
	run(t, informer)
	var releaseOnce sync.Once
	unstall := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unstall) // before the informer stops, also when the test fails
	if e := rec.next(t); e.kind != "add" {
		t.Fatalf("got %v, want the initial add", e)
	}
	// While the handler is stalled: three changes of a, then its delete.
	for _, data := range []string{"2", "3", "4"} {
		src.Modify(cm("a", data))
	}
	src.Delete(cm("a", "4"))
	// The other handler sees all of them: by then every one is queued for the stalled one.
	for range 5 {
		watching.next(t)
	}
	unstall()
	e := rec.next(t)
	tomb, ok := e.obj.(toolscache.DeletedFinalStateUnknown)
	if e.kind != "delete" || !ok || tomb.Key != "ns/a" {
		t.Fatalf("got %v, want one delete of client-go's tombstone for ns/a", e)
	}
	if got := tomb.Obj.(*v1.ConfigMap).Data["k"]; got != "4" {
		t.Fatalf("tombstone holds data %q, want the last known state 4", got)
	}
	rec.none(t)
}

// ContainPanics keeps the process alive and the handler called; MaxPending's conversion is
// checked by the test above, and a negative one is refused.
func TestOptions(t *testing.T) {
	t.Run("ContainPanics", func(t *testing.T) {
		src := newSource()
		src.Add(cm("a", "1"))
		informer := newInformer(src, clientgo.Options{ContainPanics: ptr.To(true)})
		rec := newRecorder()
		var once sync.Once
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) {
				once.Do(func() { panic("handler bug") })
				rec.OnAdd(obj, false)
			},
		}); err != nil {
			t.Fatal(err)
		}
		run(t, informer)
		src.Add(cm("b", "1"))
		if e := rec.next(t); describe(e.obj) != "cm ns/b" {
			t.Fatalf("got %v, want the add of b after the contained panic", e)
		}
	})
	t.Run("negative MaxPending", func(t *testing.T) {
		informer := newInformer(newSource(), clientgo.Options{DefaultHandlerMaxPending: ptr.To(-1)})
		if _, err := informer.AddEventHandler(newRecorder()); err == nil {
			t.Fatal("AddEventHandler with MaxPending -1: no error")
		}
	})
}

// Registrations: HasSynced follows the handler's initial list, removal stops delivery and is
// idempotent, client-go's ShutDownEventHandler works on them, foreign handles are refused.
func TestRegistration(t *testing.T) {
	src := newSource()
	src.Add(cm("a", "1"))
	informer := newInformer(src, clientgo.Options{})
	release := make(chan struct{})
	rec := newRecorder()
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, initial bool) {
			<-release
			rec.OnAdd(obj, initial)
		},
		DeleteFunc: rec.OnDelete,
	})
	if err != nil {
		t.Fatal(err)
	}
	if reg.HasSynced() {
		t.Fatal("registration synced before the informer ran")
	}
	run(t, informer)
	var releaseOnce sync.Once
	unstall := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unstall)
	waitSynced(t, informer.HasSyncedChecker())
	if reg.HasSynced() {
		t.Fatal("registration synced while its handler has not processed the initial add")
	}
	unstall()
	waitSynced(t, reg.HasSyncedChecker())
	if !reg.HasSynced() {
		t.Fatal("HasSynced false after HasSyncedChecker is done")
	}
	rec.next(t)

	// A handler added after the start gets the cache as initial adds.
	late := newRecorder()
	lateReg, err := informer.AddEventHandlerWithResyncPeriod(late, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := late.next(t); e.kind != "add" || !e.initial {
		t.Fatalf("late handler got %v, want an initial add", e)
	}
	waitSynced(t, lateReg.HasSyncedChecker())

	if err := toolscache.ShutDownEventHandler(informer, lateReg); err != nil {
		t.Fatalf("client-go ShutDownEventHandler: %v", err)
	}
	select {
	case <-lateReg.(interface{ ShutdownChan() <-chan struct{} }).ShutdownChan():
	default:
		t.Fatal("ShutdownChan open after ShutDownEventHandler returned")
	}
	if err := informer.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	if err := informer.RemoveEventHandler(reg); err != nil {
		t.Fatalf("second removal: %v", err)
	}
	third := newRecorder()
	if _, err := informer.AddEventHandler(third); err != nil {
		t.Fatal(err)
	}
	third.next(t) // its initial add of a
	src.Delete(cm("a", "1"))
	if e := third.next(t); e.kind != "delete" {
		t.Fatalf("third handler got %v, want the delete", e)
	}
	// The delete was distributed after the removals: the removed handlers got nothing.
	rec.none(t)
	late.none(t)

	other, err := toolscache.NewSharedIndexInformer(src, &v1.ConfigMap{}, 0, nil).AddEventHandler(newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	if err := informer.RemoveEventHandler(other); err == nil {
		t.Fatal("RemoveEventHandler of client-go's own registration: no error")
	}
	if _, err := informer.AddEventHandler(nil); err == nil {
		t.Fatal("AddEventHandler(nil): no error")
	}
}

// After the informer stopped, handlers cannot be added and IsStopped says so.
func TestAddAfterStop(t *testing.T) {
	informer := newInformer(newSource(), clientgo.Options{})
	stop := run(t, informer)
	waitSynced(t, informer.HasSyncedChecker())
	stop()
	if !informer.IsStopped() {
		t.Fatal("IsStopped false after Run returned")
	}
	if _, err := informer.AddEventHandlerWithOptions(newRecorder(), toolscache.HandlerOptions{}); err == nil {
		t.Fatal("AddEventHandlerWithOptions after stop: no error")
	}
	if err := informer.AddIndexers(toolscache.Indexers{"x": appIndex}); err == nil {
		t.Fatal("AddIndexers after stop: no error")
	}
}

// HandlerOptions.ResyncPeriod and the informer's default resync are honoured: in a synctest
// bubble, a minute passes and only the handler that asked for resyncs gets them.
func TestHandlerOptionsResync(t *testing.T) {
	synctestRun(t, func(t *testing.T) {
		src := newSource()
		src.Add(cm("a", "1"))
		informer := clientgo.NewSharedIndexInformer(src, &v1.ConfigMap{}, 10*time.Second, nil)
		var mu sync.Mutex
		updates := map[string]int{}
		counter := func(name string) toolscache.ResourceEventHandler {
			return toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ interface{}) {
				mu.Lock()
				defer mu.Unlock()
				updates[name]++
			}}
		}
		never := time.Duration(0)
		logger := newCaptureLogger()
		if _, err := informer.AddEventHandler(counter("default")); err != nil {
			t.Fatal(err)
		}
		if _, err := informer.AddEventHandlerWithOptions(counter("never"), toolscache.HandlerOptions{ResyncPeriod: &never}); err != nil {
			t.Fatal(err)
		}
		tooSmall := time.Millisecond
		if _, err := informer.AddEventHandlerWithOptions(counter("small"), toolscache.HandlerOptions{ResyncPeriod: &tooSmall, Logger: &logger.Logger}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); informer.RunWithContext(ctx) }()
		time.Sleep(35 * time.Second) // fake time inside the bubble
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if updates["never"] != 0 || updates["default"] < 3 || updates["small"] < updates["default"] {
			t.Fatalf("resync updates %v: want none for ResyncPeriod 0, >= 3 for the 10s default, at least as many for 1s", updates)
		}
		if !logger.has("resync period is too small") {
			t.Fatalf("HandlerOptions.Logger got %q, want the too-small resync warning", logger.lines())
		}
	})
}
