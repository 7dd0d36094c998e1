package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"
)

// TestTransformStripsManagedFieldsOnce runs a SharedIndexInformer whose transform drops
// managedFields, which the real server puts on every object, and checks that neither the cache
// nor a handler ever holds them, and that every version of every object went through the
// transform exactly once, whichever way the initial state arrived. (client-go transforms the
// objects of a streaming watch-list twice; kcache does not.)
func TestTransformStripsManagedFieldsOnce(t *testing.T) {
	ctx := context.Background()
	cs := typedClient(t, conn)

	cases := []struct {
		name        string
		noWatchList bool
	}{
		{name: "streaming watch-list"},
		{name: "LIST", noWatchList: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(ctx, t, cs)
			createConfigMaps(ctx, t, cs, ns, 100, 8)
			cms := cs.ConfigMaps(ns)
			seeded, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, cm := range seeded.Items {
				if len(cm.ManagedFields) == 0 {
					t.Fatalf("the server sent %s without managedFields; the test would prove nothing", cm.Name)
				}
			}

			rec := newRecorder(
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return cms.List(ctx, o) },
				func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return cms.Watch(ctx, o) },
			)
			var lw cache.ListerWatcher = rec.ListWatch()
			if tc.noWatchList {
				lw = cache.ToListWatcherWithWatchListSemantics(rec.ListWatch(), noWatchListSemantics{})
			}
			inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
			var (
				mu       sync.Mutex
				calls    = map[version]int{}
				problems []string
			)
			note := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				problems = append(problems, fmt.Sprintf(format, args...))
			}
			err = inf.SetTransform(func(obj any) (any, error) {
				m, err := meta.Accessor(obj)
				if err != nil {
					note("transform got %T without metadata", obj)
					return obj, nil
				}
				mu.Lock()
				calls[version{UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion()}]++
				mu.Unlock()
				m.SetManagedFields(nil)
				return obj, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkStripped := func(obj any) {
				if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = tomb.Obj
				}
				if cm, ok := obj.(*corev1.ConfigMap); !ok || len(cm.ManagedFields) != 0 {
					note("handler got %T with managedFields", obj)
				}
			}
			_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    checkStripped,
				UpdateFunc: func(_, obj any) { checkStripped(obj) },
				DeleteFunc: checkStripped,
			})
			if err != nil {
				t.Fatal(err)
			}
			runInformer(ctx, t, inf)

			for i := range 10 {
				cm := seeded.Items[i].DeepCopy()
				cm.Data["value"] = "updated"
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for i := 10; i < 15; i++ {
				if err := cms.Delete(ctx, seeded.Items[i].Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			waitForMatch(ctx, t, inf.GetStore().List, func(ctx context.Context) (runtime.Object, error) {
				return cms.List(ctx, metav1.ListOptions{})
			})
			// The 100 initial versions, 10 updated ones and 5 deletions.
			const versions = 100 + 10 + 5
			eventually(ctx, t, matchTimeout, "every version to be transformed", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(calls) >= versions
			})

			for _, obj := range inf.GetStore().List() {
				if cm := obj.(*corev1.ConfigMap); len(cm.ManagedFields) != 0 {
					t.Errorf("cached %s still has managedFields", cm.Name)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range problems {
				t.Error(p)
			}
			if len(calls) != versions {
				t.Errorf("transform saw %d object versions, want %d", len(calls), versions)
			}
			for v, n := range calls {
				if n != 1 {
					t.Errorf("object %s at resource version %s was transformed %d times, want once", v.UID, v.ResourceVersion, n)
				}
			}
		})
	}
}
