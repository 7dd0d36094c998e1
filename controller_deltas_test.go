package cache

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// ctrlTestRecorder is a ResourceEventHandler that records what it is told, compactly.
type ctrlTestRecorder struct {
	events []string
}

func ctrlTestDescribe(obj interface{}) string {
	switch o := obj.(type) {
	case *fifoTestItem:
		return fmt.Sprintf("%s=%d", o.Name, o.Val)
	case DeletedFinalStateUnknown:
		if o.Obj == nil {
			return "tomb " + o.Key + "=nil"
		}
		return "tomb " + ctrlTestDescribe(o.Obj)
	}
	return fmt.Sprintf("%T", obj)
}

func (r *ctrlTestRecorder) OnAdd(obj interface{}, isInInitialList bool) {
	e := "add " + ctrlTestDescribe(obj)
	if isInInitialList {
		e += " initial"
	}
	r.events = append(r.events, e)
}

func (r *ctrlTestRecorder) OnUpdate(oldObj, newObj interface{}) {
	r.events = append(r.events, "update "+ctrlTestDescribe(oldObj)+" -> "+ctrlTestDescribe(newObj))
}

func (r *ctrlTestRecorder) OnDelete(obj interface{}) {
	r.events = append(r.events, "delete "+ctrlTestDescribe(obj))
}

// ctrlTestContents lists a store's objects, sorted.
func ctrlTestContents(s Store) []string {
	var out []string
	for _, o := range s.List() {
		out = append(out, ctrlTestDescribe(o))
	}
	sort.Strings(out)
	return out
}

// ctrlTestPlainStore hides a store's Transaction method.
type ctrlTestPlainStore struct{ Store }

// ctrlTestForeignTxnStore is a TransactionStore that is not this package's: processDeltasInBatch
// must ask it with Get which objects are stored, as client-go does.
type ctrlTestForeignTxnStore struct{ Store }

func (s ctrlTestForeignTxnStore) Transaction(txns ...Transaction) *TransactionError {
	return s.Store.(TransactionStore).Transaction(txns...)
}

