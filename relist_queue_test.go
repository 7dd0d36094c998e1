package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	fcache "github.com/kcache/cache/testing"
)

// TestReflectorListPagesDedups lists page by page into an informer's queue whose store holds
// some of the objects already: the cached objects take the place of the listed copies, the
// changed and new ones are detached from their page, and a continue token that expires
// half-way makes the Reflector start over with one full list.
func TestReflectorListPagesDedups(t *testing.T) {
	cases := []struct {
		name         string
		expireSecond bool
	}{
		{name: "pages"},
		{name: "continue token expires", expireSecond: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			source := fcache.NewFakeControllerSource()
			defer source.Shutdown()
			source.SetWatchListSupported(false)
			for _, name := range []string{"a", "b", "c"} {
				source.Add(ctrlTestCM(name, "1"))
			}
			indexer := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{})
			// The store has a and b at the source's versions, c at an older one.
			list, err := source.List(metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			for _, item := range items {
				cm := item.(*v1.ConfigMap).DeepCopy()
				if cm.Name == "c" {
					cm.ResourceVersion = "0"
				}
				if err := indexer.Add(cm); err != nil {
					t.Fatal(err)
				}
			}
			if tc.expireSecond {
				var once sync.Once
				source.SetRequestHook(func(_ context.Context, verb string, options metav1.ListOptions) error {
					var err error
					if verb == fcache.VerbList && options.Continue != "" {
						once.Do(func() { err = fcache.ExpiredError() })
					}
					return err
				})
			}
			_, fifo := newQueueFIFO(klog.Background(), &v1.ConfigMap{}, indexer, nil, InformerNameAndResource{}, nil)
			r := NewReflectorWithOptions(source, &v1.ConfigMap{}, fifo, ReflectorOptions{})
			r.WatchListPageSize = 1
			// A relist at the last version is paged ("0" lists ignore the limit).
			r.setLastSyncResourceVersion(fmt.Sprint(source.ResourceVersion()))
			if err := r.list(context.Background()); err != nil {
				t.Fatalf("list: %v", err)
			}
			var got []interface{}
			_, err = fifo.(*RealFIFO).Pop(func(obj interface{}, _ bool) error {
				got = obj.(Deltas)[0].Object.(ReplacedAllInfo).Objects
				return nil
			})
			if err != nil || len(got) != 3 {
				t.Fatalf("popped %d objects, %v; want 3", len(got), err)
			}
			for _, obj := range got {
				cached, _, _ := indexer.GetByKey("ns/" + obj.(*v1.ConfigMap).Name)
				if want := obj.(*v1.ConfigMap).Name != "c"; sameObject(obj, cached) != want {
					t.Errorf("%s: is the cached object = %v, want %v", obj.(*v1.ConfigMap).Name, !want, want)
				}
			}
			var lists int
			for _, req := range source.Requests() {
				if req.Verb == fcache.VerbList {
					lists++
				}
			}
			reqs := source.Requests()
			if want := 4; lists != want { // the test's own List, then the Reflector's three
				t.Errorf("%d List requests, want %d", lists, want)
			}
			if last := reqs[len(reqs)-1].Options; tc.expireSecond && (last.Limit != 0 || last.Continue != "") {
				t.Errorf("after the expired continue token the Reflector asked for %+v, want one full list", last)
			}
		})
	}
}

// relistTestDedup is a relistDeduper that finds cached objects in a map by name.
type relistTestDedup struct{ cached map[string]interface{} }

func (d relistTestDedup) dedupsRelists() bool { return true }
func (d relistTestDedup) unchangedInCache(obj interface{}) (interface{}, bool) {
	c, ok := d.cached[obj.(*v1.ConfigMap).Name]
	return c, ok
}
func (d relistTestDedup) replaceRelisted([]interface{}, []bool, string, bool) error { return nil }

// TestRelistItemsDetachFromPage checks that the objects a relist keeps from a page of a typed
// list do not point into the page's item slice, which would keep the whole page alive.
func TestRelistItemsDetachFromPage(t *testing.T) {
	page := &v1.ConfigMapList{Items: []v1.ConfigMap{*ctrlTestCM("a", "1"), *ctrlTestCM("b", "1")}}
	cachedB := ctrlTestCM("b", "1")
	items := &relistItems{dedup: relistTestDedup{cached: map[string]interface{}{"b": cachedB}}}
	if err := items.addPage(page); err != nil {
		t.Fatal(err)
	}
	if len(items.items) != 2 || !slices.Equal(items.cached, []bool{false, true}) || items.unchanged != 1 {
		t.Fatalf("items %v cached %v unchanged %d; want a (listed) and b (cached)", items.items, items.cached, items.unchanged)
	}
	if a := items.items[0].(*v1.ConfigMap); a == &page.Items[0] || a.Name != "a" {
		t.Errorf("a kept object points into the page")
	}
	if !sameObject(items.items[1], cachedB) {
		t.Errorf("b is not the cached object")
	}
	if listItemsAreValues(&metav1.List{}) {
		t.Errorf("a list of RawExtensions holds its objects outside the slice")
	}
}

