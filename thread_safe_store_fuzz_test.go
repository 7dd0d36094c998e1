package cache

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// storeFuzzModel is the reference a ThreadSafeStore is checked against: a plain map of
// objects and the index functions in use. Indices are recomputed from scratch when checking.
type storeFuzzModel struct {
	items    map[string]interface{}
	indexers Indexers
}

// valuesOf computes obj's values for every index, or reports that one fails.
func (m *storeFuzzModel) valuesOf(obj interface{}, indexers Indexers) (map[string][]string, bool) {
	out := map[string][]string{}
	if obj == nil {
		return out, true
	}
	for name, f := range indexers {
		v, err := f(obj)
		if err != nil {
			return nil, false
		}
		out[name] = v
	}
	return out, true
}

// index returns, for the named index, each value's set of keys.
func (m *storeFuzzModel) index(name string) map[string][]string {
	out := map[string][]string{}
	for key, obj := range m.items {
		vals, _ := m.valuesOf(obj, Indexers{name: m.indexers[name]})
		for _, v := range vals[name] {
			if !slices.Contains(out[v], key) {
				out[v] = append(out[v], key)
			}
		}
	}
	for v := range out {
		slices.Sort(out[v])
	}
	return out
}

// storeFuzzExtraIndexers are the indexers AddIndexers may add, one at a time.
var storeFuzzExtraIndexers = []Indexers{
	{"value": storeTestFailingIndexFunc},
	{"name": func(obj interface{}) ([]string, error) {
		o, ok := obj.(*storeTestObj)
		if !ok {
			return nil, fmt.Errorf("not a storeTestObj")
		}
		return []string{o.Name}, nil
	}},
	{NamespaceIndex: MetaNamespaceIndexFunc}, // always a clash
}

// storeFuzzReader hands out the fuzz input a byte at a time, then zeros.
type storeFuzzReader struct{ data []byte }

func (r *storeFuzzReader) next(n int) int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return int(b) % n
}

// object returns a random object: a storeTestObj with a namespace, up to two labels and a
// Value that the "value" index rejects one time in four; sometimes nil, sometimes an object
// without metadata (which the namespace index rejects).
func (r *storeFuzzReader) object(key string) interface{} {
	switch r.next(10) {
	case 0:
		return nil
	case 1:
		return storeTestNoMeta{key}
	}
	labels := []string{}
	for i := range r.next(3) {
		labels = append(labels, fmt.Sprintf("l%d=v%d", i, r.next(3)))
	}
	o := storeTestPod([]string{"a", "b", "c"}[r.next(3)], key, fmt.Sprint(r.next(100)), labels...)
	o.Value = []string{"x", "y", "z", "bad"}[r.next(4)]
	return o
}

