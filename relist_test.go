package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/internal/features"
	fcache "github.com/kcache/cache/testing"
)

// relistTestHandler records a relist's notifications and whether an update's old and new
// are the same object.
type relistTestHandler struct {
	mu     sync.Mutex
	events []string
}

func (h *relistTestHandler) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, s)
}

func (h *relistTestHandler) OnAdd(obj interface{}, _ bool) {
	h.record("add " + ctrlTestCMString(obj))
}

func (h *relistTestHandler) OnUpdate(oldObj, newObj interface{}) {
	s := "update " + ctrlTestCMString(oldObj) + " -> " + ctrlTestCMString(newObj)
	if sameObject(oldObj, newObj) {
		s += " (same object)"
	}
	h.record(s)
}

func (h *relistTestHandler) OnDelete(obj interface{}) { h.record("delete " + ctrlTestCMString(obj)) }

func (h *relistTestHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.events
	h.events = nil
	slices.Sort(out)
	return out
}

func (h *relistTestHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events)
}

// TestInformerRelistKeepsUnchangedObjects relists an informer in which one object changed,
// one vanished and two did not, under every queue flavour the feature gates select, through a
// LIST and through a streaming watch-list: the unchanged objects stay the very objects cached
// before (the source's fresh copies are dropped) and are not transformed again, and the
// handler gets client-go's notifications — an update for every listed object (for an
// unchanged one, old and new are the same object) and a tombstone for the vanished one.
func TestInformerRelistKeepsUnchangedObjects(t *testing.T) {
	for _, g := range ctrlTestGates {
		for _, watchList := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/watchList=%v", g.name, watchList), func(t *testing.T) {
				for f, v := range g.gates {
					features.SetForTesting(t, f, v)
				}
				synctest.Test(t, func(t *testing.T) {
					relistTestScenario(t, watchList)
				})
			})
		}
	}
}

func relistTestScenario(t *testing.T, watchList bool) {
	source := fcache.NewFakeControllerSource()
	defer source.Shutdown()
	source.SetWatchListSupported(watchList)
	// Enough unchanged objects that the store applies the relist as a difference.
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	for _, name := range names {
		source.Add(ctrlTestCM(name, "1"))
	}

	var tmu sync.Mutex
	transformed := map[string]int{}
	handler := &relistTestHandler{}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	store, ctrl := NewInformerWithOptions(InformerOptions{
		ListerWatcher: source,
		ObjectType:    &v1.ConfigMap{},
		Handler:       handler,
		Indexers:      Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		Transform: func(obj interface{}) (interface{}, error) {
			if cm, ok := obj.(*v1.ConfigMap); ok {
				tmu.Lock()
				transformed[cm.Name]++
				tmu.Unlock()
			}
			return obj, nil
		},
	})
	ctrl.(*controller).clock = clk
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
	waitFor := func(n int) {
		for i := 0; i < 120 && handler.count() < n; i++ {
			synctest.Wait()
			if handler.count() < n {
				clk.Step(time.Second)
			}
		}
		synctest.Wait()
	}
	waitFor(len(names))
	handler.take()
	before := map[string]interface{}{}
	for _, o := range store.List() {
		before[o.(*v1.ConfigMap).Name] = o
	}

	source.ModifyDropWatch(ctrlTestCM("b", "2"))
	source.DeleteDropWatch(ctrlTestCM("c", "1"))
	source.ResetWatch()
	waitFor(len(names))

	want := []string{"delete tomb c=1"}
	unchanged := map[string]int{}
	for _, name := range names {
		switch name {
		case "b":
			want = append(want, "update b=1 -> b=2")
		case "c":
		default:
			want = append(want, "update "+name+"=1 -> "+name+"=1 (same object)")
			unchanged[name] = 1
		}
	}
	if got := handler.take(); !slices.Equal(got, want) {
		t.Errorf("relist notifications\n  %q\nwant\n  %q", got, want)
	}
	for name := range unchanged {
		got, exists, err := store.GetByKey("ns/" + name)
		if err != nil || !exists || !sameObject(got, before[name]) {
			t.Errorf("after the relist %s is %p (exists %v, err %v), want the object cached before, %p", name, got, exists, err, before[name])
		}
	}
	if got, _, _ := store.GetByKey("ns/b"); got == nil || ctrlTestCMString(got) != "b=2" {
		t.Errorf("after the relist b is %v, want b=2", got)
	}
	if _, exists, _ := store.GetByKey("ns/c"); exists {
		t.Errorf("after the relist c is still stored")
	}
	if objs, err := store.(Indexer).ByIndex(NamespaceIndex, "ns"); err != nil || len(objs) != len(names)-1 {
		t.Errorf("ByIndex(ns) = %d objects, %v; want %d", len(objs), err, len(names)-1)
	}
	tmu.Lock()
	defer tmu.Unlock()
	unchanged["b"], unchanged["c"] = 2, 1
	if want := unchanged; !mapsEqual(transformed, want) {
		t.Errorf("transform calls %v, want %v (unchanged objects are not transformed again)", transformed, want)
	}
	if got, want := ctrl.LastSyncResourceVersion(), fmt.Sprint(source.ResourceVersion()); got != want {
		t.Errorf("LastSyncResourceVersion = %q, want %q", got, want)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
