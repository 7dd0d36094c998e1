package cache

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
)

// The fuzz tests drive a FIFO and a small model of it with the same random sequence of source
// events, and check after every step that the FIFO hands out exactly what the model predicts
// (so no delta is lost, duplicated, reordered or invented, and tombstones are queued exactly
// for the keys that disappeared) and that HasSynced flips exactly once, when the model says.
// Independently of the model, they check that each key's versions never go backwards and that
// the consumer's store converges to the source once a final relist has been processed.

// fifoFuzzDesc is a delta as the model sees it.
type fifoFuzzDesc struct {
	typ  DeltaType
	key  string
	val  int  // the object's version; for a tombstone, its Obj's version (-1 for nil)
	tomb bool // the object is a DeletedFinalStateUnknown
	list string
}

func (d fifoFuzzDesc) String() string {
	if d.list != "" {
		return fmt.Sprintf("%s(%s)", d.typ, d.list)
	}
	if d.tomb {
		return fmt.Sprintf("%s:%s(tomb %d)", d.key, d.typ, d.val)
	}
	return fmt.Sprintf("%s:%s(%d)", d.key, d.typ, d.val)
}

func fifoFuzzDescOf(d Delta) fifoFuzzDesc {
	switch o := d.Object.(type) {
	case *fifoTestItem:
		return fifoFuzzDesc{typ: d.Type, key: o.Name, val: o.Val}
	case DeletedFinalStateUnknown:
		val := -1
		if item, ok := o.Obj.(*fifoTestItem); ok {
			val = item.Val
		}
		return fifoFuzzDesc{typ: d.Type, key: o.Key, val: val, tomb: true}
	case ReplacedAllInfo:
		return fifoFuzzDesc{typ: d.Type, list: fifoFuzzListString(o.Objects)}
	default:
		return fifoFuzzDesc{typ: d.Type, list: fmt.Sprint(o)}
	}
}

func fifoFuzzListString(objs []interface{}) string {
	s := ""
	for _, o := range objs {
		item := o.(*fifoTestItem)
		s += fmt.Sprintf("%s=%d,", item.Name, item.Val)
	}
	return s + "."
}

// fifoFuzzSource is the simulated API server plus the consumer's store.
type fifoFuzzSource struct {
	t     *testing.T
	truth map[string]int
	next  int
	store *fifoTestKnown // the consumer's store; the FIFO's KnownObjects
	// lastSeen is the newest version the consumer saw per key, to check order.
	lastSeen map[string]int
}

func newFIFOFuzzSource(t *testing.T) *fifoFuzzSource {
	return &fifoFuzzSource{t: t, truth: map[string]int{}, store: fifoTestKnownOf(), lastSeen: map[string]int{}}
}

func (s *fifoFuzzSource) version() int { s.next++; return s.next }

func (s *fifoFuzzSource) list() []interface{} {
	keys := slices.Sorted(maps.Keys(s.truth))
	out := make([]interface{}, len(keys))
	for i, k := range keys {
		out[i] = fifoTestObj(k, s.truth[k])
	}
	return out
}

func (s *fifoFuzzSource) storeVal(key string) int {
	return s.store.objs[key].(*fifoTestItem).Val
}

// apply processes one delta the way an informer's consumer does.
func (s *fifoFuzzSource) apply(d Delta) {
	s.t.Helper()
	desc := fifoFuzzDescOf(d)
	if desc.list == "" && desc.val >= 0 {
		if desc.val < s.lastSeen[desc.key] {
			s.t.Fatalf("%v delivered after version %d of %s", desc, s.lastSeen[desc.key], desc.key)
		}
		s.lastSeen[desc.key] = desc.val
	}
	switch d.Type {
	case Added, Updated, Replaced, Sync:
		s.store.objs[desc.key] = d.Object
	case Deleted:
		delete(s.store.objs, desc.key)
	case ReplacedAll:
		s.store.objs = map[string]interface{}{}
		for _, o := range d.Object.(ReplacedAllInfo).Objects {
			s.store.objs[o.(*fifoTestItem).Name] = o
		}
	}
}

