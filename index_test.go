package cache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMetaNamespaceIndexFunc(t *testing.T) {
	cases := []struct {
		name    string
		obj     interface{}
		want    []string
		wantErr bool
	}{
		{"namespaced", storeTestPod("ns", "a", "1"), []string{"ns"}, false},
		{"cluster scoped", storeTestPod("", "a", "1"), []string{""}, false},
		{"no metadata", storeTestNoMeta{"a"}, []string{""}, true},
		{"nil", nil, []string{""}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetaNamespaceIndexFunc(tc.obj)
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Errorf("= %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "object has no meta") {
				t.Errorf("error %q does not say why", err)
			}
		})
	}
}

func TestIndexFuncToKeyFuncAdapter(t *testing.T) {
	cases := []struct {
		name    string
		values  []string
		err     error
		want    string
		wantErr string
	}{
		{"one value", []string{"k"}, nil, "k", ""},
		{"no value", nil, nil, "", "unexpected empty indexKeys"},
		{"two values", []string{"a", "b"}, nil, "", "too many keys: [a b]"},
		{"index error", nil, errStoreTestIndex, "", errStoreTestIndex.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keyFunc := IndexFuncToKeyFuncAdapter(func(interface{}) ([]string, error) { return tc.values, tc.err })
			got, err := keyFunc(nil)
			if got != tc.want || fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tc.wantErr}[tc.wantErr == ""] {
				t.Errorf("= %q, %v; want %q, %q", got, err, tc.want, tc.wantErr)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v does not wrap the index error", err)
			}
		})
	}
}

// storeTestPopulated returns an indexer over namespace and label values holding:
// ns1/a {app=web, tier=front}, ns1/b {app=db}, ns2/c {app=web}, d (cluster-scoped, no labels).
func storeTestPopulated(t *testing.T) Indexer {
	t.Helper()
	return storeTestPopulatedWith(t, storeTestIndexers())
}

