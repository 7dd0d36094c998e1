// Package ring provides Ring, a generic FIFO queue stored in fixed chunks that it allocates as it
// grows and gives back as it drains.
package ring

import (
	"iter"
	"unsafe"
)

// defaultMinCapacity is the smallest capacity of a Ring created without New.
const defaultMinCapacity = 16

// maxChunkBytes bounds the size of one chunk: large enough that a long backlog costs one
// allocation per few hundred elements, small enough that an idle queue holds little.
const maxChunkBytes = 8 << 10

// Ring is a first-in first-out queue stored in a list of chunks. Push fills the newest chunk and
// adds another when it is full (the first is the minimum capacity, each next one twice the one
// before, up to 8 KiB); Pop empties the oldest chunk and gives it back once it is drained. So a
// backlog of n elements allocates about n slots once, never copies an element, and holds no
// more than it needs (a slice that doubles allocates up to twice the backlog, copies it at every
// growth, and client-go's buffer.RingGrowing never gives memory back).
//
// A drained chunk is kept for reuse if it is the only spare (so a queue whose backlog stays
// about the same moves between two chunks without allocating), or if the Ring then holds no
// more than it keeps: its minimum capacity, raised when a backlog recurs. A Ring that drains
// to its minimum capacity or less and then needs a new chunk within one drain (as many pops as
// its largest backlog) of having given one back — a backlog that comes and goes, such as a
// handler slower than a steady stream of events — keeps that much more, up to its largest
// backlog, instead of reallocating on every wave; Reset forgets it. One long backlog, such as
// an informer's initial list, gives its chunks back and allocates new ones as it moves, and
// is not kept once drained.
//
// Push and Pop are O(1), apart from the allocation of a chunk. Popped slots are cleared, so
// the Ring does not keep popped values reachable.
//
// The zero value is an empty Ring with a minimum capacity of 16. A Ring is not safe for
// concurrent use; guard it with a mutex.
type Ring[T any] struct {
	chunks [][]T // live chunks, oldest first, from chunks[first]
	first  int
	head   int // index of the oldest element in chunks[first]
	tail   int // index of the next free slot in the last chunk
	n      int // number of elements
	live   int // slots in the live chunks

	spare      [][]T // drained chunks kept for reuse
	spareSlots int

	min     int // slots always kept once allocated
	nextLen int // length of the next chunk to allocate; 0: start again from min

	// pops counts Pops; droppedAt is its value when a drained chunk was last given back
	// (dropped says whether one was), and drained says whether the Ring has held no more than
	// its minimum capacity since. highWater is the most slots the live chunks ever had, and
	// floor the slots kept beyond min because the backlog recurs.
	pops      int
	dropped   bool
	droppedAt int
	drained   bool
	highWater int
	floor     int
}

// New returns an empty Ring that allocates its first chunk on first Push and keeps at least
// minCapacity slots (rounded up to a power of two) once it has had them. A minCapacity below 1
// means 16.
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

// maxChunkLen returns the most elements of T one chunk holds: a power of two of at most
// maxChunkBytes, and at least 16.
func maxChunkLen[T any]() int {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 {
		size = 1
	}
	n := 16
	for 2*n*size <= maxChunkBytes {
		n <<= 1
	}
	return n
}

func (r *Ring[T]) minCapacity() int {
	if r.min == 0 {
		r.min = defaultMinCapacity
	}
	return r.min
}

// keep returns the slots (live and spare) the Ring keeps rather than give back.
func (r *Ring[T]) keep() int {
	return max(r.minCapacity(), r.floor)
}

// Len returns the number of queued elements. O(1).
func (r *Ring[T]) Len() int {
	return r.n
}

// Cap returns the number of slots currently allocated, spare chunks included. O(1).
func (r *Ring[T]) Cap() int {
	return r.live + r.spareSlots
}

// Push appends v at the tail. O(1), apart from allocating a chunk when the last one is full.
func (r *Ring[T]) Push(v T) {
	if r.first == len(r.chunks) || r.tail == len(r.chunks[len(r.chunks)-1]) {
		r.addChunk()
	}
	r.chunks[len(r.chunks)-1][r.tail] = v
	r.tail++
	r.n++
}

// addChunk appends an empty chunk to the live ones: a spare one, or a new one.
func (r *Ring[T]) addChunk() {
	var c []T
	if k := len(r.spare); k > 0 {
		c = r.spare[k-1]
		r.spare[k-1] = nil
		r.spare = r.spare[:k-1]
		r.spareSlots -= len(c)
	} else {
		if r.nextLen == 0 {
			r.nextLen = min(r.minCapacity(), maxChunkLen[T]())
		}
		c = make([]T, r.nextLen)
		r.nextLen = min(2*r.nextLen, maxChunkLen[T]())
		if r.dropped && r.drained && r.pops-r.droppedAt <= r.highWater {
			// The backlog drained and, within one drain of a chunk given back, needs a
			// new one: it recurs.
			r.floor = min(r.floor+len(c), max(r.highWater, r.live+len(c)))
		}
	}
	if r.first > 0 && 2*r.first >= len(r.chunks) {
		k := copy(r.chunks, r.chunks[r.first:])
		clear(r.chunks[k:])
		r.chunks, r.first = r.chunks[:k], 0
	}
	r.chunks = append(r.chunks, c)
	r.tail = 0
	r.live += len(c)
	r.highWater = max(r.highWater, r.live)
}

// Pop removes and returns the oldest element; ok is false if the Ring is empty. O(1).
func (r *Ring[T]) Pop() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	c := r.chunks[r.first]
	var zero T
	v = c[r.head]
	c[r.head] = zero
	r.head++
	r.n--
	r.pops++
	if r.n <= r.min {
		r.drained = true
	}
	switch {
	case r.n == 0:
		// The oldest chunk is the newest: start it again from its first slot.
		r.head, r.tail = 0, 0
	case r.head == len(c):
		r.chunks[r.first] = nil
		r.first++
		r.head = 0
		r.live -= len(c)
		r.release(c)
	}
	return v, true
}

// release keeps the drained chunk c as a spare if there is none yet or the Ring holds no more
// than it keeps, and otherwise gives it back.
func (r *Ring[T]) release(c []T) {
	if len(r.spare) == 0 || r.live+r.spareSlots+len(c) <= r.keep() {
		r.spare = append(r.spare, c)
		r.spareSlots += len(c)
		return
	}
	r.dropped, r.droppedAt, r.drained = true, r.pops, false
}

// Peek returns the oldest element without removing it; ok is false if the Ring is empty. O(1).
func (r *Ring[T]) Peek() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	return r.chunks[r.first][r.head], true
}

// All returns an iterator over the queued elements, oldest first. The Ring must not change
// during the iteration. O(1) per element.
func (r *Ring[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		left := r.n
		for i, start := r.first, r.head; left > 0; i, start = i+1, 0 {
			c := r.chunks[i][start:min(len(r.chunks[i]), start+left)]
			for _, v := range c {
				if !yield(v) {
					return
				}
			}
			left -= len(c)
		}
	}
}

// Reset drops every element and releases every chunk. O(1).
func (r *Ring[T]) Reset() {
	m := r.min
	*r = Ring[T]{min: m}
}
