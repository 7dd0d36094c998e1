package workqueue

import "github.com/kcache/cache/internal/heap"

// waitingSet holds the items of a delaying queue that are not due yet, each with its due time
// (nanoseconds on the queue's own time line). It has no lock, goroutine or clock: the delaying
// queue guards it and tells it the time.
//
// It is a heap of (due, item) values plus a map from item to its current due time. Moving an
// item earlier pushes a second slot instead of fixing the old one in place; the old slot goes
// stale and is skipped when it comes out. So the heap needs no per-item index, and slots are
// plain values (no allocation per item, nothing for the garbage collector to follow when T
// holds no pointers).
type waitingSet[T comparable] struct {
	heap *heap.Heap[T] // items keyed by due time; heap.Len() - len(due) slots are stale
	due  map[T]int64
	peak int // largest len(due) since due was last allocated
}

func newWaitingSet[T comparable]() *waitingSet[T] {
	return &waitingSet[T]{
		heap: heap.New[T](nil, nil),
		due:  make(map[T]int64),
	}
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
	i := w.heap.Push(due, item)
	if w.heap.Len() > 2*len(w.due)+shrinkThreshold {
		w.heap.Filter(w.live) // drop the stale slots
		return true           // conservative: the heap was rebuilt
	}
	return i == 0
}

// live reports whether item due at due is the item's current slot, not a stale one.
func (w *waitingSet[T]) live(due int64, item T) bool {
	cur, ok := w.due[item]
	return ok && cur == due
}

// next returns the earliest due time, if any item waits.
func (w *waitingSet[T]) next() (int64, bool) {
	for {
		due, item, ok := w.heap.Peek()
		if !ok {
			return 0, false
		}
		if w.live(due, item) {
			return due, true
		}
		w.heap.Pop() // stale
	}
}

// popDue appends to out the items due at or before now, earliest first, up to limit items in
// all, and removes them from the set.
func (w *waitingSet[T]) popDue(now int64, out []T, limit int) []T {
	for len(out) < limit {
		due, item, ok := w.heap.Peek()
		if !ok || due > now {
			break
		}
		w.heap.Pop()
		if w.live(due, item) {
			delete(w.due, item)
			out = append(out, item)
		}
	}
	if len(w.due) == 0 && w.peak > shrinkThreshold {
		// Go maps keep their size after deletes: give a burst's memory back.
		w.due = make(map[T]int64)
		w.peak = 0
	}
	return out
}
