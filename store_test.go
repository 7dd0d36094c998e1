package cache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kcache/cache/internal/features"
)

// storeTestIndexers are the indices most storage tests use.
func storeTestIndexers() Indexers {
	return Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "label": storeTestLabelIndexFunc}
}

// storeTestKeysOf returns the sorted keys of objs.
func storeTestKeysOf(t *testing.T, objs []interface{}) []string {
	t.Helper()
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		k, err := MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatalf("key of %v: %v", o, err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestStoreWrites(t *testing.T) {
	type op func(s Indexer) error
	add := func(o interface{}) op { return func(s Indexer) error { return s.Add(o) } }
	update := func(o interface{}) op { return func(s Indexer) error { return s.Update(o) } }
	del := func(o interface{}) op { return func(s Indexer) error { return s.Delete(o) } }
	replace := func(rv string, objs ...interface{}) op {
		return func(s Indexer) error { return s.Replace(objs, rv) }
	}
	cases := []struct {
		name     string
		ops      []op
		wantKeys []string
		// wantValue maps keys to the Value of the stored object.
		wantValue map[string]string
	}{
		{
			name:     "add then get",
			ops:      []op{add(storeTestPod("ns", "a", "1")), add(storeTestPod("", "b", "2"))},
			wantKeys: []string{"b", "ns/a"},
		},
		{
			name:     "update of a missing key inserts",
			ops:      []op{update(storeTestPod("ns", "a", "1"))},
			wantKeys: []string{"ns/a"},
		},
		{
			name: "add of a present key replaces",
			ops: []op{
				add(&storeTestObj{ObjectMeta: storeTestPod("ns", "a", "1").ObjectMeta, Value: "old"}),
				add(&storeTestObj{ObjectMeta: storeTestPod("ns", "a", "2").ObjectMeta, Value: "new"}),
			},
			wantKeys:  []string{"ns/a"},
			wantValue: map[string]string{"ns/a": "new"},
		},
		{
			name:     "delete removes",
			ops:      []op{add(storeTestPod("ns", "a", "1")), add(storeTestPod("ns", "b", "1")), del(storeTestPod("ns", "a", "2"))},
			wantKeys: []string{"ns/b"},
		},
		{
			name:     "delete of a missing key is not an error",
			ops:      []op{del(storeTestPod("ns", "a", "1"))},
			wantKeys: []string{},
		},
		{
			name:     "delete by explicit key",
			ops:      []op{add(storeTestPod("ns", "a", "1")), del(ExplicitKey("ns/a"))},
			wantKeys: []string{},
		},
		{
			name: "replace drops what is not listed",
			ops: []op{
				add(storeTestPod("ns", "a", "1")), add(storeTestPod("ns", "b", "1")),
				replace("5", storeTestPod("ns", "b", "3"), storeTestPod("ns", "c", "4")),
			},
			wantKeys: []string{"ns/b", "ns/c"},
		},
		{
			name: "replace with a repeated key keeps the last",
			ops: []op{replace("5",
				&storeTestObj{ObjectMeta: storeTestPod("ns", "a", "1").ObjectMeta, Value: "first"},
				&storeTestObj{ObjectMeta: storeTestPod("ns", "a", "2").ObjectMeta, Value: "last"})},
			wantKeys:  []string{"ns/a"},
			wantValue: map[string]string{"ns/a": "last"},
		},
		{
			name:     "replace with nothing empties",
			ops:      []op{add(storeTestPod("ns", "a", "1")), replace("9")},
			wantKeys: []string{},
		},
	}
	for _, tc := range cases {
		for _, withIndices := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indices=%v", tc.name, withIndices), func(t *testing.T) {
				var s Indexer
				if withIndices {
					s = NewIndexer(MetaNamespaceKeyFunc, storeTestIndexers())
				} else {
					s = NewStore(MetaNamespaceKeyFunc).(Indexer)
				}
				for i, o := range tc.ops {
					if err := o(s); err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
				}
				keys := s.ListKeys()
				slices.Sort(keys)
				if !slices.Equal(keys, tc.wantKeys) {
					t.Errorf("ListKeys = %q, want %q", keys, tc.wantKeys)
				}
				if got := storeTestKeysOf(t, s.List()); !slices.Equal(got, tc.wantKeys) {
					t.Errorf("List keys = %q, want %q", got, tc.wantKeys)
				}
				for _, key := range tc.wantKeys {
					item, ok, err := s.GetByKey(key)
					if err != nil || !ok {
						t.Fatalf("GetByKey(%q) = %v, %v, %v", key, item, ok, err)
					}
					if byObj, ok, err := s.Get(item); err != nil || !ok || byObj != item {
						t.Errorf("Get(stored %q) = %v, %v, %v", key, byObj, ok, err)
					}
					if want, ok := tc.wantValue[key]; ok && item.(*storeTestObj).Value != want {
						t.Errorf("%q holds Value %q, want %q", key, item.(*storeTestObj).Value, want)
					}
				}
				if _, ok, err := s.GetByKey("never/there"); ok || err != nil {
					t.Errorf("GetByKey(missing) = %v, %v", ok, err)
				}
				storeTestCheckState(t, s.(*cache).storage)
			})
		}
	}
}

