package heap

// Keyed is a Heap of values ordered by a less function and keyed by K: each key appears at
// most once, and a value can be replaced, removed or looked up by key. The zero value is not usable; create one with
// NewKeyed.
type Keyed[K comparable, V any] struct {
	heap *Heap[entry[K, V]]
	// pos maps each key to its index in heap.
	pos map[K]int
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// NewKeyed returns an empty keyed heap ordered by less: Pop returns a value v such that
// less(w, v) is false for every other value w.
func NewKeyed[K comparable, V any](less func(a, b V) bool) *Keyed[K, V] {
	h := &Keyed[K, V]{pos: map[K]int{}}
	h.heap = New(func(a, b entry[K, V]) bool { return less(a.val, b.val) },
		func(e entry[K, V], i int) { h.pos[e.key] = i })
	return h
}

// Len returns the number of values. O(1).
func (h *Keyed[K, V]) Len() int {
	return h.heap.Len()
}

// Get returns the value stored under key. O(1).
func (h *Keyed[K, V]) Get(key K) (V, bool) {
	if i, ok := h.pos[key]; ok {
		_, e := h.heap.At(i)
		return e.val, true
	}
	var zero V
	return zero, false
}

// Set stores val under key, replacing (and re-ordering) any value already there. O(log n).
func (h *Keyed[K, V]) Set(key K, val V) {
	if i, ok := h.pos[key]; ok {
		h.heap.Replace(i, 0, entry[K, V]{key, val})
		return
	}
	h.heap.Push(0, entry[K, V]{key, val})
}

// Remove deletes key and reports whether it was present. O(log n).
func (h *Keyed[K, V]) Remove(key K) (V, bool) {
	i, ok := h.pos[key]
	if !ok {
		var zero V
		return zero, false
	}
	delete(h.pos, key)
	_, e := h.heap.Remove(i)
	return e.val, true
}

// Peek returns the smallest value without removing it. O(1).
func (h *Keyed[K, V]) Peek() (K, V, bool) {
	_, e, ok := h.heap.Peek()
	return e.key, e.val, ok
}

// Pop removes and returns the smallest value. O(log n).
func (h *Keyed[K, V]) Pop() (K, V, bool) {
	if h.heap.Len() == 0 {
		var k K
		var v V
		return k, v, false
	}
	_, e := h.heap.Pop()
	delete(h.pos, e.key)
	return e.key, e.val, true
}

// Each calls fn for every key and value, in no particular order. fn must not change the heap.
func (h *Keyed[K, V]) Each(fn func(K, V)) {
	for i := range h.heap.Len() {
		_, e := h.heap.At(i)
		fn(e.key, e.val)
	}
}
