package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestThreadSafeStoreWrites(t *testing.T) {
	cases := []struct {
		name string
		ops  func(s ThreadSafeStore)
		// want maps keys to the Value stored (nil objects appear as "<nil>").
		want map[string]string
		// wantNS maps namespaces to the keys indexed under them.
		wantNS    map[string][]string
		wantRV    string
		wantError bool // an error was reported through utilruntime.HandleError
	}{
		{"add and update", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.Update("k1", &storeTestObj{ObjectMeta: storeTestPod("other", "k1", "2").ObjectMeta, Value: "v2"})
		}, map[string]string{"k1": "v2"}, map[string][]string{"other": {"k1"}}, "2", false},
		{"a nil object is stored and indexed under nothing", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.Update("k1", nil)
		}, map[string]string{"k1": "<nil>"}, map[string][]string{}, "1", false},
		{"delete does not record a version", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.Add("k2", storeTestPod("ns", "k2", "2"))
			s.Delete("k1")
		}, map[string]string{"k2": ""}, map[string][]string{"ns": {"k2"}}, "2", false},
		{"delete with object records its version", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.DeleteWithObject("k1", storeTestPod("ns", "k1", "3"))
		}, map[string]string{}, map[string][]string{}, "3", false},
		{"a failing index function is reported and changes nothing", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.Update("k1", storeTestNoMeta{"x"})
		}, map[string]string{"k1": ""}, map[string][]string{"ns": {"k1"}}, "1", true},
		{"replace reports failing objects and applies the rest", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.Replace(map[string]interface{}{
				"k1": storeTestNoMeta{"x"},
				"k2": storeTestNoMeta{"y"},
				"k3": storeTestPod("ns3", "k3", "3"),
			}, "7")
		}, map[string]string{"k1": "", "k3": ""}, map[string][]string{"ns": {"k1"}, "ns3": {"k3"}}, "7", true},
		{"transaction", func(s ThreadSafeStore) {
			s.Add("k1", storeTestPod("ns", "k1", "1"))
			s.(ThreadSafeStoreWithTransaction).Transaction(
				ThreadSafeStoreTransaction{Transaction{Type: TransactionTypeAdd, Object: storeTestPod("ns", "k2", "2")}, "k2"},
				ThreadSafeStoreTransaction{Transaction{Type: TransactionTypeDelete, Object: storeTestPod("ns", "k1", "3")}, "k1"},
				ThreadSafeStoreTransaction{Transaction{Type: TransactionTypeUpdate, Object: storeTestPod("ns2", "k2", "4")}, "k2"},
			)
		}, map[string]string{"k2": ""}, map[string][]string{"ns2": {"k2"}}, "4", false},
		{"transaction with an unknown type", func(s ThreadSafeStore) {
			s.(ThreadSafeStoreWithTransaction).Transaction(
				ThreadSafeStoreTransaction{Transaction{Type: TransactionTypeAdd, Object: storeTestPod("ns", "k2", "2")}, "k2"},
				ThreadSafeStoreTransaction{Transaction{Type: "Upsert", Object: storeTestPod("ns", "k3", "3")}, "k3"},
			)
		}, map[string]string{"k2": ""}, map[string][]string{"ns": {"k2"}}, "2", true},
		{"empty transaction", func(s ThreadSafeStore) {
			s.Bookmark("5")
			s.(ThreadSafeStoreWithTransaction).Transaction()
		}, map[string]string{}, map[string][]string{}, "5", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reported := storeTestCaptureErrors(t)
			s := NewThreadSafeStore(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, Indices{})
			tc.ops(s)
			if errs := reported(); (len(errs) > 0) != tc.wantError {
				t.Errorf("reported errors %v, want some: %v", errs, tc.wantError)
			}
			got := map[string]string{}
			for _, key := range s.ListKeys() {
				item, ok := s.Get(key)
				if !ok {
					t.Fatalf("listed key %q is not there", key)
				}
				if o, isObj := item.(*storeTestObj); isObj {
					got[key] = o.Value
				} else {
					got[key] = fmt.Sprint(item)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("content = %v, want %v", got, tc.want)
			}
			if n := len(s.List()); n != len(tc.want) {
				t.Errorf("List has %d objects, want %d", n, len(tc.want))
			}
			for ns, keys := range tc.wantNS {
				if got, _ := s.IndexKeys(NamespaceIndex, ns); !slices.Equal(got, keys) {
					t.Errorf("IndexKeys(%q) = %q, want %q", ns, got, keys)
				}
			}
			if n := len(s.ListIndexFuncValues(NamespaceIndex)); n != len(tc.wantNS) {
				t.Errorf("%d namespace values, want %d", n, len(tc.wantNS))
			}
			if rv := s.LastStoreSyncResourceVersion(); rv != tc.wantRV {
				t.Errorf("resource version = %q, want %q", rv, tc.wantRV)
			}
			if err := s.Resync(); err != nil {
				t.Errorf("Resync = %v", err)
			}
			storeTestCheckState(t, s.(*threadSafeMap))
		})
	}
}

