package cache

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Indexer is a Store that also keeps named secondary indices. Each index maps the values an
// IndexFunc computes for an object (e.g. its namespace) to the keys of the objects that have
// them.
type Indexer interface {
	Store
	// Index returns the stored objects that share at least one value of the named index with
	// obj.
	Index(indexName string, obj interface{}) ([]interface{}, error)
	// IndexKeys returns, sorted, the keys of the stored objects whose values for the named
	// index include indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value that the named index currently holds.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the stored objects whose values for the named index include
	// indexedValue, in no particular order.
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
	// GetIndexers returns the index functions by name.
	GetIndexers() Indexers
	// AddIndexers adds index functions; objects already stored are indexed at once. A name
	// that is already in use is an error.
	AddIndexers(newIndexers Indexers) error
}

// IndexFunc computes the values an object is indexed under. An object may have no value, one, or
// several.
type IndexFunc func(obj interface{}) ([]string, error)

// IndexFuncToKeyFuncAdapter turns an IndexFunc that yields exactly one value into a KeyFunc.
// Any other number of values is an error.
func IndexFuncToKeyFuncAdapter(indexFunc IndexFunc) KeyFunc {
	return func(obj interface{}) (string, error) {
		values, err := indexFunc(obj)
		if err != nil {
			return "", err
		}
		switch len(values) {
		case 1:
			return values[0], nil
		case 0:
			return "", fmt.Errorf("unexpected empty indexKeys")
		default:
			return "", fmt.Errorf("too many keys: %v", values)
		}
	}
}

// NamespaceIndex is the conventional name of the index built by MetaNamespaceIndexFunc.
const NamespaceIndex string = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace. For an object without metadata it
// returns [""] together with an error.
func MetaNamespaceIndexFunc(obj interface{}) ([]string, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return []string{""}, fmt.Errorf("object has no meta: %w", err)
	}
	return []string{accessor.GetNamespace()}, nil
}

// index maps each indexed value to its posting: the slots of the objects that have it, their
// positions in the store's slot slices (see storeState). Slots rather than keys make a lookup
// by index read the objects straight from the slot slices, without a key lookup per object, and
// an entry costs 4 bytes instead of a 16-byte string header; the store moves an object's
// entries when the object changes slot.
type index map[string]*posting

// posting is one value of an index and the objects that have it.
type posting struct {
	// value holds exactly the value. It is the cached value list of every object indexed
	// under this value alone (their cells point to it), so it is never written to.
	value []string
	slots slotSet
}

// slotSet is a set of slots.
type slotSet map[int32]struct{}

// Indexers maps index names to the functions that compute them.
type Indexers map[string]IndexFunc

// Indices maps index names to their contents.
type Indices map[string]index

// errIndexNotFound is client-go's error for an index name no IndexFunc was registered under.
// The text is kept as client-go has it because callers match on it.
func errIndexNotFound(indexName string) error {
	return fmt.Errorf("Index with name %s does not exist", indexName)
}

// indexerSet is an immutable snapshot of a store's index functions. Positions are stable: a
// store keeps, for every object, the values computed by funcs[i] at position i of its cached
// values, and AddIndexers only ever appends.
type indexerSet struct {
	names []string
	funcs []IndexFunc
	pos   map[string]int
	// metaNamespaceIndex is true when NamespaceIndex is MetaNamespaceIndexFunc, so that
	// ListAllByNamespace may look a namespace up directly.
	metaNamespaceIndex bool
	// isNamespace[i] is true when funcs[i] is MetaNamespaceIndexFunc: valuesInto then reads
	// the namespace itself and returns namespaces' shared one-value lists, so that writing
	// an object allocates no list for its namespace.
	isNamespace []bool
	namespaces  *namespaceLists
}

// namespaceLists hands out one shared, never written, one-value list per namespace, for at
// most maxNamespaceLists namespaces (then fresh lists).
type namespaceLists struct {
	mu    sync.RWMutex
	lists map[string][]string
}

// maxNamespaceLists bounds namespaceLists: namespaces come and go, and a list kept for one
// that is gone costs about 60 bytes.
const maxNamespaceLists = 4096

// get returns a list holding exactly ns.
func (l *namespaceLists) get(ns string) []string {
	l.mu.RLock()
	v, ok := l.lists[ns]
	l.mu.RUnlock()
	if ok {
		return v
	}
	v = []string{ns}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.lists[ns]; ok {
		return cur
	}
	if len(l.lists) < maxNamespaceLists {
		l.lists[ns] = v
	}
	return v
}

// newIndexerSet returns the set holding indexers, in sorted name order. Nil functions are
// rejected.
func newIndexerSet(indexers Indexers) (*indexerSet, error) {
	s := &indexerSet{pos: make(map[string]int, len(indexers)), namespaces: &namespaceLists{lists: map[string][]string{}}}
	return s.with(indexers)
}

