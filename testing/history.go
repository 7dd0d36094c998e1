package testing

import (
	"cmp"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// objKey identifies a stored object. Like client-go's fake, two objects with the same
// namespace and name but different UIDs are different objects.
type objKey struct {
	namespace, name string
	uid             types.UID
}

func compareKeys(a, b objKey) int {
	if c := cmp.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	if c := cmp.Compare(a.name, b.name); c != 0 {
		return c
	}
	return cmp.Compare(a.uid, b.uid)
}

// attrs are the labels and fields of an object that selectors are matched against. They are
// computed once, when the object enters the source, so that no user code (Options.FieldsFunc)
// runs under the source's lock.
type attrs struct {
	labels labels.Set
	fields fields.Set
}

// entry is a stored object with its attrs. Stored objects are deep copies the source owns and
// never modifies, so they may be read without the lock once looked up.
type entry struct {
	obj   runtime.Object
	attrs attrs
}

// change is one recorded change: the object after it (with the change's resource version) and
// the object before it, if there was one.
type change struct {
	typ  watch.EventType // Added, Modified or Deleted
	key  objKey
	rv   int
	cur  entry
	prev *entry // nil if the object did not exist before the change
	// live reports whether the change was sent to the watches open at the time; a dropped
	// change (the *DropWatch methods) is still replayed to later watches.
	live bool
}

// history is the source's deterministic core: the current objects, the changes retained since
// the last compaction, and resource version bookkeeping. It has no lock, no clock and no
// goroutines; FakeControllerSource guards it with its mutex.
type history struct {
	items map[objKey]entry
	// changes[i] has resource version compacted+1+i: every change bumps the version by one.
	changes   []change
	lastRV    int
	compacted int // changes at or below this version are forgotten
	// sorted caches the keys of items in order; nil once an object is added or removed.
	sorted []objKey
}

func newHistory() history {
	return history{items: map[objKey]entry{}}
}

// record applies a change and returns it. cur must already carry resource version lastRV+1.
func (h *history) record(typ watch.EventType, key objKey, cur entry, live bool) change {
	h.lastRV++
	c := change{typ: typ, key: key, rv: h.lastRV, cur: cur, live: live}
	if old, ok := h.items[key]; ok {
		c.prev = &old
	}
	switch typ {
	case watch.Deleted:
		if c.prev != nil {
			delete(h.items, key)
			h.sorted = nil
		}
	default:
		if c.prev == nil {
			h.sorted = nil
		}
		h.items[key] = cur
	}
	h.changes = append(h.changes, c)
	return c
}

// compact forgets the changes at or below rv (clamped to the retained range). Watches and
// exact lists from a forgotten version then fail with Expired.
func (h *history) compact(rv int) {
	rv = min(max(rv, h.compacted), h.lastRV)
	n := rv - h.compacted
	clear(h.changes[:n])
	h.changes = h.changes[n:]
	h.compacted = rv
}

// retained reports whether the state at rv can still be reconstructed and the changes after
// it replayed.
func (h *history) retained(rv int) bool {
	return rv >= h.compacted && rv <= h.lastRV
}

// changesAfter returns the retained changes with a version above rv; rv must be retained.
func (h *history) changesAfter(rv int) []change {
	return h.changes[rv-h.compacted:]
}

// snapshot returns the objects as they were at version rv (which must be retained), with
// their keys in order. At the current version it costs O(1) after the first call following
// an add or delete (O(n log n)); at an older version it costs O(n log n).
func (h *history) snapshot(rv int) ([]objKey, map[objKey]entry) {
	if rv == h.lastRV {
		if h.sorted == nil {
			h.sorted = slices.SortedFunc(maps.Keys(h.items), compareKeys)
		}
		return h.sorted, h.items
	}
	past := maps.Clone(h.items)
	after := h.changesAfter(rv)
	for i := len(after) - 1; i >= 0; i-- {
		c := after[i]
		if c.prev == nil {
			delete(past, c.key)
		} else {
			past[c.key] = *c.prev
		}
	}
	return slices.SortedFunc(maps.Keys(past), compareKeys), past
}

// page is one page of a list: the matching objects after a start key, at most limit of them.
type page struct {
	objs []runtime.Object
	// last is the key of the last object returned when more keys follow it; nil on the last
	// page.
	last *objKey
	// remaining counts the keys after last, whether or not they match.
	remaining int64
}

// listPage returns the objects at version rv whose keys come after start (all of them if
// start is nil) and that match pred, at most limit of them (all if limit <= 0). Like etcd, it
// reports more to come whenever keys remain after the last returned object, even if none of
// them match.
func (h *history) listPage(rv int, start *objKey, limit int64, pred predicate) page {
	keys, objs := h.snapshot(rv)
	i := 0
	if start != nil {
		i, _ = slices.BinarySearchFunc(keys, *start, compareKeys)
		if i < len(keys) && keys[i] == *start {
			i++
		}
	}
	var p page
	if limit > 0 {
		p.objs = make([]runtime.Object, 0, min(int(limit), len(keys)-i))
	}
	for ; i < len(keys); i++ {
		e := objs[keys[i]]
		if !pred.matches(e.attrs) {
			continue
		}
		p.objs = append(p.objs, e.obj)
		if limit > 0 && int64(len(p.objs)) == limit {
			if i+1 < len(keys) {
				last := keys[i]
				p.last = &last
				p.remaining = int64(len(keys) - i - 1)
			}
			break
		}
	}
	return p
}