// TestRelistItemsPresize checks that the first page of a list sizes the collection for the
// whole list when the server estimated the rest, and that later pages are appended.
func TestRelistItemsPresize(t *testing.T) {
	count := func(n int64) *int64 { return &n }
	cases := []struct {
		name      string
		remaining *int64
		wantCap   int
	}{
		{"one page", nil, 2},
		{"more pages estimated", count(3), 5},
		{"estimate beyond the bound ignored", count(maxPresizedItems + 1), 2},
		{"negative estimate ignored", count(-1), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := &v1.ConfigMapList{Items: []v1.ConfigMap{*ctrlTestCM("a", "1"), *ctrlTestCM("b", "1")}}
			first.RemainingItemCount = tc.remaining
			items := &relistItems{dedup: relistTestDedup{}}
			if err := items.addPage(first); err != nil {
				t.Fatal(err)
			}
			if got := cap(items.items); got != tc.wantCap {
				t.Errorf("cap after the first page = %d, want %d", got, tc.wantCap)
			}
			second := &v1.ConfigMapList{Items: []v1.ConfigMap{*ctrlTestCM("c", "1")}}
			if err := items.addPage(second); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range items.items {
				names = append(names, o.(*v1.ConfigMap).Name)
			}
			if !slices.Equal(names, []string{"a", "b", "c"}) || len(items.cached) != 3 {
				t.Errorf("items %q (%d cached flags), want a, b, c", names, len(items.cached))
			}
		})
	}
}

// TestWatchListBufferDedups feeds a watch-list buffer whose informer has some objects cached:
// an event with the cached resourceVersion buffers the cached object, untransformed; a later
// event for the same key with another resourceVersion replaces it (transformed); a deletion
// drops it.
func TestWatchListBufferDedups(t *testing.T) {
	cm := func(name, rv string) *v1.ConfigMap {
		c := ctrlTestCM(name, rv)
		c.ResourceVersion = rv
		return c
	}
	indexer := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{})
	cachedA, cachedB, cachedC := cm("a", "1"), cm("b", "1"), cm("c", "1")
	for _, o := range []*v1.ConfigMap{cachedA, cachedB, cachedC} {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	_, fifo := newQueueFIFO(klog.Background(), &v1.ConfigMap{}, indexer, nil, InformerNameAndResource{}, nil)
	var transformed []string
	b := newWatchListBuffer(func(obj interface{}) (interface{}, error) {
		transformed = append(transformed, obj.(*v1.ConfigMap).Name)
		return obj, nil
	})
	b.dedup = fifo.(relistDeduper)
	for _, err := range []error{
		b.Add(cm("a", "1")),    // unchanged: the cached a
		b.Add(cm("b", "1")),    // unchanged: the cached b ...
		b.Update(cm("b", "2")), // ... then modified
		b.Add(cm("c", "1")),    // unchanged, then deleted
		b.Delete(cm("c", "1")),
		b.Add(cm("d", "1")), // not cached
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	objs, cached := b.list()
	var got []string
	for i, o := range objs {
		got = append(got, fmt.Sprintf("%s@%s cached=%v", o.(*v1.ConfigMap).Name, o.(*v1.ConfigMap).ResourceVersion, cached[i]))
	}
	if want := []string{"a@1 cached=true", "b@2 cached=false", "d@1 cached=false"}; !slices.Equal(got, want) {
		t.Errorf("buffered %q, want %q", got, want)
	}
	if !sameObject(objs[0], cachedA) {
		t.Errorf("a is not the cached object")
	}
	if b.unchanged != 1 {
		t.Errorf("unchanged = %d, want 1", b.unchanged)
	}
	if want := []string{"b", "d"}; !slices.Equal(transformed, want) {
		t.Errorf("transformed %q, want %q (cached objects are not transformed)", transformed, want)
	}
}

// TestUnchangedInEmptyStore checks that the dedup of an initial list, into an empty store,
// computes no key for the objects it cannot find, and finds them once the store holds them.
func TestUnchangedInEmptyStore(t *testing.T) {
	store := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	calls := 0
	keyOf := func(obj interface{}) (string, error) {
		calls++
		return MetaNamespaceKeyFunc(obj)
	}
	pod := storeTestPod("ns", "a", "1")
	if got, ok := unchangedIn(store, keyOf, pod); ok || got != nil || calls != 0 {
		t.Fatalf("empty store: unchangedIn = %v, %v after %d key computations, want nil, false after none", got, ok, calls)
	}
	if err := store.Add(pod); err != nil {
		t.Fatal(err)
	}
	if got, ok := unchangedIn(store, keyOf, pod); !ok || got != pod || calls != 1 {
		t.Fatalf("stored: unchangedIn = %v, %v after %d key computations, want the pod, true after one", got, ok, calls)
	}
}