// storeTestPopulatedWith is storeTestPopulated with other indexers.
func storeTestPopulatedWith(t *testing.T, indexers Indexers) Indexer {
	t.Helper()
	s := NewIndexer(MetaNamespaceKeyFunc, indexers)
	for _, o := range []*storeTestObj{
		storeTestPod("ns1", "a", "1", "app=web", "tier=front"),
		storeTestPod("ns1", "b", "2", "app=db"),
		storeTestPod("ns2", "c", "3", "app=web"),
		storeTestPod("", "d", "4"),
	} {
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestIndexerQueries(t *testing.T) {
	unknown := "Index with name nope does not exist"
	cases := []struct {
		name    string
		query   func(s Indexer) (interface{}, error)
		want    interface{}
		wantErr string
	}{
		{"ByIndex namespace", func(s Indexer) (interface{}, error) {
			objs, err := s.ByIndex(NamespaceIndex, "ns1")
			return storeTestKeysOf(t, objs), err
		}, []string{"ns1/a", "ns1/b"}, ""},
		{"ByIndex multi-valued index", func(s Indexer) (interface{}, error) {
			objs, err := s.ByIndex("label", "web")
			return storeTestKeysOf(t, objs), err
		}, []string{"ns1/a", "ns2/c"}, ""},
		{"ByIndex missing value", func(s Indexer) (interface{}, error) {
			objs, err := s.ByIndex(NamespaceIndex, "none")
			return len(objs), err
		}, 0, ""},
		{"ByIndex unknown index", func(s Indexer) (interface{}, error) {
			return s.ByIndex("nope", "x")
		}, nil, unknown},
		{"Index with one value", func(s Indexer) (interface{}, error) {
			objs, err := s.Index(NamespaceIndex, storeTestPod("ns2", "zzz", "1"))
			return storeTestKeysOf(t, objs), err
		}, []string{"ns2/c"}, ""},
		{"Index with several values dedups", func(s Indexer) (interface{}, error) {
			objs, err := s.Index("label", storeTestPod("x", "y", "1", "k1=web", "k2=front", "k3=db"))
			return storeTestKeysOf(t, objs), err
		}, []string{"ns1/a", "ns1/b", "ns2/c"}, ""},
		{"Index with no value", func(s Indexer) (interface{}, error) {
			objs, err := s.Index("label", storeTestPod("x", "y", "1"))
			return len(objs), err
		}, 0, ""},
		{"Index unknown index", func(s Indexer) (interface{}, error) {
			return s.Index("nope", storeTestPod("x", "y", "1"))
		}, nil, unknown},
		{"Index with a failing index function", func(s Indexer) (interface{}, error) {
			return s.Index(NamespaceIndex, storeTestNoMeta{})
		}, nil, "object has no meta: object does not implement the Object interfaces"},
		{"IndexKeys is sorted", func(s Indexer) (interface{}, error) {
			return s.IndexKeys("label", "web")
		}, []string{"ns1/a", "ns2/c"}, ""},
		{"IndexKeys missing value", func(s Indexer) (interface{}, error) {
			return s.IndexKeys("label", "none")
		}, []string{}, ""},
		{"IndexKeys unknown index", func(s Indexer) (interface{}, error) {
			return s.IndexKeys("nope", "x")
		}, nil, unknown},
		{"ListIndexFuncValues", func(s Indexer) (interface{}, error) {
			v := s.ListIndexFuncValues(NamespaceIndex)
			slices.Sort(v)
			return v, nil
		}, []string{"", "ns1", "ns2"}, ""},
		{"ListIndexFuncValues unknown index", func(s Indexer) (interface{}, error) {
			return s.ListIndexFuncValues("nope"), nil
		}, []string{}, ""},
		{"GetIndexers", func(s Indexer) (interface{}, error) {
			return slices.Sorted(func(yield func(string) bool) {
				for k := range s.GetIndexers() {
					if !yield(k) {
						return
					}
				}
			}), nil
		}, []string{"label", NamespaceIndex}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.query(storeTestPopulated(t))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
				t.Errorf("= %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestIndexMaintenance(t *testing.T) {
	cases := []struct {
		name string
		ops  func(s Indexer)
		// want maps index values of "label" to their sorted keys; values not listed must be
		// gone from ListIndexFuncValues.
		want map[string][]string
	}{
		{"update moves the entry", func(s Indexer) {
			_ = s.Update(storeTestPod("ns1", "b", "5", "app=cache"))
		}, map[string][]string{"web": {"ns1/a", "ns2/c"}, "front": {"ns1/a"}, "cache": {"ns1/b"}}},
		{"an emptied value disappears", func(s Indexer) {
			_ = s.Delete(storeTestPod("ns1", "b", "5"))
		}, map[string][]string{"web": {"ns1/a", "ns2/c"}, "front": {"ns1/a"}}},
		{"update to no value", func(s Indexer) {
			_ = s.Update(storeTestPod("ns1", "a", "5"))
		}, map[string][]string{"web": {"ns2/c"}, "db": {"ns1/b"}}},
		{"update with reordered values", func(s Indexer) {
			_ = s.Update(storeTestPod("ns1", "a", "5", "a=front", "b=web"))
		}, map[string][]string{"web": {"ns1/a", "ns2/c"}, "front": {"ns1/a"}, "db": {"ns1/b"}}},
		{"duplicate values in one object", func(s Indexer) {
			_ = s.Update(storeTestPod("ns1", "b", "5", "x=web", "y=web"))
			_ = s.Update(storeTestPod("ns1", "b", "6", "x=web"))
		}, map[string][]string{"web": {"ns1/a", "ns1/b", "ns2/c"}, "front": {"ns1/a"}}},
		{"replace rebuilds", func(s Indexer) {
			_ = s.Replace([]interface{}{storeTestPod("ns3", "e", "9", "app=db")}, "9")
		}, map[string][]string{"db": {"ns3/e"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := storeTestPopulated(t)
			tc.ops(s)
			values := s.ListIndexFuncValues("label")
			slices.Sort(values)
			var wantValues []string
			for v, keys := range tc.want {
				wantValues = append(wantValues, v)
				if got, _ := s.IndexKeys("label", v); !slices.Equal(got, keys) {
					t.Errorf("IndexKeys(label, %q) = %q, want %q", v, got, keys)
				}
			}
			slices.Sort(wantValues)
			if !slices.Equal(values, wantValues) {
				t.Errorf("ListIndexFuncValues = %q, want %q", values, wantValues)
			}
			storeTestCheckState(t, s.(*cache).storage)
		})
	}
}

func TestIndexerIndexFuncErrors(t *testing.T) {
	good := func(name, rv, value string) *storeTestObj {
		return &storeTestObj{ObjectMeta: storeTestPod("ns", name, rv).ObjectMeta, Value: value}
	}
	cases := []struct {
		name string
		call func(s Indexer) error
		// want maps keys to the Value they must hold afterwards.
		want map[string]string
	}{
		{"add of a new key is rejected", func(s Indexer) error { return s.Add(good("b", "2", "bad")) },
			map[string]string{"ns/a": "ok"}},
		{"update keeps the old object", func(s Indexer) error { return s.Update(good("a", "2", "bad")) },
			map[string]string{"ns/a": "ok"}},
		{"replace keeps the old object and applies the rest", func(s Indexer) error {
			return s.Replace([]interface{}{good("a", "3", "bad"), good("b", "3", "fine"), good("c", "3", "bad")}, "3")
		}, map[string]string{"ns/a": "ok", "ns/b": "fine"}},
		{"transaction skips the failing one", func(s Indexer) error {
			txnErr := s.(TransactionStore).Transaction(
				Transaction{Type: TransactionTypeUpdate, Object: good("a", "4", "bad")},
				Transaction{Type: TransactionTypeAdd, Object: good("b", "4", "fine")})
			if txnErr == nil {
				return nil
			}
			if !slices.Equal(txnErr.SuccessfulIndices, []int{1}) || txnErr.TotalTransactions != 2 {
				return fmt.Errorf("unexpected TransactionError %+v", txnErr)
			}
			return txnErr.Errors[0]
		}, map[string]string{"ns/a": "ok", "ns/b": "fine"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewIndexer(MetaNamespaceKeyFunc, Indexers{"value": storeTestFailingIndexFunc, NamespaceIndex: MetaNamespaceIndexFunc})
			if err := s.Add(good("a", "1", "ok")); err != nil {
				t.Fatal(err)
			}
			err := tc.call(s)
			if !errors.Is(err, errStoreTestIndex) {
				t.Fatalf("error = %v, want one wrapping the index error", err)
			}
			if !strings.Contains(err.Error(), `on index "value"`) {
				t.Errorf("error %q does not name the index", err)
			}
			if len(s.ListKeys()) != len(tc.want) {
				t.Errorf("keys = %q, want those of %v", s.ListKeys(), tc.want)
			}
			for key, want := range tc.want {
				item, ok, _ := s.GetByKey(key)
				if !ok || item.(*storeTestObj).Value != want {
					t.Errorf("%q = %+v (present %v), want Value %q", key, item, ok, want)
				}
			}
			storeTestCheckState(t, s.(*cache).storage)
		})
	}
}

func TestIndexerAddIndexers(t *testing.T) {
	cases := []struct {
		name    string
		add     Indexers
		wantErr string
		// check runs when AddIndexers succeeded.
		check func(t *testing.T, s Indexer)
	}{
		{"indexes what is stored", Indexers{"value": storeTestFailingIndexFunc}, "", func(t *testing.T, s Indexer) {
			if keys, err := s.IndexKeys("value", ""); err != nil || !slices.Equal(keys, []string{"d", "ns1/a", "ns1/b", "ns2/c"}) {
				t.Errorf("IndexKeys = %q, %v", keys, err)
			}
			// Later writes maintain the new index too.
			_ = s.Add(&storeTestObj{ObjectMeta: storeTestPod("ns1", "a", "9").ObjectMeta, Value: "v"})
			if keys, _ := s.IndexKeys("value", "v"); !slices.Equal(keys, []string{"ns1/a"}) {
				t.Errorf("after update IndexKeys = %q", keys)
			}
		}},
		{"nothing to add", Indexers{}, "", nil},
		{"name clash", Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "other": MetaNamespaceIndexFunc},
			"indexer conflict: map[namespace:{}]", nil},
		{"nil function", Indexers{"nilfn": nil}, `cache: nil IndexFunc for indices ["nilfn"]`, nil},
		{"failing on a stored object adds nothing", Indexers{"fails": func(obj interface{}) ([]string, error) {
			if obj.(*storeTestObj).Name == "b" {
				return nil, errStoreTestIndex
			}
			return []string{"x"}, nil
		}}, `cache: unable to calculate an index entry for key "ns1/b" on index "fails": storeTest: cannot index`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := storeTestPopulated(t)
			err := s.AddIndexers(tc.add)
			if fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tc.wantErr}[tc.wantErr == ""] {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			wantNames := 2
			if err == nil {
				wantNames += len(tc.add)
			}
			if n := len(s.GetIndexers()); n != wantNames {
				t.Errorf("%d indexers, want %d", n, wantNames)
			}
			storeTestCheckState(t, s.(*cache).storage)
			if tc.check != nil {
				tc.check(t, s)
				storeTestCheckState(t, s.(*cache).storage)
			}
		})
	}
}

func TestIndexersAreCopied(t *testing.T) {
	mine := Indexers{NamespaceIndex: MetaNamespaceIndexFunc}
	s := NewIndexer(MetaNamespaceKeyFunc, mine)
	if err := s.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}); err != nil {
		t.Fatal(err)
	}
	if len(mine) != 1 {
		t.Errorf("AddIndexers wrote into the caller's map: %v", mine)
	}
	got := s.GetIndexers()
	delete(got, NamespaceIndex)
	if len(s.GetIndexers()) != 2 {
		t.Errorf("changing GetIndexers' result changed the store")
	}
}

func TestNewIndexerPanicsOnNilIndexFunc(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("no panic for a nil IndexFunc")
		}
	}()
	NewIndexer(MetaNamespaceKeyFunc, Indexers{"x": nil})
}