func FuzzThreadSafeStore(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{4, 0, 0, 2, 3, 1, 1, 5, 4, 1, 3, 2, 3, 9, 9, 9, 4, 2})
	f.Add([]byte{0, 0, 2, 1, 2, 0, 0, 3, 1, 0, 1, 4, 0, 0, 0, 9, 1, 1, 2, 4, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		storeTestCaptureErrors(t)
		start := Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "label": storeTestLabelIndexFunc}
		s := NewThreadSafeStore(start, Indices{}).(*threadSafeMap)
		m := &storeFuzzModel{items: map[string]interface{}{}, indexers: maps.Clone(start)}
		r := &storeFuzzReader{data: data}
		keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
		for step := 0; len(r.data) > 0 && step < 200; step++ {
			var desc string
			switch op := r.next(6); op {
			case 0, 1: // Add or Update
				key := keys[r.next(len(keys))]
				obj := r.object(key)
				desc = fmt.Sprintf("update %s %+v", key, obj)
				if op == 0 {
					s.Add(key, obj)
				} else {
					s.Update(key, obj)
				}
				if _, ok := m.valuesOf(obj, m.indexers); ok {
					m.items[key] = obj
				}
			case 2: // Delete
				key := keys[r.next(len(keys))]
				desc = "delete " + key
				s.Delete(key)
				delete(m.items, key)
			case 3: // Replace
				items := map[string]interface{}{}
				for range r.next(5) {
					key := keys[r.next(len(keys))]
					items[key] = r.object(key)
				}
				desc = fmt.Sprintf("replace %v", items)
				s.Replace(maps.Clone(items), "1")
				next := map[string]interface{}{}
				for key, obj := range items {
					if _, ok := m.valuesOf(obj, m.indexers); ok {
						next[key] = obj
					} else if old, had := m.items[key]; had {
						next[key] = old
					}
				}
				m.items = next
			case 4: // AddIndexers
				add := storeFuzzExtraIndexers[r.next(len(storeFuzzExtraIndexers))]
				desc = fmt.Sprintf("add indexers %v", slices.Collect(maps.Keys(add)))
				err := s.AddIndexers(add)
				wantOK := true
				for name := range add {
					if _, clash := m.indexers[name]; clash {
						wantOK = false
					}
				}
				for _, obj := range m.items {
					if _, ok := m.valuesOf(obj, add); !ok {
						wantOK = false
					}
				}
				if (err == nil) != wantOK {
					t.Fatalf("step %d %s: error %v, want success %v", step, desc, err, wantOK)
				}
				if wantOK {
					maps.Copy(m.indexers, add)
				}
			case 5: // Transaction of two writes
				var txns []ThreadSafeStoreTransaction
				for range 2 {
					key := keys[r.next(len(keys))]
					if r.next(3) == 0 {
						txns = append(txns, ThreadSafeStoreTransaction{Transaction{Type: TransactionTypeDelete}, key})
						delete(m.items, key)
						continue
					}
					obj := r.object(key)
					txns = append(txns, ThreadSafeStoreTransaction{Transaction{Type: TransactionTypeUpdate, Object: obj}, key})
					if _, ok := m.valuesOf(obj, m.indexers); ok {
						m.items[key] = obj
					}
				}
				desc = fmt.Sprintf("transaction %+v", txns)
				s.Transaction(txns...)
			}
			storeFuzzCompare(t, fmt.Sprintf("step %d %s", step, desc), s, m)
		}
	})
}

// storeFuzzCompare checks that s holds exactly m's objects and that every index answers as the
// model's recomputed index does.
func storeFuzzCompare(t *testing.T, where string, s *threadSafeMap, m *storeFuzzModel) {
	t.Helper()
	gotKeys := s.ListKeys()
	slices.Sort(gotKeys)
	if wantKeys := slices.Sorted(maps.Keys(m.items)); !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("%s: keys %q, want %q", where, gotKeys, wantKeys)
	}
	for key, want := range m.items {
		if got, ok := s.Get(key); !ok || fmt.Sprintf("%p%v", got, got) != fmt.Sprintf("%p%v", want, want) {
			t.Fatalf("%s: %q holds %+v, want %+v", where, key, got, want)
		}
	}
	if n := len(s.List()); n != len(m.items) {
		t.Fatalf("%s: List has %d objects, want %d", where, n, len(m.items))
	}
	if got, want := slices.Sorted(maps.Keys(s.GetIndexers())), slices.Sorted(maps.Keys(m.indexers)); !slices.Equal(got, want) {
		t.Fatalf("%s: indexers %q, want %q", where, got, want)
	}
	for name := range m.indexers {
		want := m.index(name)
		values := s.ListIndexFuncValues(name)
		slices.Sort(values)
		if wantValues := slices.Sorted(maps.Keys(want)); !slices.Equal(values, wantValues) {
			t.Fatalf("%s: index %q has values %q, want %q", where, name, values, wantValues)
		}
		for v, wantKeys := range want {
			keys, err := s.IndexKeys(name, v)
			if err != nil || !slices.Equal(keys, wantKeys) {
				t.Fatalf("%s: IndexKeys(%q, %q) = %q, %v; want %q", where, name, v, keys, err, wantKeys)
			}
			objs, _ := s.ByIndex(name, v)
			if len(objs) != len(wantKeys) {
				t.Fatalf("%s: ByIndex(%q, %q) has %d objects, want %d", where, name, v, len(objs), len(wantKeys))
			}
		}
	}
	storeTestCheckState(t, s)
}
