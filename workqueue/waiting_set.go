package workqueue

// waitingSet holds the items of a delaying queue that are not due yet, each with its due time
// (nanoseconds on the queue's own time line). It has no lock, goroutine or clock: the delaying
// queue guards it and tells it the time.
//
// It is a binary min-heap of (due, item) values plus a map from item to its current due time.
// Moving an item earlier pushes a second slot instead of fixing the old one in place; the old
// slot goes stale and is skipped when it comes out. So the heap needs no per-item index, slots
// are plain values (no allocation per item, nothing for the garbage collector to follow when
// T holds no pointers), and sifting only compares int64s in one array.
type waitingSet[T comparable] struct {
	heap []waitSlot[T] // len(heap) - len(due) slots are stale
	due  map[T]int64
	peak int // largest len(due) since due was last allocated
}

// waitSlot is one heap entry.
type waitSlot[T any] struct {
	due  int64
	item T
}

func newWaitingSet[T comparable]() *waitingSet[T] {
	return &waitingSet[T]{due: make(map[T]int64)}
}

// len returns the number of waiting items.
func (w *waitingSet[T]) len() int { return len(w.due) }

// add makes item due at due, or at its current due time if that is earlier. It reports
// whether the earliest due time of the set changed. O(log n).
func (w *waitingSet[T]) add(item T, due int64) (newHead bool) {
	if cur, ok := w.due[item]; ok {
		if due >= cur {
			return false
		}
	}
	w.due[item] = due
	w.peak = max(w.peak, len(w.due))
	if len(w.heap) == cap(w.heap) {
		// Double: append grows large slices by only 1.25x, copying five times the final
		// size over a burst instead of two.
		grown := make([]waitSlot[T], len(w.heap), max(2*cap(w.heap), 64))
		copy(grown, w.heap)
		w.heap = grown
	}
	w.heap = append(w.heap, waitSlot[T]{due: due, item: item})
	i := w.up(len(w.heap) - 1)
	if len(w.heap) > 2*len(w.due)+shrinkThreshold {
		w.compact()
		return true // conservative: the heap was rebuilt
	}
	return i == 0
}

// next returns the earliest due time, if any item waits.
func (w *waitingSet[T]) next() (int64, bool) {
	for len(w.heap) > 0 {
		s := w.heap[0]
		if cur, ok := w.due[s.item]; ok && cur == s.due {
			return s.due, true
		}
		w.pop() // stale
	}
	return 0, false
}

// popDue appends to out the items due at or before now, earliest first, up to limit items in
// all, and removes them from the set.
func (w *waitingSet[T]) popDue(now int64, out []T, limit int) []T {
	for len(w.heap) > 0 && w.heap[0].due <= now && len(out) < limit {
		s := w.pop()
		if cur, ok := w.due[s.item]; ok && cur == s.due {
			delete(w.due, s.item)
			out = append(out, s.item)
		}
	}
	if len(w.due) == 0 && w.peak > shrinkThreshold {
		// Go maps keep their size after deletes: give a burst's memory back.
		w.due = make(map[T]int64)
		w.peak = 0
	}
	return out
}

// compact drops the stale slots and rebuilds the heap. O(n).
func (w *waitingSet[T]) compact() {
	kept := w.heap[:0]
	for _, s := range w.heap {
		if cur, ok := w.due[s.item]; ok && cur == s.due {
			kept = append(kept, s)
		}
	}
	clear(w.heap[len(kept):])
	w.heap = kept
	for i := len(kept)/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}

// pop removes and returns the earliest slot; the heap must not be empty. The backing array
// shrinks as shrinkCap says.
func (w *waitingSet[T]) pop() waitSlot[T] {
	h := w.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = waitSlot[T]{}
	h = h[:last]
	if c := shrinkCap(len(h), cap(h)); c > 0 {
		h = append(make([]waitSlot[T], 0, c), h...)
	}
	w.heap = h
	if last > 0 {
		w.down(0)
	}
	return top
}

// up moves slot i towards the root and returns where it ends.
func (w *waitingSet[T]) up(i int) int {
	h := w.heap
	s := h[i]
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].due <= s.due {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = s
	return i
}

func (w *waitingSet[T]) down(i int) {
	h := w.heap
	s := h[i]
	n := len(h)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if r := child + 1; r < n && h[r].due < h[child].due {
			child = r
		}
		if s.due <= h[child].due {
			break
		}
		h[i] = h[child]
		i = child
	}
	h[i] = s
}

// shrinkCap returns the capacity a buffer of capacity c holding n items should shrink to, or
// 0 to keep it. A buffer shrinks to a quarter once it is less than 1/16 full, and back to
// shrinkThreshold once empty: memory stays within 16 times what is held (or
// shrinkThreshold), and draining a burst reallocates only about a third of the buffer.
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
