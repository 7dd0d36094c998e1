// Package heap is a generic binary min-heap of keyed values: each key appears at most once,
// and a value can be replaced, removed or looked up by key in O(log n) or O(1).
//
// It has no locks, goroutines or clock; callers that share a Keyed between goroutines guard it
// themselves.
package heap

// Keyed is a min-heap of values keyed by K, ordered by a less function. The zero value is not
// usable; create one with New.
type Keyed[K comparable, V any] struct {
	less  func(a, b V) bool
	items []entry[K, V]
	// pos maps each key to its position in items.
	pos map[K]int
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns an empty heap ordered by less: Pop returns a value v such that less(w, v) is
// false for every other value w.
func New[K comparable, V any](less func(a, b V) bool) *Keyed[K, V] {
	return &Keyed[K, V]{less: less, pos: map[K]int{}}
}

// Len returns the number of values. O(1).
func (h *Keyed[K, V]) Len() int {
	return len(h.items)
}

// Get returns the value stored under key. O(1).
func (h *Keyed[K, V]) Get(key K) (V, bool) {
	if i, ok := h.pos[key]; ok {
		return h.items[i].val, true
	}
	var zero V
	return zero, false
}

// Set stores val under key, replacing (and re-ordering) any value already there. O(log n).
func (h *Keyed[K, V]) Set(key K, val V) {
	if i, ok := h.pos[key]; ok {
		h.items[i].val = val
		h.fix(i)
		return
	}
	h.items = append(h.items, entry[K, V]{key, val})
	h.pos[key] = len(h.items) - 1
	h.up(len(h.items) - 1)
}

// Remove deletes key and reports whether it was present. O(log n).
func (h *Keyed[K, V]) Remove(key K) (V, bool) {
	i, ok := h.pos[key]
	if !ok {
		var zero V
		return zero, false
	}
	return h.removeAt(i), true
}

// Peek returns the smallest value without removing it. O(1).
func (h *Keyed[K, V]) Peek() (K, V, bool) {
	if len(h.items) == 0 {
		var k K
		var v V
		return k, v, false
	}
	return h.items[0].key, h.items[0].val, true
}

// Pop removes and returns the smallest value. O(log n).
func (h *Keyed[K, V]) Pop() (K, V, bool) {
	if len(h.items) == 0 {
		var k K
		var v V
		return k, v, false
	}
	k := h.items[0].key
	return k, h.removeAt(0), true
}

// Each calls fn for every key and value, in no particular order. fn must not change the heap.
func (h *Keyed[K, V]) Each(fn func(K, V)) {
	for _, e := range h.items {
		fn(e.key, e.val)
	}
}

func (h *Keyed[K, V]) removeAt(i int) V {
	last := len(h.items) - 1
	removed := h.items[i]
	if i != last {
		h.swap(i, last)
	}
	var zero entry[K, V]
	h.items[last] = zero // let the value be collected
	h.items = h.items[:last]
	delete(h.pos, removed.key)
	if i != last {
		h.fix(i)
	}
	return removed.val
}

// fix restores the heap order after the value at i changed.
func (h *Keyed[K, V]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *Keyed[K, V]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].key] = i
	h.pos[h.items[j].key] = j
}

func (h *Keyed[K, V]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i].val, h.items[parent].val) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down moves the value at i towards the leaves and reports whether it moved.
func (h *Keyed[K, V]) down(i int) bool {
	start := i
	n := len(h.items)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && h.less(h.items[right].val, h.items[child].val) {
			child = right
		}
		if !h.less(h.items[child].val, h.items[i].val) {
			break
		}
		h.swap(i, child)
		i = child
	}
	return i > start
}