// TestNamespaceIndexValues checks the namespace index written without MetaNamespaceIndexFunc's
// allocation: an update allocates nothing, objects of more namespaces than are shared are
// indexed all the same, and an object without metadata fails as the function does.
func TestNamespaceIndexValues(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	pod := storeTestPod("ns0", "a", "1")
	if err := s.Add(pod); err != nil {
		t.Fatal(err)
	}
	storage := s.(*cache).storage
	if allocs := testing.AllocsPerRun(100, func() { storage.Update("ns0/a", pod) }); allocs != 0 {
		t.Errorf("Update of an indexed pod allocates %v times, want 0", allocs)
	}
	const n = maxNamespaceLists + 100
	for i := range n {
		if err := s.Add(storeTestPod(fmt.Sprint("ns", i), "b", "1")); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{0, 1, maxNamespaceLists - 1, maxNamespaceLists, n - 1} {
		keys, err := s.IndexKeys(NamespaceIndex, fmt.Sprint("ns", i))
		want := []string{fmt.Sprint("ns", i, "/b")}
		if i == 0 {
			want = []string{"ns0/a", "ns0/b"}
		}
		if err != nil || !slices.Equal(keys, want) {
			t.Errorf("IndexKeys(ns%d) = %v, %v, want %v", i, keys, err, want)
		}
	}
	if got := len(s.ListIndexFuncValues(NamespaceIndex)); got != n {
		t.Errorf("%d namespaces indexed, want %d", got, n)
	}
	storeTestCheckState(t, storage)
	fixedKey := func(interface{}) (string, error) { return "k", nil }
	err := NewIndexer(fixedKey, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}).Add(fifoTestNoMeta{})
	if err == nil || !strings.Contains(err.Error(), "object has no meta") {
		t.Errorf("Add of an object without metadata: %v, want MetaNamespaceIndexFunc's error", err)
	}
}
