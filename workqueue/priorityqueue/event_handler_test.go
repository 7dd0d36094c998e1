package priorityqueue

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcache/cache"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func TestEventHandlerPriorities(t *testing.T) {
	cases := []struct {
		name     string
		event    func(h *EventHandler)
		wantKey  string
		wantPrio int
	}{
		{"initial-list add is low", func(h *EventHandler) { h.OnAdd(pod("a", "1"), true) }, "ns/a", LowPriority},
		{"later add is normal", func(h *EventHandler) { h.OnAdd(pod("a", "1"), false) }, "ns/a", 0},
		{"update with a new resourceVersion is normal", func(h *EventHandler) { h.OnUpdate(pod("a", "1"), pod("a", "2")) }, "ns/a", 0},
		{"resync (same resourceVersion) is low", func(h *EventHandler) { h.OnUpdate(pod("a", "7"), pod("a", "7")) }, "ns/a", LowPriority},
		{"empty resourceVersions are a change", func(h *EventHandler) { h.OnUpdate(pod("a", ""), pod("a", "")) }, "ns/a", 0},
		{"update from an object without metadata is a change", func(h *EventHandler) { h.OnUpdate("junk", pod("a", "1")) }, "ns/a", 0},
		{"delete is normal", func(h *EventHandler) { h.OnDelete(pod("a", "1")) }, "ns/a", 0},
		{"tombstone is unwrapped", func(h *EventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: pod("gone", "3")})
		}, "ns/gone", 0},
		{"custom low priority", func(h *EventHandler) {
			h.LowPriority = prio(-5)
			h.OnAdd(pod("a", "1"), true)
		}, "ns/a", -5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := New[string]("")
			defer q.ShutDown()
			tc.event(NewEventHandler(q))
			key, p, _ := q.GetWithPriority()
			if key != tc.wantKey || p != tc.wantPrio || q.Len() != 0 {
				t.Fatalf("got %q@%d (Len %d), want %q@%d", key, p, q.Len(), tc.wantKey, tc.wantPrio)
			}
		})
	}
}

func TestEventHandlerBadInput(t *testing.T) {
	q := New[string]("")
	defer q.ShutDown()
	var errs []error
	h := &EventHandler{Queue: q, OnError: func(_ interface{}, err error) { errs = append(errs, err) }}
	h.OnAdd(nil, false)
	h.OnAdd("no metadata", true)
	h.OnUpdate(nil, 42)
	if q.Len() != 0 || len(errs) != 3 {
		t.Fatalf("Len %d, %d errors; want 0 and 3", q.Len(), len(errs))
	}
	h.KeyFunc = func(interface{}) (string, error) { return "", errors.New("boom") }
	h.OnDelete(pod("a", "1"))
	if len(errs) != 4 || errs[3].Error() != "boom" {
		t.Fatalf("errors %v", errs)
	}
	var nilHandler *EventHandler
	nilHandler.OnAdd(pod("a", "1"), false) // ignored, as is a handler without a queue
	(&EventHandler{}).OnDelete(pod("a", "1"))
	// Without OnError the error is logged and the object skipped.
	(&EventHandler{Queue: q}).OnAdd(nil, false)
	if q.Len() != 0 {
		t.Fatal("a bad object was enqueued")
	}
}
