package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// hashShard returns a member a of ring "r" with SelectByHash over config maps, holding its
// lease (fence open), with no clients: the tests feed its ranges directly.
func hashShard(t *testing.T, opts Options) *Shard {
	t.Helper()
	l, err := NewLabels("r")
	if err != nil {
		t.Fatal(err)
	}
	opts.Selection = SelectByHash
	if opts.Resources == nil {
		opts.Resources = []Resource{{Resource: configMapsGVR}}
	}
	s := newShard("a", l, opts, testTiming, nil, nil, nil)
	s.fence.open()
	return s
}

// handlerLog counts an informer's notifications.
type handlerLog struct {
	mu                    sync.Mutex
	adds, updates, delete int
	sameUpdates           int
	changed               chan struct{}
}

func newHandlerLog() *handlerLog { return &handlerLog{changed: make(chan struct{}, 1)} }

func (h *handlerLog) note(f func()) {
	h.mu.Lock()
	f()
	h.mu.Unlock()
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

func (h *handlerLog) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) { h.note(func() { h.adds++ }) },
		UpdateFunc: func(old, cur interface{}) {
			h.note(func() {
				h.updates++
				if old == cur {
					h.sameUpdates++
				}
			})
		},
		DeleteFunc: func(interface{}) { h.note(func() { h.delete++ }) },
	}
}

func (h *handlerLog) counts() (adds, updates, same, deletes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.adds, h.updates, h.sameUpdates, h.delete
}

// waitFor waits (in virtual time) until cond holds, checking after every notification.
func waitFor(t *testing.T, h *handlerLog, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-h.changed:
		case <-time.After(time.Minute):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func configMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm-%03d", i),
		UID: types.UID(fmt.Sprintf("uid-%03d", i))}}
}

// inRanges counts the objects of n config maps whose key hashes into ranges.
func inRanges(n int, ranges []HashRange) int {
	c := 0
	for i := range n {
		if InRanges(keyHash(KeyByName(configMap(i))), ranges) {
			c++
		}
	}
	return c
}

// TestListerWatcherFollowsRanges runs a real informer over a member's ListerWatcher with
// SelectByHash (client-side selection) and moves the member's ranges: the informer holds
// nothing before the member has ranges, every object once it has them all, and only its own
// after another member joined — the watch carries each change out without a relist or a
// restart: the objects the member keeps see no event, the others are deleted. Events outside
// the ranges are received but never reach the store or the handlers.
func TestListerWatcherFollowsRanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 200
		s := hashShard(t, Options{})
		src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }})
		for i := range n {
			src.Add(configMap(i))
		}
		lw := s.ListerWatcher(configMapsGVR, cache.NewListWatch(fcache.NewClient[*corev1.ConfigMapList](src)))
		informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		log := newHandlerLog()
		if _, err := informer.AddEventHandler(log.handler()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer func() {
			cancel()
			src.Shutdown()
			synctest.Wait()
		}()
		go informer.RunWithContext(ctx)
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			t.Fatal("no sync")
		}
		synctest.Wait()
		if got := len(informer.GetStore().ListKeys()); got != 0 {
			t.Fatalf("a member without ranges caches %d objects", got)
		}

		// Alone in epoch 1: every segment, at once (no other member to wait for).
		s.ranges.observe(Epoch{1, []string{"a"}}, func(string) (uint64, bool) { return 0, false })
		waitFor(t, log, "every object", func() bool { adds, _, _, _ := log.counts(); return adds == n })
		gate := s.Gate(configMapsGVR, informer.GetIndexer().GetByKey)
		if _, done, err := gate.Begin(ctx, "ns/cm-000"); err != nil {
			t.Fatalf("Begin on an owned object: %v", err)
		} else {
			done()
		}

		// b joins in epoch 2: a stops b's segments at once and its informer drops their
		// objects, keeping its own without adding them again.
		e2 := Epoch{2, []string{"a", "b"}}
		mine := HashRanges(e2.Members)["a"]
		want := inRanges(n, mine)
		addsBefore, _, _, _ := log.counts()
		s.ranges.observe(e2, func(m string) (uint64, bool) { return 2, m == "b" })
		waitFor(t, log, "a's objects only", func() bool { _, _, _, d := log.counts(); return d == n-want })
		synctest.Wait()
		for _, obj := range informer.GetStore().List() {
			cm := obj.(*corev1.ConfigMap)
			if !InRanges(keyHash(KeyByName(cm)), mine) {
				t.Fatalf("%s/%s outside a's ranges is cached", cm.Namespace, cm.Name)
			}
		}
		adds, updates, _, deletes := log.counts()
		if adds != addsBefore || deletes != n-want || updates != 0 {
			t.Fatalf("after the change: %d new adds, %d deletes, %d updates; want 0, %d, 0", adds-addsBefore, deletes, updates, n-want)
		}
		stats := s.SelectionStats(configMapsGVR)
		if stats.RangeChanges != 2 || stats.Relists != 0 {
			t.Fatalf("%d changes carried out in the watch, %d relists; want 2, 0", stats.RangeChanges, stats.Relists)
		}

		// A change outside the ranges is received and dropped; one inside reaches the handler.
		var outside, inside *corev1.ConfigMap
		for i := range n {
			cm := configMap(i)
			if InRanges(keyHash(KeyByName(cm)), mine) {
				inside = cm
			} else {
				outside = cm
			}
		}
		before := s.SelectionStats(configMapsGVR)
		_, updatesBefore, _, _ := log.counts()
		outside.Data = map[string]string{"k": "v"}
		src.Modify(outside)
		inside.Data = map[string]string{"k": "v"}
		src.Modify(inside)
		waitFor(t, log, "the update inside the ranges", func() bool { _, u, _, _ := log.counts(); return u > updatesBefore })
		synctest.Wait()
		after := s.SelectionStats(configMapsGVR)
		if after.WatchEvents-before.WatchEvents != 2 || after.KeptEvents-before.KeptEvents != 1 {
			t.Fatalf("events received %d, kept %d; want 2, 1", after.WatchEvents-before.WatchEvents, after.KeptEvents-before.KeptEvents)
		}
		if _, u, _, _ := log.counts(); u != updatesBefore+1 {
			t.Fatalf("%d updates reached the handler, want 1", u-updatesBefore)
		}
		if _, _, err := gate.Begin(ctx, "ns/"+outside.Name); !errors.Is(err, ErrNotAssigned) {
			t.Fatalf("Begin outside the ranges = %v, want ErrNotAssigned", err)
		}

		// b is gone in epoch 3 and a gains its segments back, but the read of the moved
		// segments fails: the watch ends with 410 Expired and the informer lists again.
		src.FailLists(1, fcache.ExpiredError())
		s.ranges.observe(Epoch{3, []string{"a"}}, func(string) (uint64, bool) { return 0, false })
		waitFor(t, log, "every object again", func() bool { return len(informer.GetStore().ListKeys()) == n })
		if st := s.SelectionStats(configMapsGVR); st.Relists != 1 || st.RangeChanges != 2 {
			t.Fatalf("%d changes carried out in the watch, %d relists; want 2, 1", st.RangeChanges, st.Relists)
		}
	})
}