// checkConverged fails unless the consumer's store holds exactly the source's objects.
func (s *fifoFuzzSource) checkConverged() {
	s.t.Helper()
	got := map[string]int{}
	for k := range s.store.objs {
		got[k] = s.storeVal(k)
	}
	if !maps.Equal(got, s.truth) {
		s.t.Fatalf("store %v, source %v", got, s.truth)
	}
}

// fifoFuzzOp is one step decoded from the fuzz input.
type fifoFuzzOp struct {
	kind byte
	key  string
	alt  bool // Pop: use PopBatch; Replace: atomic bookmark before it
}

func fifoFuzzOps(data []byte) []fifoFuzzOp {
	var ops []fifoFuzzOp
	for i := 0; i+1 < len(data) && len(ops) < 200; i += 2 {
		ops = append(ops, fifoFuzzOp{kind: data[i] % 8, key: fmt.Sprint("k", data[i+1]%4), alt: data[i+1]&4 != 0})
	}
	return ops
}

// The fuzzed operations.
const (
	fifoFuzzAdd = iota
	fifoFuzzUpdate
	fifoFuzzDelete
	fifoFuzzMissedDelete // the source deletes without telling the FIFO (a watch gap)
	fifoFuzzMissedChange // the source adds or changes without telling the FIFO
	fifoFuzzReplace
	fifoFuzzResync
	fifoFuzzPop
)

// fifoFuzzSeeds are inputs every fuzz test starts from.
var fifoFuzzSeeds = [][]byte{
	{fifoFuzzAdd, 0, fifoFuzzAdd, 1, fifoFuzzPop, 0, fifoFuzzPop, 0},
	{fifoFuzzMissedChange, 0, fifoFuzzMissedChange, 1, fifoFuzzReplace, 0, fifoFuzzPop, 4, fifoFuzzMissedDelete, 0, fifoFuzzReplace, 0},
	{fifoFuzzAdd, 2, fifoFuzzDelete, 2, fifoFuzzDelete, 2, fifoFuzzReplace, 0, fifoFuzzResync, 0, fifoFuzzPop, 4},
	{fifoFuzzReplace, 0, fifoFuzzAdd, 1, fifoFuzzUpdate, 1, fifoFuzzUpdate, 1, fifoFuzzPop, 4, fifoFuzzResync, 1, fifoFuzzMissedDelete, 1, fifoFuzzReplace, 5},
}

// fifoFuzzSourceStep applies a source-side op to the source and, for watch events, to q. It
// reports whether q was written to (an op that does not fit the source's state is skipped).
func fifoFuzzSourceStep(s *fifoFuzzSource, op fifoFuzzOp, q ReflectorStore) (changed bool, err error) {
	_, exists := s.truth[op.key]
	switch op.kind {
	case fifoFuzzAdd:
		if exists {
			return false, nil
		}
		s.truth[op.key] = s.version()
		return true, q.Add(fifoTestObj(op.key, s.truth[op.key]))
	case fifoFuzzUpdate:
		if !exists {
			return false, nil
		}
		s.truth[op.key] = s.version()
		return true, q.Update(fifoTestObj(op.key, s.truth[op.key]))
	case fifoFuzzDelete:
		if !exists {
			return false, nil
		}
		delete(s.truth, op.key)
		return true, q.Delete(fifoTestObj(op.key, s.version()))
	case fifoFuzzMissedDelete:
		delete(s.truth, op.key)
	case fifoFuzzMissedChange:
		s.truth[op.key] = s.version()
	}
	return false, nil
}