// with returns a new set holding s's functions followed by added's (sorted by name). It fails
// with client-go's "indexer conflict" error when a name is already in s, and for a nil
// function. s is not modified.
func (s *indexerSet) with(added Indexers) (*indexerSet, error) {
	conflict := sets.New[string]()
	var nilFuncs []string
	for name, f := range added {
		if _, ok := s.pos[name]; ok {
			conflict.Insert(name)
		}
		if f == nil {
			nilFuncs = append(nilFuncs, name)
		}
	}
	if conflict.Len() > 0 {
		return nil, fmt.Errorf("indexer conflict: %v", conflict)
	}
	if len(nilFuncs) > 0 {
		return nil, fmt.Errorf("cache: nil IndexFunc for indices %q", sets.List(sets.New(nilFuncs...)))
	}
	n := len(s.names) + len(added)
	out := &indexerSet{
		names:       make([]string, 0, n),
		funcs:       make([]IndexFunc, 0, n),
		pos:         make(map[string]int, n),
		isNamespace: make([]bool, n),
		namespaces:  s.namespaces,
	}
	out.names = append(out.names, s.names...)
	out.funcs = append(out.funcs, s.funcs...)
	for _, name := range sets.List(sets.KeySet(added)) {
		out.names = append(out.names, name)
		out.funcs = append(out.funcs, added[name])
	}
	for i, name := range out.names {
		out.pos[name] = i
		out.isNamespace[i] = isMetaNamespaceIndexFunc(out.funcs[i])
	}
	if i, ok := out.pos[NamespaceIndex]; ok {
		out.metaNamespaceIndex = isMetaNamespaceIndexFunc(out.funcs[i])
	}
	return out, nil
}

// indexers returns a fresh Indexers map with every function of the set.
func (s *indexerSet) indexers() Indexers {
	out := make(Indexers, len(s.names))
	for i, name := range s.names {
		out[name] = s.funcs[i]
	}
	return out
}

// values computes the index values of obj for every function of the set, starting at position
// from (earlier positions are left nil). A nil obj has no values. It calls user code and must
// not run under a store lock when that can be avoided. The error names the key and the index.
func (s *indexerSet) values(key string, obj interface{}, from int) ([][]string, error) {
	if obj == nil || len(s.funcs) == from {
		return nil, nil
	}
	vals := make([][]string, len(s.funcs))
	if err := s.valuesInto(key, obj, from, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// valuesInto is values writing into dst, which has one element per function of the set.
func (s *indexerSet) valuesInto(key string, obj interface{}, from int, dst [][]string) error {
	for i := from; i < len(s.funcs); i++ {
		if s.isNamespace[i] {
			// MetaNamespaceIndexFunc's values, without its allocation; an object without
			// metadata goes to the function for its error.
			if m, ok := obj.(metav1.Object); ok {
				dst[i] = s.namespaces.get(m.GetNamespace())
				continue
			}
		}
		v, err := s.funcs[i](obj)
		if err != nil {
			return fmt.Errorf("cache: unable to calculate an index entry for key %q on index %q: %w", key, s.names[i], err)
		}
		dst[i] = v
	}
	return nil
}

// indexValuesAt returns vals[i], or nil when vals holds fewer positions (an object stored
// before an indexer existed, or a nil object).
func indexValuesAt(vals [][]string, i int) []string {
	if i < len(vals) {
		return vals[i]
	}
	return nil
}

// sameValues reports whether a and b hold the same values in the same order.
func sameValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// slotsOf returns the slots of the objects indexed under value (nil for none).
func (idx index) slotsOf(value string) slotSet {
	if p := idx[value]; p != nil {
		return p.slots
	}
	return nil
}

// insertAll records that the object in slot has the values vs and returns the cell to cache
// them in: nil for none, the posting's list for one value, a pointer to vs for several. vs is
// kept, never written to.
func (idx index) insertAll(vs []string, slot int) *[]string {
	switch len(vs) {
	case 0:
		return nil
	case 1:
		return &idx.insert(vs[:1:1], slot).value
	}
	for j := range vs {
		idx.insert(vs[j:j+1:j+1], slot)
	}
	// A new header, not &vs: taking vs's address would move it to the heap on every call.
	cell := new([]string)
	*cell = vs
	return cell
}

// insert records that the object in slot has the value value[0], and returns its posting. A
// new posting keeps value as its list.
func (idx index) insert(value []string, slot int) *posting {
	p := idx[value[0]]
	if p == nil {
		p = &posting{value: value, slots: slotSet{}}
		idx[value[0]] = p
	}
	p.slots[int32(slot)] = struct{}{}
	return p
}

// remove forgets that the object in slot has indexValue. A value left without slots is
// dropped, so short-lived values do not accumulate empty sets (kubernetes/kubernetes#84959).
func (idx index) remove(indexValue string, slot int) {
	p := idx[indexValue]
	if p == nil {
		return
	}
	delete(p.slots, int32(slot))
	if len(p.slots) == 0 {
		delete(idx, indexValue)
	}
}

// moveSlot moves the entries of the object with cached values cells from slot from to slot to.
func moveSlot(indices []index, from, to int, cells []*[]string) {
	for i, idx := range indices {
		for _, v := range cellValues(cells[i]) {
			if p := idx[v]; p != nil {
				delete(p.slots, int32(from))
				p.slots[int32(to)] = struct{}{}
			}
		}
	}
}