func TestThreadSafeStoreTransactionErrors(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc).(TransactionStore)
	cases := []struct {
		name           string
		txns           []Transaction
		wantSuccessful []int
		wantErrs       int
	}{
		{"all good", []Transaction{{Type: TransactionTypeAdd, Object: storeTestPod("ns", "a", "1")}}, nil, 0},
		{"key errors and an unknown type", []Transaction{
			{Type: TransactionTypeAdd, Object: nil},
			{Type: TransactionTypeAdd, Object: storeTestPod("ns", "a", "1")},
			{Type: "Bogus", Object: storeTestPod("ns", "b", "1")},
			{Type: TransactionTypeDelete, Object: storeTestNoMeta{}},
		}, []int{1}, 3},
		{"all bad", []Transaction{{Type: TransactionTypeAdd, Object: 7}}, []int{}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			txnErr := s.Transaction(tc.txns...)
			if tc.wantErrs == 0 {
				if txnErr != nil {
					t.Fatalf("unexpected error %v", txnErr)
				}
				return
			}
			if txnErr == nil {
				t.Fatal("no error")
			}
			if !slices.Equal(txnErr.SuccessfulIndices, tc.wantSuccessful) || len(txnErr.Errors) != tc.wantErrs || txnErr.TotalTransactions != len(tc.txns) {
				t.Errorf("got %+v", txnErr)
			}
			var keyErr KeyError
			if !errors.As(txnErr.Errors[0], &keyErr) {
				t.Errorf("first error %v is not a KeyError", txnErr.Errors[0])
			}
			want := fmt.Sprintf("failed to execute (%d/%d) transactions failed due to: ", tc.wantErrs, len(tc.txns))
			if got := txnErr.Error(); len(got) < len(want) || got[:len(want)] != want {
				t.Errorf("Error() = %q", got)
			}
		})
	}
}

// TestThreadSafeStoreConcurrency runs writers, a relister, AddIndexers and readers together;
// the race detector and the final consistency check are the assertions.
func TestThreadSafeStoreConcurrency(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				o := storeTestPod(fmt.Sprintf("ns%d", i%4), fmt.Sprintf("w%d-%d", w, i%50), fmt.Sprint(i), fmt.Sprintf("l=%d", i%3))
				if i%7 == 6 {
					_ = s.Delete(o)
				} else {
					_ = s.Update(o)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			list := []interface{}{storeTestPod("ns0", "r", fmt.Sprint(i), "l=1")}
			_ = s.Replace(list, fmt.Sprint(i))
			if i == 10 {
				if err := s.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}); err != nil {
					t.Errorf("AddIndexers: %v", err)
				}
			}
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				_, _ = s.ByIndex(NamespaceIndex, "ns1")
				_ = s.List()
				_, _ = s.Index(NamespaceIndex, storeTestPod("ns2", "x", "1"))
				_, _, _ = s.GetByKey("ns0/r")
			}
		}()
	}
	wg.Wait()
	storeTestCheckState(t, s.(*cache).storage)
}

// TestThreadSafeStoreSlack checks how much room the slot chunks keep: a store filled by
// Replace keeps none, one filled an object at a time or grown past a Replace at most one chunk,
// and one emptied again gives all but one chunk back; the content stays consistent throughout.
func TestThreadSafeStoreSlack(t *testing.T) {
	room := func(c *threadSafeMap) int {
		n := 0
		for _, ch := range c.state.chunks {
			n += cap(ch.keys)
			if cap(ch.objs) != cap(ch.keys) || cap(ch.cells) != cap(ch.keys) {
				t.Fatalf("chunk with room for %d keys, %d objects, %d cells (one index)", cap(ch.keys), cap(ch.objs), cap(ch.cells))
			}
		}
		return n
	}
	pod := func(i int) (string, interface{}) {
		return fmt.Sprint("ns", i%7, "/o", i), storeTestPod(fmt.Sprint("ns", i%7), fmt.Sprint("o", i), "1")
	}
	for _, listed := range []int{10, 1000, 3*slotChunkSize + 10} {
		t.Run(fmt.Sprint("replace ", listed), func(t *testing.T) {
			c := newThreadSafeMap(Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
			items := make(map[string]interface{}, listed)
			for i := range listed {
				key, obj := pod(i)
				items[key] = obj
			}
			c.Replace(items, "1")
			if got := room(c); got != listed {
				t.Errorf("room for %d slots after a Replace of %d objects", got, listed)
			}
			c.Add(pod(listed))
			if got := room(c); got > listed+1+slotChunkSize {
				t.Errorf("room for %d slots after one Add to %d objects", got, listed)
			}
			storeTestCheckState(t, c)
		})
	}
	t.Run("one at a time, then deleted", func(t *testing.T) {
		c := newThreadSafeMap(Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		const n = 5*slotChunkSize + 3
		for i := range n {
			c.Add(pod(i))
			if got := room(c); got >= i+1+slotChunkSize {
				t.Fatalf("room for %d slots with %d objects", got, i+1)
			}
		}
		storeTestCheckState(t, c)
		for i := range n - 10 {
			key, _ := pod(i)
			c.Delete(key)
		}
		storeTestCheckState(t, c)
		if got := room(c); got > slotChunkSize {
			t.Errorf("room for %d slots with 10 objects left of %d", got, n)
		}
		for i := range 10 {
			key, _ := pod(n - 10 + i)
			if got, ok := c.Get(key); !ok || got.(*storeTestObj).Name != fmt.Sprint("o", n-10+i) {
				t.Errorf("Get(%q) = %v, %v after the others were deleted", key, got, ok)
			}
		}
	})
}
