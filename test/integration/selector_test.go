package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"
)

// TestLabelSelectorListWatch runs a SharedIndexInformer over a ListWatch restricted by a label
// selector (built on the dynamic client, so objects are Unstructured). Objects that start or
// stop matching because their labels change must enter and leave the cache as adds and
// deletes; objects that never match must never be seen.
func TestLabelSelectorListWatch(t *testing.T) {
	ctx := context.Background()
	cs := typedClient(t, conn)
	dc := dynamicClient(t, conn)

	cases := []struct {
		name     string
		selector string
		// match and noMatch are label sets on either side of the selector.
		match, noMatch map[string]string
	}{
		{
			name:     "equality",
			selector: "app=kcache-selected",
			match:    map[string]string{"app": "kcache-selected"},
			noMatch:  map[string]string{"app": "other"},
		},
		{
			name:     "set-based",
			selector: "tier in (gold,silver),!excluded",
			match:    map[string]string{"tier": "silver"},
			noMatch:  map[string]string{"tier": "silver", "excluded": "yes"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(ctx, t, cs)
			ri := dc.Resource(configMapsGVR).Namespace(ns)
			create := func(name string, labels map[string]string) *metav1.ObjectMeta {
				t.Helper()
				u, err := ri.Create(ctx, newUnstructured(configMapsGVR, name, labels), metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return &metav1.ObjectMeta{Name: name, UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()}
			}
			for _, name := range []string{"in-0", "in-1", "in-2"} {
				create(name, tc.match)
			}
			for _, name := range []string{"out-0", "out-1"} {
				create(name, tc.noMatch)
			}

			selected := func(o metav1.ListOptions) metav1.ListOptions {
				o.LabelSelector = tc.selector
				return o
			}
			rec := newRecorder(
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return ri.List(ctx, selected(o))
				},
				func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					return ri.Watch(ctx, selected(o))
				},
			)
			inf := cache.NewSharedIndexInformer(rec.ListWatch(), expectedType(configMapsGVR), 0, cache.Indexers{})
			log := newHandlerLog()
			reg, err := inf.AddEventHandler(log.Handler())
			if err != nil {
				t.Fatal(err)
			}
			runInformer(ctx, t, inf)
			eventually(ctx, t, matchTimeout, "the handler to sync", reg.HasSynced)
			serverList := func(ctx context.Context) (runtime.Object, error) {
				return ri.List(ctx, metav1.ListOptions{LabelSelector: tc.selector})
			}
			waitForMatch(ctx, t, inf.GetStore().List, serverList)
			if got := len(inf.GetStore().List()); got != 3 {
				t.Fatalf("cache holds %d objects after the initial sync, want the 3 matching ones", got)
			}

			// want is the last notification each changed key must get.
			want := map[string]notification{}
			relabel := func(name string, labels map[string]string, kind string) {
				t.Helper()
				u, err := ri.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				u.SetLabels(labels)
				if u, err = ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				want[ns+"/"+name] = notification{Kind: kind, UID: string(u.GetUID()), RV: u.GetResourceVersion()}
			}
			relabel("in-0", tc.noMatch, "delete")
			relabel("out-0", tc.match, "add")
			created := create("in-3", tc.match)
			want[ns+"/in-3"] = notification{Kind: "add", UID: string(created.UID), RV: created.ResourceVersion}
			create("out-2", tc.noMatch)
			if err := ri.Delete(ctx, "in-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			in1 := log.For(ns + "/in-1")
			if len(in1) == 0 {
				t.Fatalf("in-1 was never added")
			}
			want[ns+"/in-1"] = notification{Kind: "delete", UID: in1[0].UID}
			if err := touch(ctx, ri, "in-2"); err != nil {
				t.Fatal(err)
			}
			in2, err := ri.Get(ctx, "in-2", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want[ns+"/in-2"] = notification{Kind: "update", UID: string(in2.GetUID()), RV: in2.GetResourceVersion()}

			waitForMatch(ctx, t, inf.GetStore().List, serverList)
			eventually(ctx, t, matchTimeout, "the handler to see every change", func() bool {
				for key, w := range want {
					got := log.For(key)
					if len(got) == 0 || got[len(got)-1].Kind != w.Kind {
						return false
					}
				}
				return true
			})
			for key, w := range want {
				got := log.For(key)
				last := got[len(got)-1]
				if last.Kind != w.Kind || last.UID != w.UID || (w.RV != "" && last.RV != w.RV) || last.Tombstone {
					t.Errorf("%s: last notification %v, want %v (all: %s)", key, last, w, describe(got))
				}
			}
			for _, name := range []string{"out-1", "out-2"} {
				if got := log.For(ns + "/" + name); len(got) != 0 {
					t.Errorf("%s never matches the selector but the handler got %s", name, describe(got))
				}
			}
		})
	}
}
