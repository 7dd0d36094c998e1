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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
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

// TestIndexerApplyRelist applies relists to an Indexer as differences: what changes, what the
// store holds afterwards, and when it declines (and leaves the store untouched) so that the
// caller falls back to Replace.
func TestIndexerApplyRelist(t *testing.T) {
	const n = 20
	byValue := func(obj interface{}) ([]string, error) {
		cm := obj.(*v1.ConfigMap)
		if cm.Data["v"] == "bad" {
			return nil, fmt.Errorf("bad value")
		}
		return []string{cm.Data["v"]}, nil
	}
	newStore := func(opts ...StoreOption) (*cache, []interface{}) {
		c := newCache(DeletionHandlingMetaNamespaceKeyFunc, Indexers{"v": byValue}, opts)
		objs := make([]interface{}, n)
		for i := range objs {
			cm := ctrlTestCM(fmt.Sprintf("o%02d", i), "1")
			cm.ResourceVersion = "1"
			objs[i] = cm
			if err := c.Add(cm); err != nil {
				t.Fatal(err)
			}
		}
		return c, objs
	}
	fresh := func(name, v string) *v1.ConfigMap {
		cm := ctrlTestCM(name, v)
		cm.ResourceVersion = "2"
		return cm
	}
	cases := []struct {
		name string
		opts []StoreOption
		// list builds the relist from the stored objects; hook, if set, runs between the
		// lock-free steps and the write lock.
		list          func(stored []interface{}) []interface{}
		hook          func(c *cache)
		wantOK        bool
		wantErr       bool
		wantChanges   []string // "o05 1->2", "new 2"
		wantDeletions []string
		wantValues    map[string]int // objects per value of index "v"
	}{
		{
			name:       "nothing changed",
			list:       func(s []interface{}) []interface{} { return slices.Clone(s) },
			wantOK:     true,
			wantValues: map[string]int{"1": n},
		},
		{
			name: "one changed, one new, one gone",
			list: func(s []interface{}) []interface{} {
				l := slices.Clone(s[1:])
				l[4] = fresh("o05", "2")
				return append(l, fresh("new", "2"))
			},
			wantOK:        true,
			wantChanges:   []string{"o05 1->2", "new 2"},
			wantDeletions: []string{"ns/o00"},
			wantValues:    map[string]int{"1": n - 2, "2": 2},
		},
		{
			name: "too much changed",
			list: func(s []interface{}) []interface{} {
				l := make([]interface{}, len(s))
				for i, o := range s {
					l[i] = fresh(o.(*v1.ConfigMap).Name, "2")
				}
				return l
			},
			wantValues: map[string]int{"1": n},
		},
		{
			name:       "store with a transformer",
			opts:       []StoreOption{WithTransformer(func(o interface{}) (interface{}, error) { return o, nil })},
			list:       func(s []interface{}) []interface{} { return slices.Clone(s) },
			wantValues: map[string]int{"1": n},
		},
		{
			name: "index function fails",
			list: func(s []interface{}) []interface{} {
				l := slices.Clone(s)
				l[3], l[4] = fresh("o03", "bad"), fresh("o04", "2")
				return l
			},
			wantOK:      true,
			wantErr:     true,
			wantChanges: []string{"o03 1->bad", "o04 1->2"},
			wantValues:  map[string]int{"1": n - 1, "2": 1},
		},
		{
			name: "object without a key",
			list: func(s []interface{}) []interface{} {
				return append(slices.Clone(s), "not an object")
			},
			wantOK:     true,
			wantErr:    true,
			wantValues: map[string]int{"1": n},
		},
		{
			name: "store written meanwhile",
			list: func(s []interface{}) []interface{} {
				l := slices.Clone(s)
				l[0] = fresh("o00", "2")
				return l
			},
			hook: func(c *cache) {
				if err := c.Add(fresh("other", "3")); err != nil {
					t.Error(err)
				}
			},
			wantValues: map[string]int{"1": n, "3": 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, stored := newStore(tc.opts...)
			if tc.hook != nil {
				c.storage.unlockedHook = func() {
					c.storage.unlockedHook = nil
					tc.hook(c)
				}
			}
			list := tc.list(stored)
			diff, ok, err := c.applyRelist(list, "42")
			if ok != tc.wantOK || (err != nil) != tc.wantErr {
				t.Fatalf("applyRelist: ok %v, err %v; want ok %v, error %v", ok, err, tc.wantOK, tc.wantErr)
			}
			if ok && !tc.wantErr {
				var changes, deletions []string
				for _, ch := range diff.changes {
					cm := list[ch.pos].(*v1.ConfigMap)
					if ch.existed {
						changes = append(changes, cm.Name+" "+ch.old.(*v1.ConfigMap).Data["v"]+"->"+cm.Data["v"])
					} else {
						changes = append(changes, cm.Name+" "+cm.Data["v"])
					}
				}
				for _, d := range diff.deletions {
					deletions = append(deletions, d.Key)
					if d.Obj == nil {
						t.Errorf("tombstone %s has no object", d.Key)
					}
				}
				if !slices.Equal(changes, tc.wantChanges) || !slices.Equal(deletions, tc.wantDeletions) {
					t.Errorf("changes %q, deletions %q; want %q, %q", changes, deletions, tc.wantChanges, tc.wantDeletions)
				}
				if rv := c.storage.rv; rv != "42" {
					t.Errorf("resource version %q, want 42", rv)
				}
				// Unchanged objects are still the very objects stored before.
				for _, o := range list {
					if got, _, _ := c.Get(o); got == nil || (o.(*v1.ConfigMap).ResourceVersion == "1" && !sameObject(got, o)) {
						t.Errorf("%s is %p after the relist, want %p", o.(*v1.ConfigMap).Name, got, o)
					}
				}
			}
			if values := indexValueCounts(c, "v"); !mapsEqual(values, tc.wantValues) {
				t.Errorf("index v holds %v, want %v", values, tc.wantValues)
			}
			if got, want := len(c.ListKeys()), sumValues(tc.wantValues); got != want {
				t.Errorf("%d keys stored, want %d", got, want)
			}
		})
	}
	// An empty store (an informer's initial sync) is filled with the whole list, which is all
	// new, unless it is written meanwhile.
	emptyCases := []struct {
		name       string
		list       []interface{}
		hook       func(c *cache)
		wantOK     bool
		wantErr    bool
		wantKeys   []string
		wantValues map[string]int
		wantRV     string // the store's resource version afterwards
	}{
		{
			name:       "empty store",
			list:       []interface{}{fresh("a", "1"), fresh("b", "2"), fresh("a", "3")},
			wantOK:     true,
			wantKeys:   []string{"ns/a", "ns/b"},
			wantValues: map[string]int{"2": 1, "3": 1},
			wantRV:     "42",
		},
		{
			name:       "empty store, index function fails",
			list:       []interface{}{fresh("a", "1"), fresh("b", "bad")},
			wantOK:     true,
			wantErr:    true,
			wantKeys:   []string{"ns/a"},
			wantValues: map[string]int{"1": 1},
			wantRV:     "42",
		},
		{
			name:       "empty store, object without a key",
			list:       []interface{}{fresh("a", "1"), "not an object"},
			wantOK:     true,
			wantErr:    true,
			wantValues: map[string]int{},
		},
		{
			name: "empty store written meanwhile",
			list: []interface{}{fresh("a", "1")},
			hook: func(c *cache) {
				if err := c.Add(fresh("other", "3")); err != nil {
					t.Error(err)
				}
			},
			wantKeys:   []string{"ns/other"},
			wantValues: map[string]int{"3": 1},
			wantRV:     "2", // other's, from the Add
		},
	}
	for _, tc := range emptyCases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(DeletionHandlingMetaNamespaceKeyFunc, Indexers{"v": byValue}, nil)
			if tc.hook != nil {
				c.storage.unlockedHook = func() {
					c.storage.unlockedHook = nil
					tc.hook(c)
				}
			}
			diff, ok, err := c.applyRelist(tc.list, "42")
			if ok != tc.wantOK || (err != nil) != tc.wantErr {
				t.Fatalf("applyRelist: ok %v, err %v; want ok %v, error %v", ok, err, tc.wantOK, tc.wantErr)
			}
			if ok && diff != nil && (!diff.allNew || len(diff.changes) > 0 || len(diff.deletions) > 0) {
				t.Errorf("diff %+v, want every object new and nothing else", diff)
			}
			keys := c.ListKeys()
			slices.Sort(keys)
			if !slices.Equal(keys, tc.wantKeys) {
				t.Errorf("keys %q, want %q", keys, tc.wantKeys)
			}
			if values := indexValueCounts(c, "v"); !mapsEqual(values, tc.wantValues) {
				t.Errorf("index v holds %v, want %v", values, tc.wantValues)
			}
			if c.storage.rv != tc.wantRV {
				t.Errorf("resource version %q, want %q", c.storage.rv, tc.wantRV)
			}
		})
	}
}

// indexValueCounts returns, for each value of the named index of c, how many keys it holds.
func indexValueCounts(c *cache, name string) map[string]int {
	values := map[string]int{}
	for _, v := range c.ListIndexFuncValues(name) {
		keys, _ := c.IndexKeys(name, v)
		values[v] = len(keys)
	}
	return values
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
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
