package cache

import (
	"sync"
)

// queueRingFirstCap is the capacity a queueRing allocates for its first element, and
// queueRingMinCap the capacity below which it never shrinks.
const (
	queueRingFirstCap = 4
	queueRingMinCap   = 16
)

// queueRing is the FIFO storage of DeltaFIFO (keys) and RealFIFO (deltas): a growable ring
// buffer. Unlike a slice that is re-sliced from the front, it reuses its storage, clears every
// slot it hands out (so popped objects can be collected), and gives memory back once a burst
// has drained. A queue that grows back within one drain of its last shrink — a backlog that
// comes in waves, as when a steady stream outpaces the consumer — keeps the capacity it grew
// back to from then on, instead of reallocating on every wave. It has no lock; its owner guards
// it.
//
// The zero value is an empty ring. PushBack, PopFront and At are amortised O(1).
type queueRing[T any] struct {
	buf  []T // len(buf) is zero or a power of two
	head int // index in buf of the front element
	n    int // number of elements

	// shrunkFrom is the capacity before the last drain began shrinking the buffer, and
	// popsSinceShrink the pops since; a growth to at most shrunkFrom within shrunkFrom pops
	// raises floor, the capacity the buffer no longer shrinks below, to the new size.
	shrunkFrom      int
	popsSinceShrink int
	floor           int
}

// Len returns the number of queued elements.
func (r *queueRing[T]) Len() int { return r.n }

// At returns the i-th element from the front; 0 <= i < Len().
func (r *queueRing[T]) At(i int) T {
	return r.buf[(r.head+i)&(len(r.buf)-1)]
}

// PushBack appends v.
func (r *queueRing[T]) PushBack(v T) {
	if r.n == len(r.buf) {
		size := max(queueRingFirstCap, 2*len(r.buf))
		if size <= r.shrunkFrom && r.popsSinceShrink < r.shrunkFrom {
			r.floor = max(r.floor, size)
		}
		r.resize(size)
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// PopFront removes and returns the front element; Len() must be positive.
func (r *queueRing[T]) PopFront() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.popsSinceShrink++
	if r.n == 0 {
		r.head = 0
	}
	// Shrink once three quarters are unused, so that a drained burst does not pin memory;
	// halving at a quarter keeps the amortised cost of PushBack/PopFront constant.
	if len(r.buf) > max(queueRingMinCap, r.floor) && r.n <= len(r.buf)/4 {
		// A drain halves the buffer several times; remember the capacity it started from.
		if len(r.buf) > r.shrunkFrom || r.popsSinceShrink >= r.shrunkFrom {
			r.shrunkFrom, r.popsSinceShrink = len(r.buf), 0
		}
		r.resize(len(r.buf) / 2)
	}
	return v
}

// resize moves the elements, front first, into a buffer of capacity c >= r.n.
func (r *queueRing[T]) resize(c int) {
	buf := make([]T, c)
	if r.n > 0 {
		end := r.head + r.n
		if end <= len(r.buf) {
			copy(buf, r.buf[r.head:end])
		} else {
			k := copy(buf, r.buf[r.head:])
			copy(buf[k:], r.buf[:end-len(r.buf)])
		}
	}
	r.buf = buf
	r.head = 0
}

// popWaker lets a consumer blocked on an empty queue sleep until a producer queues something
// or the queue is closed, without sync.Cond. The owner's mutex guards both fields; ch has
// capacity one, so a wake-up is never lost and producers never block. A consumer that wakes
// must re-check its condition: a wake-up may be stale. The zero value is ready: ch is made by
// the first consumer that waits, so a queue that is never waited on (one Replace and Pop on a
// full queue, say) does not allocate it.
type popWaker struct {
	ch      chan struct{}
	waiters int
}

// waitLocked releases mu, sleeps until woken, and re-acquires mu. mu must be held.
func (w *popWaker) waitLocked(mu *sync.Mutex) {
	if w.ch == nil {
		w.ch = make(chan struct{}, 1)
	}
	ch := w.ch
	w.waiters++
	mu.Unlock()
	<-ch
	mu.Lock()
	w.waiters--
}

// wakeLocked wakes one sleeping consumer, if any. The owner's mutex must be held. A consumer
// that takes an item and leaves more behind, or that returns because the queue is closed,
// calls it again to pass the wake-up on.
func (w *popWaker) wakeLocked() {
	if w.waiters == 0 {
		return
	}
	select {
	case w.ch <- struct{}{}:
	default:
	}
}