func TestStoreBadInput(t *testing.T) {
	cases := []struct {
		name string
		call func(s Store) error
	}{
		{"add nil", func(s Store) error { return s.Add(nil) }},
		{"add without metadata", func(s Store) error { return s.Add(storeTestNoMeta{"x"}) }},
		{"update without metadata", func(s Store) error { return s.Update(&storeTestNoMeta{"x"}) }},
		{"delete nil", func(s Store) error { return s.Delete(nil) }},
		{"get without metadata", func(s Store) error { _, _, err := s.Get(42); return err }},
		{"replace with one bad item", func(s Store) error {
			return s.Replace([]interface{}{storeTestPod("ns", "b", "2"), storeTestNoMeta{"x"}}, "9")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewIndexer(MetaNamespaceKeyFunc, storeTestIndexers())
			existing := storeTestPod("ns", "a", "1")
			if err := s.Add(existing); err != nil {
				t.Fatal(err)
			}
			err := tc.call(s)
			var keyErr KeyError
			if !errors.As(err, &keyErr) {
				t.Fatalf("error = %v (%T), want a KeyError", err, err)
			}
			if !strings.Contains(err.Error(), "object has no meta") {
				t.Errorf("error %q does not say why", err)
			}
			if keys := s.ListKeys(); !slices.Equal(keys, []string{"ns/a"}) {
				t.Errorf("store changed: keys %q", keys)
			}
			if got := s.LastStoreSyncResourceVersion(); got != "1" {
				t.Errorf("resource version = %q, want 1 (unchanged)", got)
			}
			storeTestCheckState(t, s.(*cache).storage)
		})
	}
}

func TestStoreTransformer(t *testing.T) {
	// The transform marks objects; it fails for objects named "fail".
	transform := func(obj interface{}) (interface{}, error) {
		o := obj.(*storeTestObj)
		if o.Name == "fail" {
			return nil, errors.New("no thanks")
		}
		out := *o
		out.Value = "transformed"
		return &out, nil
	}
	cases := []struct {
		name      string
		call      func(s Store) error
		wantErr   string
		wantValue map[string]string // key → Value after the call
	}{
		{"add", func(s Store) error { return s.Add(storeTestPod("ns", "b", "2")) }, "",
			map[string]string{"ns/a": "transformed", "ns/b": "transformed"}},
		{"update", func(s Store) error { return s.Update(storeTestPod("ns", "a", "2")) }, "",
			map[string]string{"ns/a": "transformed"}},
		{"replace", func(s Store) error {
			return s.Replace([]interface{}{storeTestPod("ns", "c", "3")}, "3")
		}, "", map[string]string{"ns/c": "transformed"}},
		{"delete does not transform", func(s Store) error {
			return s.Delete(&storeTestObj{ObjectMeta: storeTestPod("ns", "fail", "1").ObjectMeta})
		}, "", map[string]string{"ns/a": "transformed"}},
		{"failing transform on add", func(s Store) error { return s.Add(storeTestPod("ns", "fail", "2")) },
			"transforming: no thanks", map[string]string{"ns/a": "transformed"}},
		{"failing transform on replace", func(s Store) error {
			return s.Replace([]interface{}{storeTestPod("ns", "c", "3"), storeTestPod("ns", "fail", "3")}, "3")
		}, "transforming: no thanks", map[string]string{"ns/a": "transformed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(MetaNamespaceKeyFunc, WithTransformer(transform))
			if err := s.Add(storeTestPod("ns", "a", "1")); err != nil {
				t.Fatal(err)
			}
			err := tc.call(s)
			if gotErr := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && gotErr != tc.wantErr) {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			keys := s.ListKeys()
			if len(keys) != len(tc.wantValue) {
				t.Errorf("keys = %q, want those of %v", keys, tc.wantValue)
			}
			for key, want := range tc.wantValue {
				item, ok, _ := s.GetByKey(key)
				if !ok || item.(*storeTestObj).Value != want {
					t.Errorf("%q = %v (present %v), want Value %q", key, item, ok, want)
				}
			}
		})
	}
}

