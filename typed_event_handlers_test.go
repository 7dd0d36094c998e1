package cache_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	cache "github.com/kcache/cache"
)

// TestTypedResourceEventHandlerFuncs: each adapter calls the function that is set, with the
// arguments it got, and skips the nil ones.
func TestTypedResourceEventHandlerFuncs(t *testing.T) {
	a, b := typedTestPod("ns", "a"), typedTestPod("ns", "b")
	var calls []string
	record := func(format string, args ...interface{}) { calls = append(calls, fmt.Sprintf(format, args...)) }
	funcs := cache.TypedResourceEventHandlerFuncs[*v1.Pod]{
		AddFunc:    func(p *v1.Pod) { record("add %s", p.Name) },
		UpdateFunc: func(o, n *v1.Pod) { record("update %s->%s", o.Name, n.Name) },
		DeleteFunc: func(d cache.DeletedObject[*v1.Pod]) { record("delete %s", d.GetKey()) },
	}
	detailed := cache.TypedResourceEventHandlerDetailedFuncs[*v1.Pod]{
		AddFunc:    func(p *v1.Pod, initial bool) { record("add %s initial=%v", p.Name, initial) },
		UpdateFunc: funcs.UpdateFunc,
		DeleteFunc: funcs.DeleteFunc,
	}
	cases := []struct {
		name    string
		handler cache.TypedResourceEventHandler[*v1.Pod]
		want    string
	}{
		{"funcs", funcs, "[add a update a->b delete ns/b]"},
		{"pointer to funcs", &funcs, "[add a update a->b delete ns/b]"},
		{"detailed funcs", detailed, "[add a initial=true update a->b delete ns/b]"},
		{"no funcs", cache.TypedResourceEventHandlerFuncs[*v1.Pod]{}, "[]"},
		{"no detailed funcs", cache.TypedResourceEventHandlerDetailedFuncs[*v1.Pod]{}, "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			tc.handler.OnAdd(a, true)
			tc.handler.OnUpdate(a, b)
			tc.handler.OnDelete(cache.DeletedObject[*v1.Pod]{OptionalObj: b})
			if got := fmt.Sprint(calls); got != tc.want {
				t.Fatalf("calls %s, want %s", got, tc.want)
			}
		})
	}
}

// TestTypedFilteringResourceEventHandler covers every transition: adds and deletes pass or
// not, an update that stays in, enters, leaves or stays out of the filter, and a tombstone
// without an object (the filter sees a nil pointer).
func TestTypedFilteringResourceEventHandler(t *testing.T) {
	in, out := typedTestPod("ns", "in"), typedTestPod("ns", "out")
	in2 := typedTestPod("ns", "in")
	in2.Labels = map[string]string{"v": "2"}
	tomb := &cache.DeletedFinalStateUnknown{Key: "ns/gone"}
	cases := []struct {
		name   string
		call   func(h cache.TypedResourceEventHandler[*v1.Pod])
		filter func(*v1.Pod) bool
		want   string // the event the inner handler got, "" for none
	}{
		{"add passing", func(h cache.TypedResourceEventHandler[*v1.Pod]) { h.OnAdd(in, true) }, nil, "add ns/in initial"},
		{"add failing", func(h cache.TypedResourceEventHandler[*v1.Pod]) { h.OnAdd(out, true) }, nil, ""},
		{"update staying in", func(h cache.TypedResourceEventHandler[*v1.Pod]) { h.OnUpdate(in, in2) }, nil, "update ns/in"},
		{"update entering", func(h cache.TypedResourceEventHandler[*v1.Pod]) { h.OnUpdate(out, in) }, nil, "add ns/in"},
		{"update leaving", func(h cache.TypedResourceEventHandler[*v1.Pod]) { h.OnUpdate(in, out) }, nil, "delete ns/in"},
		{"update staying out", func(h cache.TypedResourceEventHandler[*v1.Pod]) { h.OnUpdate(out, out) }, nil, ""},
		{"delete passing", func(h cache.TypedResourceEventHandler[*v1.Pod]) {
			h.OnDelete(cache.DeletedObject[*v1.Pod]{OptionalObj: in})
		}, nil, "delete ns/in"},
		{"delete failing", func(h cache.TypedResourceEventHandler[*v1.Pod]) {
			h.OnDelete(cache.DeletedObject[*v1.Pod]{OptionalObj: out})
		}, nil, ""},
		{"tombstone without object, filter keeps nil", func(h cache.TypedResourceEventHandler[*v1.Pod]) {
			h.OnDelete(cache.DeletedObject[*v1.Pod]{FinalStateUnknown: tomb})
		}, func(p *v1.Pod) bool { return p == nil }, "delete ns/gone (tombstone)"},
		{"tombstone without object, filter drops nil", func(h cache.TypedResourceEventHandler[*v1.Pod]) {
			h.OnDelete(cache.DeletedObject[*v1.Pod]{FinalStateUnknown: tomb})
		}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newTypedRecorder[*v1.Pod]()
			filter := tc.filter
			if filter == nil {
				filter = func(p *v1.Pod) bool { return p != nil && p.Name == "in" }
			}
			tc.call(cache.TypedFilteringResourceEventHandler[*v1.Pod]{FilterFunc: filter, Handler: rec})
			got := ""
			if len(rec.events) > 0 {
				got = (<-rec.events).String()
			}
			if got != tc.want || len(rec.events) != 0 {
				t.Fatalf("inner handler got %q (and %d more), want %q", got, len(rec.events), tc.want)
			}
		})
	}
}