func TestProcessDeltas(t *testing.T) {
	a1, a2 := fifoTestObj("a", 1), fifoTestObj("a", 2)
	b1 := fifoTestObj("b", 1)
	c1, c2 := fifoTestObj("c", 1), fifoTestObj("c", 2)
	d1 := fifoTestObj("d", 1)
	cases := []struct {
		name      string
		stored    []*fifoTestItem
		deltas    Deltas
		initial   bool
		unordered bool // the events come in store order: compare them sorted
		want      []string
		wantStore []string
		wantRV    string
		wantErr   bool
	}{
		{
			name:      "added: new objects are added, known ones updated",
			stored:    []*fifoTestItem{a1},
			deltas:    Deltas{{Added, b1}, {Added, a2}},
			initial:   true,
			want:      []string{"add b=1 initial", "update a=1 -> a=2"},
			wantStore: []string{"a=2", "b=1"},
		},
		{
			name:      "updated, replaced and sync behave like added",
			stored:    []*fifoTestItem{a1},
			deltas:    Deltas{{Updated, b1}, {Replaced, a2}, {Sync, c1}},
			want:      []string{"add b=1", "update a=1 -> a=2", "add c=1"},
			wantStore: []string{"a=2", "b=1", "c=1"},
		},
		{
			name:      "deleted: objects and tombstones are deleted",
			stored:    []*fifoTestItem{a1, b1},
			deltas:    Deltas{{Deleted, a2}, {Deleted, DeletedFinalStateUnknown{Key: "b", Obj: b1}}},
			want:      []string{"delete a=2", "delete tomb b=1"},
			wantStore: nil,
		},
		{
			name:   "replaced all: tombstones for missing objects, then updates and adds in list order",
			stored: []*fifoTestItem{a1, b1, c1},
			deltas: Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "42", Objects: []interface{}{c2, d1, a2}}}},
			want: []string{
				"delete tomb b=1", "update c=1 -> c=2", "add d=1", "update a=1 -> a=2",
			},
			wantStore: []string{"a=2", "c=2", "d=1"},
			wantRV:    "42",
		},
		{
			name:      "replaced all in the initial list marks adds as initial",
			deltas:    Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "1", Objects: []interface{}{a1}}}},
			initial:   true,
			want:      []string{"add a=1 initial"},
			wantStore: []string{"a=1"},
			wantRV:    "1",
		},
		{
			name:      "sync all re-delivers every stored object",
			stored:    []*fifoTestItem{a1, b1},
			deltas:    Deltas{{SyncAll, SyncAllInfo{}}},
			unordered: true,
			want:      []string{"update a=1 -> a=1", "update b=1 -> b=1"},
			wantStore: []string{"a=1", "b=1"},
		},
		{
			name:      "bookmark records the resource version",
			stored:    []*fifoTestItem{a1},
			deltas:    Deltas{{Bookmark, BookmarkInfo{ResourceVersion: "77"}}},
			wantStore: []string{"a=1"},
			wantRV:    "77",
		},
		{
			name:    "replaced all without its info",
			deltas:  Deltas{{ReplacedAll, a1}},
			wantErr: true,
		},
		{
			name:    "sync all without its info",
			deltas:  Deltas{{SyncAll, a1}},
			wantErr: true,
		},
		{
			name:    "bookmark without its info",
			deltas:  Deltas{{Bookmark, "7"}},
			wantErr: true,
		},
		{
			name:    "unknown delta type",
			deltas:  Deltas{{DeltaType("Teleported"), a1}},
			wantErr: true,
		},
		{
			name:      "a store error stops processing",
			deltas:    Deltas{{Added, a1}, {Added, fifoTestNoMeta{}}, {Added, b1}},
			want:      []string{"add a=1"},
			wantStore: []string{"a=1"},
			wantErr:   true,
		},
		{
			name:      "a replaced-all object without a key fails before anything changes",
			stored:    []*fifoTestItem{a1},
			deltas:    Deltas{{ReplacedAll, ReplacedAllInfo{Objects: []interface{}{b1, fifoTestNoMeta{}}}}},
			wantStore: []string{"a=1"},
			wantErr:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := NewStore(DeletionHandlingMetaNamespaceKeyFunc)
			for _, o := range tc.stored {
				if err := store.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			rec := &ctrlTestRecorder{}
			err := processDeltas(klog.Background(), rec, store, tc.deltas, tc.initial, DeletionHandlingMetaNamespaceKeyFunc)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			got := rec.events
			if tc.unordered {
				sort.Strings(got)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("events\n  %q\nwant\n  %q", got, tc.want)
			}
			if got := ctrlTestContents(store); !slices.Equal(got, tc.wantStore) {
				t.Errorf("store %q, want %q", got, tc.wantStore)
			}
			if tc.wantRV != "" {
				if got := store.LastStoreSyncResourceVersion(); got != tc.wantRV {
					t.Errorf("store resource version %q, want %q", got, tc.wantRV)
				}
			}
		})
	}
}