func TestStoreResourceVersion(t *testing.T) {
	cases := []struct {
		name string
		call func(s Indexer)
		want string
	}{
		{"add records the object's", func(s Indexer) { _ = s.Add(storeTestPod("ns", "b", "7")) }, "7"},
		{"update records the object's", func(s Indexer) { _ = s.Update(storeTestPod("ns", "a", "8")) }, "8"},
		{"delete records the object's", func(s Indexer) { _ = s.Delete(storeTestPod("ns", "a", "9")) }, "9"},
		{"delete of a tombstone keeps it", func(s Indexer) {
			_ = s.Delete(DeletedFinalStateUnknown{Key: "ns/a"})
		}, "5"},
		{"replace records its argument", func(s Indexer) { _ = s.Replace(nil, "10") }, "10"},
		{"replace with an empty version", func(s Indexer) { _ = s.Replace(nil, "") }, ""},
		{"bookmark", func(s Indexer) { s.Bookmark("11") }, "11"},
		{"a rejected write keeps it", func(s Indexer) {
			_ = s.Add(&storeTestObj{ObjectMeta: storeTestPod("ns", "c", "12").ObjectMeta, Value: "bad"})
		}, "5"},
		{"transaction records the last object's", func(s Indexer) {
			_ = s.(TransactionStore).Transaction(
				Transaction{Type: TransactionTypeAdd, Object: storeTestPod("ns", "x", "13")},
				Transaction{Type: TransactionTypeDelete, Object: storeTestPod("ns", "a", "14")})
		}, "14"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, atomic := range []bool{true, false} {
				features.SetForTesting(t, features.AtomicFIFO, atomic)
				s := NewIndexer(MetaNamespaceKeyFunc, Indexers{"value": storeTestFailingIndexFunc})
				if err := s.Add(storeTestPod("ns", "a", "5")); err != nil {
					t.Fatal(err)
				}
				tc.call(s)
				want := tc.want
				if !atomic {
					want = ""
				}
				if got := s.LastStoreSyncResourceVersion(); got != want {
					t.Errorf("AtomicFIFO=%v: LastStoreSyncResourceVersion = %q, want %q", atomic, got, want)
				}
			}
		})
	}
}

// storeTestGaugeProvider records every store resource version gauge value.
type storeTestGaugeProvider struct {
	noopInformerMetricsProvider
	values *[]float64
}

type storeTestGauge struct{ values *[]float64 }

func (g storeTestGauge) Set(v float64) { *g.values = append(*g.values, v) }

func (p storeTestGaugeProvider) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return storeTestGauge{values: p.values}
}

func TestStoreMetrics(t *testing.T) {
	cases := []struct {
		name       string
		reserve    bool
		explicit   bool // pass the provider to WithStoreMetrics; otherwise nil, meaning the global one
		wantValues []float64
	}{
		{"explicit provider", true, true, []float64{5, 123456789012345, 0, 42}},
		{"nil provider uses the global one", true, false, []float64{5, 123456789012345, 0, 42}},
		{"unreserved identity publishes nothing", false, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ResetInformerNamesForTesting()
			t.Cleanup(ResetInformerNamesForTesting)
			var values []float64
			provider := storeTestGaugeProvider{values: &values}
			saved := informerMetricsProvider
			t.Cleanup(func() { informerMetricsProvider = saved })
			informerMetricsProvider = &informerMetricsProviderState{}
			SetInformerMetricsProvider(provider)

			var id InformerNameAndResource
			if tc.reserve {
				name, err := NewInformerName("storeTest")
				if err != nil {
					t.Fatal(err)
				}
				id = name.WithResource(storeTestGVR)
			}
			var explicit InformerMetricsProvider
			if tc.explicit {
				explicit = provider
			}
			s := NewStore(MetaNamespaceKeyFunc, WithStoreMetrics(id, explicit))
			_ = s.Add(storeTestPod("ns", "a", "5"))
			// Only the last 15 digits of a long version count.
			_ = s.Add(storeTestPod("ns", "a", "99123456789012345"))
			_ = s.Add(storeTestPod("ns", "a", "not-a-number"))
			_ = s.Replace(nil, "")
			s.Bookmark("42")
			if !slices.Equal(values, tc.wantValues) {
				t.Errorf("gauge values = %v, want %v", values, tc.wantValues)
			}
		})
	}
}
