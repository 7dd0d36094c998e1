package priorityqueue

import (
	"math"
	"testing"
)

// refQueue is the reference model of the queue's order: the rules of the package
// documentation written as plainly as possible, with linear scans and no clever structure.
// Fuzz tests run the same operations on it and on the real queue and compare every answer.
type refQueue struct {
	items      map[int]*refItem
	seq        uint64 // orders waiting items with equal ready times
	clock      uint64 // orders entries into a level and into the ready set
	agingEvery int
	agingAfter int64
	sinceAged  int
}

type refItem struct {
	priority   int
	seq        uint64
	readyAt    int64 // waiting: due time; ready: when it became ready
	levelOrder uint64
	ageOrder   uint64
	waiting    bool
	ready      bool // ready or parked (parked = ready && processing)
	processing bool
}

func newRefQueue(every int, after int64) *refQueue {
	return &refQueue{items: map[int]*refItem{}, agingEvery: every, agingAfter: after}
}

func (r *refQueue) tick() uint64 { r.clock++; return r.clock }

func (r *refQueue) next() uint64 { r.seq++; return r.seq }

// setReady makes it ready now. An item that is processing is parked: not eligible before
// done, but its place is taken now, as controller-runtime's queue does (at done it comes
// before the items that became ready after it).
func (r *refQueue) setReady(it *refItem, now int64) {
	it.waiting, it.ready = false, true
	it.readyAt, it.levelOrder, it.ageOrder = now, r.tick(), r.tick()
}

func (r *refQueue) add(key, priority int, delay, now int64) {
	it := r.items[key]
	if it == nil || (!it.waiting && !it.ready) {
		if it == nil {
			it = &refItem{}
			r.items[key] = it
		}
		it.priority, it.seq = priority, r.next()
		if delay > 0 {
			it.waiting, it.readyAt = true, now+delay
		} else {
			r.setReady(it, now)
		}
		return
	}
	if priority > it.priority {
		it.priority, it.seq = priority, r.next()
		if it.ready {
			it.levelOrder = r.tick()
		}
	}
	if it.waiting {
		if delay <= 0 {
			r.setReady(it, now)
		} else if now+delay < it.readyAt {
			it.readyAt = now + delay
		}
	}
}

func (r *refQueue) eligible(it *refItem) bool { return it.ready && !it.processing }

func (r *refQueue) take(now int64) (int, int, bool) {
	best, oldest := -1, -1
	for k, it := range r.items {
		if !r.eligible(it) {
			continue
		}
		b := r.items[best]
		if best < 0 || it.priority > b.priority || (it.priority == b.priority && it.levelOrder < b.levelOrder) {
			best = k
		}
		if oldest < 0 || it.ageOrder < r.items[oldest].ageOrder {
			oldest = k
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	pick := best
	if r.agingEvery > 0 {
		aged := now-r.items[oldest].readyAt >= r.agingAfter
		if aged && r.sinceAged >= r.agingEvery-1 {
			pick, r.sinceAged = oldest, 0
		} else if r.sinceAged < r.agingEvery {
			r.sinceAged++
		}
	}
	it := r.items[pick]
	it.ready, it.processing = false, true
	return pick, it.priority, true
}

func (r *refQueue) done(key int, now int64) {
	it := r.items[key]
	if it == nil || !it.processing {
		return
	}
	it.processing = false
	if !it.ready && !it.waiting {
		delete(r.items, key)
	}
}

// nextDeadline returns the earliest due time of a waiting item.
func (r *refQueue) nextDeadline() (int64, bool) {
	at := int64(math.MaxInt64)
	for _, it := range r.items {
		if it.waiting && it.readyAt < at {
			at = it.readyAt
		}
	}
	if at == math.MaxInt64 {
		return 0, false
	}
	return at, true
}

// promote makes the due waiting items ready, in (readyAt, seq) order.
func (r *refQueue) promote(now int64) {
	for {
		k := -1
		for key, it := range r.items {
			if !it.waiting || it.readyAt > now {
				continue
			}
			if b := r.items[k]; k < 0 || it.readyAt < b.readyAt || (it.readyAt == b.readyAt && it.seq < b.seq) {
				k = key
			}
		}
		if k < 0 {
			return
		}
		r.setReady(r.items[k], now)
	}
}

// advance moves time from now to to, promoting at every deadline on the way, as the real
// queue's timer goroutine does.
func (r *refQueue) advance(to int64) {
	for {
		at, ok := r.nextDeadline()
		if !ok || at > to {
			return
		}
		r.promote(at)
	}
}

func (r *refQueue) len() int {
	n := 0
	for _, it := range r.items {
		if it.ready {
			n++
		}
	}
	return n
}

func (r *refQueue) hasEligible() bool {
	for _, it := range r.items {
		if r.eligible(it) {
			return true
		}
	}
	return false
}

func (r *refQueue) processing() int {
	n := 0
	for _, it := range r.items {
		if it.processing {
			n++
		}
	}
	return n
}

func (r *refQueue) dropWaiting() {
	for k, it := range r.items {
		if it.waiting {
			it.waiting = false
			if !it.processing {
				delete(r.items, k)
			}
		}
	}
}

// byteStream decodes fuzz input into small numbers; exhausted input reads as zeros.
type byteStream struct{ b []byte }

func (s *byteStream) more() bool { return len(s.b) > 0 }

func (s *byteStream) next(n int) int {
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0]) % n
	s.b = s.b[1:]
	return v
}

