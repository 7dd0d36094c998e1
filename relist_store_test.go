package cache

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

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
