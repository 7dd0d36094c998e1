package cache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
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

// index maps each indexed value to the slots of the objects that have it: their positions in
// the store's slot slices (see storeState). Slots rather than keys make a lookup by index read
// the objects straight from the slot slices, without a key lookup per object, and an entry
// costs 4 bytes instead of a 16-byte string header; the store moves an object's entries when
// the object changes slot.
type index map[string]slotSet

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
}

// newIndexerSet returns the set holding indexers, in sorted name order. Nil functions are
// rejected.
func newIndexerSet(indexers Indexers) (*indexerSet, error) {
	s := &indexerSet{pos: make(map[string]int, len(indexers))}
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
		names: make([]string, 0, n),
		funcs: make([]IndexFunc, 0, n),
		pos:   make(map[string]int, n),
	}
	out.names = append(out.names, s.names...)
	out.funcs = append(out.funcs, s.funcs...)
	for _, name := range sets.List(sets.KeySet(added)) {
		out.names = append(out.names, name)
		out.funcs = append(out.funcs, added[name])
	}
	for i, name := range out.names {
		out.pos[name] = i
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

// insert records that the object in slot has indexValue.
func (idx index) insert(indexValue string, slot int) {
	set := idx[indexValue]
	if set == nil {
		set = slotSet{}
		idx[indexValue] = set
	}
	set[int32(slot)] = struct{}{}
}

// remove forgets that the object in slot has indexValue. A value left without slots is
// dropped, so short-lived values do not accumulate empty sets (kubernetes issue 84959).
func (idx index) remove(indexValue string, slot int) {
	set := idx[indexValue]
	if set == nil {
		return
	}
	delete(set, int32(slot))
	if len(set) == 0 {
		delete(idx, indexValue)
	}
}

// moveIndexEntries moves the entries of the object in slot in indices from the values old to
// the values next (either may be nil). An index whose values did not change is not touched, the
// common case of an update that keeps the object's namespace, labels and so on.
func moveIndexEntries(indices []index, slot int, old, next [][]string) {
	for i, idx := range indices {
		o, n := indexValuesAt(old, i), indexValuesAt(next, i)
		if sameValues(o, n) {
			continue
		}
		for _, v := range o {
			idx.remove(v, slot)
		}
		for _, v := range n {
			idx.insert(v, slot)
		}
	}
}

// moveSlot moves the entries of the object with values vals from slot from to slot to.
func moveSlot(indices []index, from, to int, vals [][]string) {
	for i, idx := range indices {
		for _, v := range indexValuesAt(vals, i) {
			if set := idx[v]; set != nil {
				delete(set, int32(from))
				set[int32(to)] = struct{}{}
			}
		}
	}
}