// checkCore panics on impossible internal states: counts agree with the structures.
func checkCore[T comparable](t *testing.T, c *core[T]) {
	t.Helper()
	ready, parked := 0, 0
	for _, e := range c.items {
		switch e.state {
		case stateReady:
			ready++
		case stateParked:
			parked++
			if !e.processing {
				t.Fatalf("parked item %v is not processing", e.key)
			}
		case stateIdle:
			if !e.processing {
				t.Fatalf("idle item %v kept in the map", e.key)
			}
		}
	}
	n := 0
	for i, l := range c.levels {
		if l.head == nil {
			t.Fatalf("empty level %d kept", l.priority)
		}
		if i > 0 && c.levels[i-1].priority <= l.priority {
			t.Fatalf("levels out of order")
		}
		for e := l.head; e != nil; e = e.next {
			n++
			if e.next != nil && e.next.seq <= e.seq {
				t.Fatalf("level %d out of order", l.priority)
			}
		}
	}
	a := 0
	for e := c.age.head; e != nil; e = e.ageNext {
		a++
		if e.ageNext != nil && (e.ageNext.readyAt < e.readyAt || e.ageNext.ageSeq <= e.ageSeq) {
			t.Fatalf("age list out of order")
		}
	}
	if ready != c.nReady || parked != c.nParked || n != ready || a != ready {
		t.Fatalf("counts: ready %d/%d in levels %d in age %d, parked %d/%d", ready, c.nReady, n, a, parked, c.nParked)
	}
	for i := range c.waiting.Len() {
		readyAt, e := c.waiting.At(i)
		_, parent := c.waiting.At((i - 1) / 2)
		before := e.readyAt < parent.readyAt || e.readyAt == parent.readyAt && e.seq < parent.seq
		if e.heapIndex != i || readyAt != e.readyAt || (i > 0 && before) {
			t.Fatalf("heap broken at %d", i)
		}
	}
}

// TestLargeBatchReusesEntries checks that a queue that drained a large batch reuses its
// entries for the next one: no allocation per item, however large the batch (the speed and
// allocations of the whole queue are in bench/priorityqueue, Batch10kReused).
func TestLargeBatchReusesEntries(t *testing.T) {
	const batch = 10000
	c := newCore[int](DefaultAgingEvery, int64(DefaultAgingAfter), nil)
	run := func() {
		for i := range batch {
			c.add(i, []int{0, LowPriority, 10}[i%3], 0, at(0))
		}
		for range batch {
			c.done(c.take(at(0)).key, at(0))
		}
	}
	run()
	if allocs := testing.AllocsPerRun(3, run); allocs > 0 {
		t.Fatalf("a second batch of %d items allocated %v times", batch, allocs)
	}
}