// TestDeletedObject checks the four accessors on live objects, tombstones with and without an
// object, odd keys and the zero value, and that klog.KObj renders a DeletedObject like the
// object itself.
func TestDeletedObject(t *testing.T) {
	pod := &metav1.ObjectMeta{Namespace: "ns", Name: "a"}
	node := &metav1.ObjectMeta{Name: "n1"}
	cases := []struct {
		name                    string
		d                       cache.DeletedObject[*metav1.ObjectMeta]
		key, namespace, objName string
	}{
		{"namespaced object", cache.DeletedObject[*metav1.ObjectMeta]{OptionalObj: pod}, "ns/a", "ns", "a"},
		{"cluster-scoped object", cache.DeletedObject[*metav1.ObjectMeta]{OptionalObj: node}, "n1", "", "n1"},
		{"tombstone with object", cache.DeletedObject[*metav1.ObjectMeta]{OptionalObj: pod,
			FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: pod}}, "ns/a", "ns", "a"},
		{"tombstone without object", cache.DeletedObject[*metav1.ObjectMeta]{
			FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "ns/b"}}, "ns/b", "ns", "b"},
		{"cluster-scoped tombstone", cache.DeletedObject[*metav1.ObjectMeta]{
			FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "n2"}}, "n2", "", "n2"},
		{"tombstone key with two slashes", cache.DeletedObject[*metav1.ObjectMeta]{
			FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "ns/a/b"}}, "ns/a/b", "ns", "a/b"},
		{"the tombstone's key wins", cache.DeletedObject[*metav1.ObjectMeta]{OptionalObj: pod,
			FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "other/x"}}, "other/x", "other", "x"},
		{"zero value", cache.DeletedObject[*metav1.ObjectMeta]{}, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.GetKey(); got != tc.key {
				t.Errorf("GetKey = %q, want %q", got, tc.key)
			}
			if got := tc.d.GetNamespace(); got != tc.namespace {
				t.Errorf("GetNamespace = %q, want %q", got, tc.namespace)
			}
			if got := tc.d.GetName(); got != tc.objName {
				t.Errorf("GetName = %q, want %q", got, tc.objName)
			}
			if got, want := tc.d.GetObjectName(), (cache.ObjectName{Namespace: tc.namespace, Name: tc.objName}); got != want {
				t.Errorf("GetObjectName = %v, want %v", got, want)
			}
		})
	}
	// A nil pointer of a concrete T is "no object": nothing is called on it.
	nilPod := cache.DeletedObject[*v1.Pod]{}
	if nilPod.GetKey() != "" || nilPod.GetObjectName() != (cache.ObjectName{}) {
		t.Error("zero DeletedObject[*v1.Pod] has a key")
	}
	for _, d := range []cache.DeletedObject[*metav1.ObjectMeta]{
		{OptionalObj: pod},
		{FinalStateUnknown: &cache.DeletedFinalStateUnknown{Key: "ns/a"}},
	} {
		if got, want := klog.KObj(d).String(), klog.KObj(pod).String(); got != want {
			t.Errorf("klog.KObj renders %q, the object renders %q", got, want)
		}
	}
}
