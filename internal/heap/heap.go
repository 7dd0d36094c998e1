// Package heap is a generic binary min-heap: Heap, the one heap algorithm of this module, and
// Keyed, a Heap whose values are looked up, replaced and removed by a map key.
//
// Neither has locks, goroutines or a clock; callers that share one between goroutines guard it
// themselves.
package heap

// shrinkThreshold is the capacity up to which a Heap never gives its backing array back.
const shrinkThreshold = 1024

// Heap is a binary min-heap of values of type T, each pushed with an int64 key. Values are
// ordered by key, and values with equal keys by a less function (none: in no particular
// order). Keys are compared in place, so a heap ordered by a time or a number pays no function
// call per comparison; a heap ordered by something else gives every value the same key and
// orders them by less alone. Push, Pop, Remove, Replace and Fix are O(log n), Peek and At O(1).
//
// Its backing array doubles as it fills and shrinks as it drains (to a quarter once less than a
// sixteenth is used, and to 1024 slots once empty), so a burst neither copies its values many
// times nor pins its memory afterwards; popped and removed slots are cleared.
//
// A caller that removes or changes values in place gives New a moved function, which the Heap
// calls with a value's new index whenever it puts the value in a slot.
//
// The zero value is not usable; create one with New.
type Heap[T any] struct {
	items []slot[T]
	less  func(a, b T) bool // nil: equal keys are not ordered
	moved func(v T, i int)  // nil: no one tracks indices
}

type slot[T any] struct {
	key int64
	v   T
}

// New returns an empty heap that orders values by key, then by less (if not nil): Pop
// returns a value with the smallest key, and of those one that no other is less than. moved,
// if not nil, is told each value's index as it changes.
func New[T any](less func(a, b T) bool, moved func(v T, i int)) *Heap[T] {
	return &Heap[T]{less: less, moved: moved}
}

// Len returns the number of values. O(1).
func (h *Heap[T]) Len() int { return len(h.items) }

// Cap returns the number of slots allocated. O(1).
func (h *Heap[T]) Cap() int { return cap(h.items) }

// At returns the key and value at index i, 0 <= i < Len(): index 0 holds the smallest, the
// others are in no particular order. O(1).
func (h *Heap[T]) At(i int) (int64, T) { return h.items[i].key, h.items[i].v }

// Peek returns the smallest value and its key without removing it; ok is false if the heap is
// empty. O(1).
func (h *Heap[T]) Peek() (key int64, v T, ok bool) {
	if len(h.items) == 0 {
		return 0, v, false
	}
	return h.items[0].key, h.items[0].v, true
}

// Push adds v with key and returns the index it ends at: 0 if it is the new smallest value.
// O(log n).
func (h *Heap[T]) Push(key int64, v T) int {
	if len(h.items) == cap(h.items) {
		// Double: append grows large slices by only 1.25x, copying five times the final size
		// over a burst instead of two.
		grown := make([]slot[T], len(h.items), max(2*cap(h.items), 64))
		copy(grown, h.items)
		h.items = grown
	}
	h.items = append(h.items, slot[T]{key, v})
	return h.up(len(h.items) - 1)
}

// Pop removes and returns the smallest value and its key; the heap must not be empty.
// O(log n).
func (h *Heap[T]) Pop() (int64, T) {
	return h.Remove(0)
}

// Remove removes and returns the value at index i, 0 <= i < Len(), and its key. O(log n).
func (h *Heap[T]) Remove(i int) (int64, T) {
	s := h.items[i]
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
	}
	h.items[last] = slot[T]{}
	h.items = h.items[:last]
	if c := shrinkCap(len(h.items), cap(h.items)); c > 0 {
		h.items = append(make([]slot[T], 0, c), h.items...)
	}
	if i != last {
		h.Fix(i)
	}
	return s.key, s.v
}

// Replace puts v with key at index i, 0 <= i < Len(), in place of the value there, and
// restores the order. O(log n).
func (h *Heap[T]) Replace(i int, key int64, v T) {
	h.items[i] = slot[T]{key, v}
	h.Fix(i)
}

// Fix restores the order after the value at index i changed (its order under less). O(log n).
func (h *Heap[T]) Fix(i int) {
	if j := h.down(i); j == i {
		h.up(i)
	}
}

// Filter keeps the values for which keep returns true, drops the others and restores the
// order. O(n).
func (h *Heap[T]) Filter(keep func(key int64, v T) bool) {
	kept := h.items[:0]
	for _, s := range h.items {
		if keep(s.key, s.v) {
			kept = append(kept, s)
		}
	}
	clear(h.items[len(kept):])
	h.items = kept
	for i := len(kept)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	if h.moved != nil {
		for i, s := range h.items {
			h.moved(s.v, i)
		}
	}
}

// Clear removes every value, keeping the backing array. O(n).
func (h *Heap[T]) Clear() {
	clear(h.items)
	h.items = h.items[:0]
}

// before reports whether a goes before b.
func (h *Heap[T]) before(a, b *slot[T]) bool {
	if a.key != b.key || h.less == nil {
		return a.key < b.key
	}
	return h.less(a.v, b.v)
}

// up moves the value at i towards the root and returns where it ends.
func (h *Heap[T]) up(i int) int {
	if h.less == nil && h.moved == nil {
		return h.upByKey(i)
	}
	items := h.items
	s := items[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !h.before(&s, &items[parent]) {
			break
		}
		h.place(items[parent], i)
		i = parent
	}
	h.place(s, i)
	return i
}

// down moves the value at i towards the leaves and returns where it ends.
func (h *Heap[T]) down(i int) int {
	if h.less == nil && h.moved == nil {
		return h.downByKey(i)
	}
	items := h.items
	s := items[i]
	n := len(items)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && h.before(&items[right], &items[child]) {
			child = right
		}
		if !h.before(&items[child], &s) {
			break
		}
		h.place(items[child], i)
		i = child
	}
	h.place(s, i)
	return i
}

// upByKey is up for a heap ordered by key alone whose indices no one tracks: the comparisons
// and moves of a heap of due times (a delaying queue's) with no call per step.
func (h *Heap[T]) upByKey(i int) int {
	items := h.items
	s := items[i]
	for i > 0 {
		parent := (i - 1) / 2
		if items[parent].key <= s.key {
			break
		}
		items[i] = items[parent]
		i = parent
	}
	items[i] = s
	return i
}

// downByKey is down for a heap ordered by key alone whose indices no one tracks.
func (h *Heap[T]) downByKey(i int) int {
	items := h.items
	s := items[i]
	n := len(items)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && items[right].key < items[child].key {
			child = right
		}
		if s.key <= items[child].key {
			break
		}
		items[i] = items[child]
		i = child
	}
	items[i] = s
	return i
}

// place puts s at index i and tells moved.
func (h *Heap[T]) place(s slot[T], i int) {
	h.items[i] = s
	if h.moved != nil {
		h.moved(s.v, i)
	}
}

// shrinkCap returns the capacity a backing array of capacity c holding n values should shrink
// to, or 0 to keep it. It shrinks to a quarter once less than a sixteenth is used, and to
// shrinkThreshold once empty: memory stays within 16 times what is held (or shrinkThreshold),
// and draining a burst reallocates only about a third of the array.
func shrinkCap(n, c int) int {
	switch {
	case c <= shrinkThreshold:
		return 0
	case n == 0:
		return shrinkThreshold
	case n < c/16:
		return max(c/4, shrinkThreshold)
	}
	return 0
}