func FuzzDeltaFIFO(f *testing.F) {
	for _, seed := range fifoFuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := newFIFOFuzzSource(t)
		q := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: src.store, EmitDeltaTypeReplaced: true})
		m := &fifoFuzzDeltaModel{items: map[string][]fifoFuzzDesc{}, store: src.store}
		pop := func() {
			if len(m.order) == 0 {
				return
			}
			want, wantInitial := m.pop()
			_, err := q.Pop(func(obj interface{}, isInInitialList bool) error {
				ds := obj.(Deltas)
				got := make([]fifoFuzzDesc, len(ds))
				for i, d := range ds {
					got[i] = fifoFuzzDescOf(d)
					src.apply(d)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("popped %v, model says %v", got, want)
				}
				if isInInitialList != wantInitial {
					t.Fatalf("isInInitialList = %v, model says %v", isInInitialList, wantInitial)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			m.processed()
		}
		for _, op := range fifoFuzzOps(data) {
			var err error
			switch op.kind {
			case fifoFuzzReplace:
				list := src.list()
				m.replace(list)
				err = q.Replace(list, "")
			case fifoFuzzResync:
				m.resync()
				err = q.Resync()
			case fifoFuzzPop:
				pop()
			default:
				var changed bool
				if changed, err = fifoFuzzSourceStep(src, op, q); changed {
					m.watchEvent(op.kind, op.key, src.next)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := q.HasSynced(), m.synced(); got != want {
				t.Fatalf("after %v: HasSynced = %v, model says %v", op, got, want)
			}
		}
		list := src.list()
		m.replace(list)
		if err := q.Replace(list, ""); err != nil {
			t.Fatal(err)
		}
		for len(m.order) > 0 {
			pop()
		}
		src.checkConverged()
		if !q.HasSynced() {
			t.Fatal("not synced after draining a replace")
		}
	})
}

// fifoFuzzDeltaModel is DeltaFIFO reduced to slices and maps.
type fifoFuzzDeltaModel struct {
	order     []string
	items     map[string][]fifoFuzzDesc
	store     *fifoTestKnown
	populated bool
	initial   int
}

func (m *fifoFuzzDeltaModel) synced() bool { return m.populated && m.initial == 0 }

func (m *fifoFuzzDeltaModel) push(d fifoFuzzDesc) {
	ds := m.items[d.key]
	if len(ds) == 0 {
		m.order = append(m.order, d.key)
	}
	if n := len(ds); n > 0 && d.typ == Deleted && ds[n-1].typ == Deleted {
		if ds[n-1].tomb {
			ds[n-1] = d
		}
		return
	}
	m.items[d.key] = append(ds, d)
}

func (m *fifoFuzzDeltaModel) watchEvent(kind byte, key string, val int) {
	m.populated = true
	switch kind {
	case fifoFuzzAdd:
		m.push(fifoFuzzDesc{typ: Added, key: key, val: val})
	case fifoFuzzUpdate:
		m.push(fifoFuzzDesc{typ: Updated, key: key, val: val})
	case fifoFuzzDelete:
		_, known := m.store.objs[key]
		if len(m.items[key]) == 0 && !known {
			return
		}
		m.push(fifoFuzzDesc{typ: Deleted, key: key, val: val})
	}
}

func (m *fifoFuzzDeltaModel) replace(list []interface{}) {
	keys := map[string]bool{}
	for _, o := range list {
		item := o.(*fifoTestItem)
		keys[item.Name] = true
		m.push(fifoFuzzDesc{typ: Replaced, key: item.Name, val: item.Val})
	}
	deletions := 0
	for _, k := range slices.Clone(m.order) {
		if keys[k] {
			continue
		}
		ds := m.items[k]
		deletions++
		m.push(fifoFuzzDesc{typ: Deleted, key: k, val: ds[len(ds)-1].val, tomb: true})
	}
	for _, k := range slices.Sorted(maps.Keys(m.store.objs)) {
		if keys[k] || len(m.items[k]) > 0 {
			continue
		}
		deletions++
		m.push(fifoFuzzDesc{typ: Deleted, key: k, val: m.store.objs[k].(*fifoTestItem).Val, tomb: true})
	}
	if !m.populated {
		m.populated = true
		m.initial = len(keys) + deletions
	}
}

func (m *fifoFuzzDeltaModel) resync() {
	for _, k := range slices.Sorted(maps.Keys(m.store.objs)) {
		if len(m.items[k]) == 0 {
			m.push(fifoFuzzDesc{typ: Sync, key: k, val: m.store.objs[k].(*fifoTestItem).Val})
		}
	}
}

func (m *fifoFuzzDeltaModel) pop() ([]fifoFuzzDesc, bool) {
	k := m.order[0]
	m.order = m.order[1:]
	ds := m.items[k]
	delete(m.items, k)
	return ds, !m.synced()
}

func (m *fifoFuzzDeltaModel) processed() {
	if m.initial > 0 {
		m.initial--
	}
}

func FuzzRealFIFO(f *testing.F) {
	for _, seed := range fifoFuzzSeeds {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, atomic bool) {
		src := newFIFOFuzzSource(t)
		opts := RealFIFOOptions{AtomicEvents: atomic, EmitDeltaTypeBookmark: atomic, UnlockWhileProcessing: atomic}
		if !atomic {
			opts.KnownObjects = src.store
		}
		q := NewRealFIFOWithOptions(opts)
		q.batchSize = 3
		m := &fifoFuzzRealModel{atomic: atomic, store: src.store, batchSize: q.batchSize}
		pop := func(batch bool) {
			if len(m.queue) == 0 {
				return
			}
			want, wantInitial := m.take(batch)
			var got []fifoFuzzDesc
			var gotInitial bool
			record := func(ds []Delta, isInInitialList bool) {
				for _, d := range ds {
					got = append(got, fifoFuzzDescOf(d))
					src.apply(d)
				}
				gotInitial = isInInitialList
			}
			var err error
			if batch {
				err = q.PopBatch(func(ds []Delta, init bool) error {
					if len(ds) < 2 {
						t.Fatalf("processBatch got %d deltas", len(ds))
					}
					record(ds, init)
					return nil
				}, func(obj interface{}, init bool) error { record(obj.(Deltas), init); return nil })
			} else {
				_, err = q.Pop(func(obj interface{}, init bool) error { record(obj.(Deltas), init); return nil })
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || gotInitial != wantInitial {
				t.Fatalf("popped %v (initial %v), model says %v (initial %v)", got, gotInitial, want, wantInitial)
			}
			m.processed(len(want))
		}
		for _, op := range fifoFuzzOps(data) {
			var err error
			switch op.kind {
			case fifoFuzzReplace:
				if atomic && op.alt {
					m.push(fifoFuzzDesc{typ: Bookmark, list: fmt.Sprint(BookmarkInfo{ResourceVersion: "b"})})
					if err := q.Bookmark("b"); err != nil {
						t.Fatal(err)
					}
				}
				list := src.list()
				m.replace(list)
				err = q.Replace(list, "")
			case fifoFuzzResync:
				m.resync()
				err = q.Resync()
			case fifoFuzzPop:
				pop(op.alt)
			default:
				var changed bool
				if changed, err = fifoFuzzSourceStep(src, op, q); changed {
					m.watchEvent(op.kind, op.key, src.next)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := q.HasSynced(), m.synced(); got != want {
				t.Fatalf("after %v: HasSynced = %v, model says %v", op, got, want)
			}
		}
		list := src.list()
		m.replace(list)
		if err := q.Replace(list, ""); err != nil {
			t.Fatal(err)
		}
		for len(m.queue) > 0 {
			pop(true)
		}
		src.checkConverged()
		if !q.HasSynced() {
			t.Fatal("not synced after draining a replace")
		}
	})
}

// fifoFuzzRealModel is RealFIFO reduced to a slice.
type fifoFuzzRealModel struct {
	atomic    bool
	batchSize int
	queue     []fifoFuzzDesc
	store     *fifoTestKnown
	populated bool
	initial   int
}

func (m *fifoFuzzRealModel) synced() bool { return m.populated && m.initial == 0 }

func (m *fifoFuzzRealModel) push(d fifoFuzzDesc) { m.queue = append(m.queue, d) }

func (m *fifoFuzzRealModel) watchEvent(kind byte, key string, val int) {
	m.populated = true
	typ := map[byte]DeltaType{fifoFuzzAdd: Added, fifoFuzzUpdate: Updated, fifoFuzzDelete: Deleted}[kind]
	m.push(fifoFuzzDesc{typ: typ, key: key, val: val})
}

func (m *fifoFuzzRealModel) replace(list []interface{}) {
	if m.atomic {
		m.push(fifoFuzzDesc{typ: ReplacedAll, list: fifoFuzzListString(list)})
	} else {
		keys := map[string]bool{}
		for _, o := range list {
			keys[o.(*fifoTestItem).Name] = true
		}
		last := map[string]fifoFuzzDesc{}
		var order []string
		for _, d := range m.queue {
			if _, seen := last[d.key]; !seen {
				order = append(order, d.key)
			}
			last[d.key] = d
		}
		for _, k := range order {
			if !keys[k] && last[k].typ != Deleted {
				m.push(fifoFuzzDesc{typ: Deleted, key: k, val: last[k].val, tomb: true})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(m.store.objs)) {
			if _, queued := last[k]; !keys[k] && !queued {
				m.push(fifoFuzzDesc{typ: Deleted, key: k, val: m.store.objs[k].(*fifoTestItem).Val, tomb: true})
			}
		}
		for _, o := range list {
			item := o.(*fifoTestItem)
			m.push(fifoFuzzDesc{typ: Replaced, key: item.Name, val: item.Val})
		}
	}
	if !m.populated {
		m.populated = true
		m.initial = len(m.queue)
	}
}

func (m *fifoFuzzRealModel) resync() {
	if m.atomic {
		m.push(fifoFuzzDesc{typ: SyncAll, list: fmt.Sprint(SyncAllInfo{})})
		return
	}
	queued := map[string]bool{}
	for _, d := range m.queue {
		queued[d.key] = true
	}
	keys := make([]string, 0, len(m.store.objs))
	for k := range m.store.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !queued[k] {
			m.push(fifoFuzzDesc{typ: Sync, key: k, val: m.store.objs[k].(*fifoTestItem).Val})
		}
	}
}

// take removes what one Pop (or PopBatch) hands out.
func (m *fifoFuzzRealModel) take(batch bool) ([]fifoFuzzDesc, bool) {
	n := 1
	if batch && m.queue[0].list == "" {
		limit := min(len(m.queue), m.batchSize)
		if m.initial > 0 {
			limit = min(limit, m.initial)
		}
		seen := map[string]bool{}
		for n = 0; n < limit && m.queue[n].list == "" && !seen[m.queue[n].key]; n++ {
			seen[m.queue[n].key] = true
		}
	}
	out := slices.Clone(m.queue[:n])
	m.queue = m.queue[n:]
	return out, !m.synced()
}

func (m *fifoFuzzRealModel) processed(n int) {
	if m.initial > 0 {
		m.initial = max(0, m.initial-n)
	}
}

// TestFIFOFuzzSeedsExerciseTombstones keeps the fuzz seeds honest: replaying them must deliver
// at least one tombstone, so the fuzz targets start from inputs that reach the relist paths.
func TestFIFOFuzzSeedsExerciseTombstones(t *testing.T) {
	src := newFIFOFuzzSource(t)
	q := NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: src.store})
	tombstones := 0
	for _, seed := range fifoFuzzSeeds {
		for _, op := range fifoFuzzOps(seed) {
			var err error
			switch op.kind {
			case fifoFuzzReplace:
				err = q.Replace(src.list(), "")
			case fifoFuzzResync:
				err = q.Resync()
			case fifoFuzzPop:
				continue
			default:
				_, err = fifoFuzzSourceStep(src, op, q)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	q.Close()
	for {
		_, err := q.Pop(func(obj interface{}, _ bool) error {
			d := obj.(Deltas)[0]
			if fifoFuzzDescOf(d).tomb {
				tombstones++
			}
			src.apply(d)
			return nil
		})
		if errors.Is(err, ErrFIFOClosed) {
			break
		}
	}
	if tombstones == 0 {
		t.Fatal("the seeds never produce a tombstone")
	}
}