func TestProcessDeltasInBatch(t *testing.T) {
	a1, a2 := fifoTestObj("a", 1), fifoTestObj("a", 2)
	b1, b2, c1 := fifoTestObj("b", 1), fifoTestObj("b", 2), fifoTestObj("c", 1)
	cases := []struct {
		name      string
		plain     bool // the store does not support transactions
		foreign   bool // the store supports transactions but is not this package's
		stored    []*fifoTestItem
		deltas    []Delta
		want      []string
		wantStore []string
		wantErr   bool
	}{
		{
			name:      "transaction: adds, updates and deletes, then the handler in batch order",
			stored:    []*fifoTestItem{a1, b1},
			deltas:    []Delta{{Sync, a2}, {Deleted, b1}, {Added, c1}},
			want:      []string{"update a=1 -> a=2", "delete b=1", "add c=1 initial"},
			wantStore: []string{"a=2", "c=1"},
		},
		{
			name:      "plain store: the same outcome",
			plain:     true,
			stored:    []*fifoTestItem{a1, b1},
			deltas:    []Delta{{Sync, a2}, {Deleted, b1}, {Added, c1}},
			want:      []string{"update a=1 -> a=2", "delete b=1", "add c=1 initial"},
			wantStore: []string{"a=2", "c=1"},
		},
		{
			name:      "foreign transaction store: the same outcome",
			foreign:   true,
			stored:    []*fifoTestItem{a1, b1},
			deltas:    []Delta{{Sync, a2}, {Deleted, b1}, {Added, c1}},
			want:      []string{"update a=1 -> a=2", "delete b=1", "add c=1 initial"},
			wantStore: []string{"a=2", "c=1"},
		},
		{
			name:      "transaction: an item without a key does not shift the others' old objects",
			stored:    []*fifoTestItem{a1, b1},
			deltas:    []Delta{{Added, fifoTestNoMeta{}}, {Sync, a2}, {Added, c1}, {Updated, b2}},
			want:      []string{"update a=1 -> a=2", "add c=1 initial", "update b=1 -> b=2"},
			wantStore: []string{"a=2", "b=2", "c=1"},
			wantErr:   true,
		},
		{
			name:      "foreign transaction store: an item without a key only silences its own event",
			foreign:   true,
			stored:    []*fifoTestItem{a1, b1},
			deltas:    []Delta{{Added, fifoTestNoMeta{}}, {Sync, a2}, {Added, c1}, {Updated, b2}},
			want:      []string{"update a=1 -> a=2", "add c=1 initial", "update b=1 -> b=2"},
			wantStore: []string{"a=2", "b=2", "c=1"},
			wantErr:   true,
		},
		{
			name:      "transaction: a failing item only silences its own event",
			deltas:    []Delta{{Added, a1}, {Added, fifoTestNoMeta{}}, {Added, c1}},
			want:      []string{"add a=1 initial", "add c=1 initial"},
			wantStore: []string{"a=1", "c=1"},
			wantErr:   true,
		},
		{
			name:      "plain store: a failing item does not stop the others",
			plain:     true,
			deltas:    []Delta{{Added, a1}, {Added, fifoTestNoMeta{}}, {Added, c1}},
			want:      []string{"add a=1 initial", "add c=1 initial"},
			wantStore: []string{"a=1", "c=1"},
			wantErr:   true,
		},
		{
			name:      "transaction: an unbatchable delta fails the batch before anything is applied",
			stored:    []*fifoTestItem{a1},
			deltas:    []Delta{{Added, b1}, {SyncAll, SyncAllInfo{}}},
			wantStore: []string{"a=1"},
			wantErr:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var store Store = NewStore(DeletionHandlingMetaNamespaceKeyFunc)
			for _, o := range tc.stored {
				if err := store.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			if tc.plain {
				store = ctrlTestPlainStore{store}
			}
			if tc.foreign {
				store = ctrlTestForeignTxnStore{store}
			}
			rec := &ctrlTestRecorder{}
			err := processDeltasInBatch(klog.Background(), rec, store, tc.deltas, true, DeletionHandlingMetaNamespaceKeyFunc)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			var txnErr *TransactionError
			if err != nil && !tc.plain && tc.want != nil && !errors.As(err, &txnErr) {
				t.Errorf("err %v does not wrap a TransactionError", err)
			}
			if !slices.Equal(rec.events, tc.want) {
				t.Errorf("events\n  %q\nwant\n  %q", rec.events, tc.want)
			}
			if got := ctrlTestContents(store); !slices.Equal(got, tc.wantStore) {
				t.Errorf("store %q, want %q", got, tc.wantStore)
			}
		})
	}
}

// BenchmarkProcessReplacedAll100k measures applying a relist of 100,000 pods, all already
// cached, to an indexer with the namespace index: the consumer side of an atomic RealFIFO.
func BenchmarkProcessReplacedAll100k(b *testing.B) {
	const n = 100000
	pods := make([]interface{}, n)
	for i := range pods {
		pods[i] = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%06d", i)}}
	}
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	if err := store.Replace(append([]interface{}(nil), pods...), "1"); err != nil {
		b.Fatal(err)
	}
	handler := ResourceEventHandlerFuncs{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		info := ReplacedAllInfo{ResourceVersion: "2", Objects: append([]interface{}(nil), pods...)}
		if err := processDeltas(klog.Background(), handler, store, Deltas{{ReplacedAll, info}}, false, DeletionHandlingMetaNamespaceKeyFunc); err != nil {
			b.Fatal(err)
		}
	}
}
