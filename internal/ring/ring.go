// Package ring provides Ring, a generic FIFO queue on a circular buffer that grows when full and
// shrinks again once drained.
package ring

// defaultMinCapacity is the smallest capacity of a Ring created without New.
const defaultMinCapacity = 16

// Ring is a first-in first-out queue stored in a circular slice. Push doubles the slice when it
// is full; once Pop leaves at most an eighth of it in use, it shrinks to twice what is left
// (a power of two), but never below the capacity given to New. The gap between the two
// thresholds keeps a queue that hovers around one size from resizing on every operation, so
// Push and Pop cost amortised O(1), and a queue that once held a large burst gives that memory
// back as it drains, in few steps (client-go's buffer.RingGrowing never shrinks). A Ring that
// grows back within one drain of its last shrink — a backlog that comes and goes, such as a
// handler slower than a steady stream of events — keeps the capacity it grew back to from then
// on, instead of reallocating on every wave; Reset forgets it.
//
// Popped slots are cleared, so the Ring does not keep popped values reachable.
//
// The zero value is an empty Ring with a minimum capacity of 16. A Ring is not safe for
// concurrent use; guard it with a mutex.
type Ring[T any] struct {
	buf  []T // len(buf) is the capacity, a power of two once allocated
	head int // index of the oldest element
	n    int // number of elements
	min  int // capacity never shrinks below this

	// shrunkFrom is the capacity before the last shrink, and popsSinceShrink the pops since
	// then; a growth to at most shrunkFrom within shrunkFrom pops raises floor to the new size.
	shrunkFrom      int
	popsSinceShrink int
	// floor is the capacity the Ring no longer shrinks below because its backlog recurs.
	floor int
}

// New returns an empty Ring that allocates minCapacity slots on first Push (rounded up to a
// power of two) and never shrinks below that. A minCapacity below 1 means 16.
func New[T any](minCapacity int) *Ring[T] {
	r := &Ring[T]{}
	r.min = roundUp(minCapacity)
	return r
}

// roundUp returns the smallest power of two >= n, or defaultMinCapacity for n < 1.
func roundUp(n int) int {
	if n < 1 {
		return defaultMinCapacity
	}
	c := 1
	for c < n {
		c <<= 1
	}
	return c
}

// shrinkFloor returns the capacity Pop never shrinks below.
func (r *Ring[T]) shrinkFloor() int {
	return max(r.minCapacity(), r.floor)
}

func (r *Ring[T]) minCapacity() int {
	if r.min == 0 {
		r.min = defaultMinCapacity
	}
	return r.min
}

// Len returns the number of queued elements. O(1).
func (r *Ring[T]) Len() int {
	return r.n
}

// Cap returns the number of slots currently allocated. O(1).
func (r *Ring[T]) Cap() int {
	return len(r.buf)
}

// Push appends v at the tail. Amortised O(1); O(Len) when it grows.
func (r *Ring[T]) Push(v T) {
	if r.n == len(r.buf) {
		size := 2 * len(r.buf)
		if size == 0 {
			size = r.minCapacity()
		}
		if size <= r.shrunkFrom && r.popsSinceShrink < r.shrunkFrom {
			r.floor = max(r.floor, size)
		}
		r.resize(size)
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// Pop removes and returns the oldest element; ok is false if the Ring is empty. Amortised
// O(1); O(Len) when it shrinks.
func (r *Ring[T]) Pop() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	var zero T
	v = r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.popsSinceShrink++
	if low := r.shrinkFloor(); r.n <= len(r.buf)/8 && len(r.buf) > low {
		size := low
		for size < 2*r.n {
			size <<= 1
		}
		// A drain shrinks in a few steps; the first, largest capacity is the one to remember.
		if len(r.buf) > r.shrunkFrom || r.popsSinceShrink >= r.shrunkFrom {
			r.shrunkFrom, r.popsSinceShrink = len(r.buf), 0
		}
		r.resize(size)
	}
	return v, true
}

// Peek returns the oldest element without removing it; ok is false if the Ring is empty. O(1).
func (r *Ring[T]) Peek() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	return r.buf[r.head], true
}

// Reset drops every element and releases the buffer. O(1).
func (r *Ring[T]) Reset() {
	r.buf, r.head, r.n = nil, 0, 0
	r.shrunkFrom, r.popsSinceShrink, r.floor = 0, 0, 0
}

// resize moves the elements, in order, to a new slice of the given power-of-two size.
func (r *Ring[T]) resize(size int) {
	buf := make([]T, size)
	if r.n > 0 {
		end := r.head + r.n
		if end <= len(r.buf) {
			copy(buf, r.buf[r.head:end])
		} else {
			k := copy(buf, r.buf[r.head:])
			copy(buf[k:], r.buf[:end-len(r.buf)])
		}
	}
	r.buf, r.head = buf, 0
}
