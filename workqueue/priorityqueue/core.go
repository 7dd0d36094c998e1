package priorityqueue

import "github.com/kcache/cache/internal/heap"

// core is the queue's state machine: deduplication, priorities, delays, the aging rule and
// the set of items being processed. It has no lock, no goroutine and no clock: every method
// that may need the time takes it as now, an instant that reads the time (in nanoseconds on
// a monotonic scale chosen by the caller) at most once and only if the operation needs it,
// because reading a clock is a large part of a queue operation's cost. Tests give fixed
// instants. The concurrent shell (queue.go) wraps it with a mutex, a clock and the waiters.
//
// An item is in exactly one of these places, and may also be processing:
//   - nowhere (stateIdle): only possible while it is processing;
//   - waiting: delayed, in the heap ordered by ready time;
//   - ready: in the list of its priority level and in the age list, eligible for take;
//   - parked: ready, but its key is being processed, so it is not eligible until done. At
//     done it takes the place in both lists that its seq and ageSeq give it, as if it had
//     been ready all along: ahead of the items that became ready after it.
type core[T comparable] struct {
	items map[T]*entry[T]

	// levels holds the non-empty priority levels, highest priority first. Each level lists
	// its ready items by seq.
	levels []*level[T]
	// age lists the ready items by ageSeq: in the order they became ready, oldest first.
	age list[T]
	// waiting is a min-heap of delayed items by readyAt (the key), then seq; each knows its
	// heapIndex.
	waiting *heap.Heap[*entry[T]]
	// running lists the items being processed, longest running first.
	running list[T]

	nReady, nParked int
	seq             uint64
	adds            int64 // items made ready or delayed, for workqueue.Queues

	// agingEvery is K of the aging rule; 0 disables aging. agingAfter is its threshold.
	agingEvery int
	agingAfter int64
	// sinceAged counts handouts since the oldest aged item was last handed out (capped).
	sinceAged int

	// metrics observes state changes; it never calls back into core.
	metrics *queueMetrics

	// freeEntries lists the freed entries through their next links, all of them: a queue
	// that held n items once reuses their entries for every later batch of up to n instead
	// of allocating per item. Its memory stays at that high-water mark (an entry is 128
	// bytes for a string key), as its map's does. freeLevels keeps the freed levels.
	freeEntries *entry[T]
	freeLevels  []*level[T]
}

type itemState uint8

const (
	stateIdle itemState = iota
	stateWaiting
	stateReady
	stateParked
)

// entry is one key's record. Its links place it in a level list and the age list (ready), or
// the heap (waiting), and, independently, in the running list (processing).
type entry[T comparable] struct {
	key      T
	priority int
	// seq orders the entry in its level, and waiting entries with equal ready times: it is
	// taken when the entry becomes waiting or ready and when its priority is raised.
	seq uint64
	// ageSeq orders the entry in the age list: it is taken when the entry becomes ready.
	ageSeq uint64
	// readyAt is when a waiting item becomes ready, or when a ready item became ready.
	readyAt   int64
	startedAt int64
	heapIndex int
	state     itemState

	processing bool

	level            *level[T]
	prev, next       *entry[T] // level list
	agePrev, ageNext *entry[T] // age list
	runPrev, runNext *entry[T] // running list
}

type level[T comparable] struct {
	priority   int
	head, tail *entry[T]
}

// list is an intrusive doubly linked list through the age or running links of entries.
type list[T comparable] struct {
	head, tail *entry[T]
	running    bool // links through runPrev/runNext instead of agePrev/ageNext
}

func (l *list[T]) links(e *entry[T]) (prev, next **entry[T]) {
	if l.running {
		return &e.runPrev, &e.runNext
	}
	return &e.agePrev, &e.ageNext
}

func (l *list[T]) pushBack(e *entry[T]) { l.insertAfter(l.tail, e) }

// insertAfter links e after p, or at the front if p is nil.
func (l *list[T]) insertAfter(p, e *entry[T]) {
	prev, next := l.links(e)
	*prev = p
	if p == nil {
		*next, l.head = l.head, e
	} else {
		_, pn := l.links(p)
		*next, *pn = *pn, e
	}
	if *next == nil {
		l.tail = e
	} else {
		np, _ := l.links(*next)
		*np = e
	}
}

func (l *list[T]) remove(e *entry[T]) {
	prev, next := l.links(e)
	if *prev == nil {
		l.head = *next
	} else {
		_, pn := l.links(*prev)
		*pn = *next
	}
	if *next == nil {
		l.tail = *prev
	} else {
		np, _ := l.links(*next)
		*np = *prev
	}
	*prev, *next = nil, nil
}

// instant is the time of one operation, read on first use.
type instant struct {
	read func() int64
	t    int64
	ok   bool
}

func (n *instant) get() int64 {
	if !n.ok {
		n.t, n.ok = n.read(), true
	}
	return n.t
}

// at is a fixed instant.
func at(t int64) *instant { return &instant{t: t, ok: true} }

func newCore[T comparable](agingEvery int, agingAfter int64, m *queueMetrics) *core[T] {
	return &core[T]{
		items:      make(map[T]*entry[T]),
		running:    list[T]{running: true},
		waiting:    heap.New(func(a, b *entry[T]) bool { return a.seq < b.seq }, func(e *entry[T], i int) { e.heapIndex = i }),
		agingEvery: agingEvery,
		agingAfter: agingAfter,
		metrics:    m,
	}
}

// add enqueues key with priority, ready after delay (ready now if delay <= 0). A queued key
// keeps the higher of its priorities and the earlier of its ready times; a raised priority
// puts it at the back of its new level (for a parked item: behind the items of that level
// that are ready by then). It reports whether an eligible item was added.
func (c *core[T]) add(key T, priority int, delay int64, now *instant) (eligible bool) {
	e := c.items[key]
	if e == nil {
		c.adds++
		e = c.newEntry(key, priority)
		c.items[key] = e
		if delay > 0 {
			c.pushWaiting(e, now.get()+delay)
			return false
		}
		return c.makeReady(e, now)
	}
	raise := priority > e.priority
	switch e.state {
	case stateIdle: // processing, not queued: queue it again
		c.adds++
		e.priority, e.seq = priority, c.nextSeq()
		if delay > 0 {
			c.pushWaiting(e, now.get()+delay)
			return false
		}
		return c.makeReady(e, now)
	case stateWaiting:
		if raise {
			e.priority, e.seq = priority, c.nextSeq()
		}
		if delay <= 0 {
			c.removeWaiting(e)
			return c.makeReady(e, now)
		}
		if due := now.get() + delay; due < e.readyAt || raise {
			e.readyAt = min(e.readyAt, due)
			c.fixWaiting(e)
		}
	case stateReady:
		if raise {
			c.metrics.depthMove(e.priority, priority)
			c.unlinkLevel(e)
			e.priority, e.seq = priority, c.nextSeq()
			c.linkLevel(e)
		}
	case stateParked:
		if raise {
			c.metrics.depthMove(e.priority, priority)
			e.priority, e.seq = priority, c.nextSeq()
		}
	}
	return false
}

// makeReady moves e (not in any structure) to ready, or to parked while it is processing.
// Either way it becomes ready now: its readyAt, seq and ageSeq are taken here, so a parked
// item keeps its place for done.
func (c *core[T]) makeReady(e *entry[T], now *instant) bool {
	c.metrics.readyAdded(e.priority)
	e.readyAt = now.get()
	e.seq = c.nextSeq()
	e.ageSeq = e.seq
	if e.processing {
		e.state = stateParked
		c.nParked++
		return false
	}
	c.linkReady(e)
	return true
}

// linkReady makes e eligible, in its level by seq and in the age list by ageSeq. O(1) for an
// item that becomes ready now (it goes at the back); a parked item coming back at done walks
// past the items that became ready while it was processing.
func (c *core[T]) linkReady(e *entry[T]) {
	e.state = stateReady
	c.linkLevel(e)
	p := c.age.tail
	for p != nil && p.ageSeq > e.ageSeq {
		p = p.agePrev
	}
	c.age.insertAfter(p, e)
	c.nReady++
}

// take hands out the next eligible item, or nil. Normally that is the head of the highest
// priority level; under the aging rule it is the oldest ready item. The item is processing
// until done is called for its key.
func (c *core[T]) take(now *instant) *entry[T] {
	if c.nReady == 0 {
		return nil
	}
	e := c.levels[0].head
	if c.agingEvery > 0 {
		// The time is read only when the rule may apply.
		if c.sinceAged >= c.agingEvery-1 && now.get()-c.age.head.readyAt >= c.agingAfter {
			e = c.age.head
			c.sinceAged = 0
		} else if c.sinceAged < c.agingEvery {
			c.sinceAged++
		}
	}
	c.unlinkLevel(e)
	c.age.remove(e)
	c.nReady--
	e.state = stateIdle
	e.processing = true
	c.running.pushBack(e)
	if c.metrics != nil {
		e.startedAt = now.get()
		c.metrics.taken(e.priority, e.startedAt-e.readyAt)
	}
	return e
}

// done ends the processing of key. An item queued again meanwhile becomes eligible now, in
// the place it took when it was queued again; done reports whether that happened. done for
// a key that is not processing does nothing.
func (c *core[T]) done(key T, now *instant) (eligible bool) {
	e := c.items[key]
	if e == nil || !e.processing {
		return false
	}
	e.processing = false
	c.running.remove(e)
	if c.metrics != nil {
		c.metrics.finished(now.get() - e.startedAt)
	}
	switch e.state {
	case stateIdle:
		delete(c.items, key)
		c.freeEntry(e)
	case stateParked:
		c.nParked--
		c.linkReady(e)
		return true
	}
	return false
}

// promote makes every waiting item whose time has come ready, in ready-time order, and
// returns how many became eligible. It reads the time only if an item is waiting.
func (c *core[T]) promote(now *instant) (eligible int) {
	for {
		readyAt, e, ok := c.waiting.Peek()
		if !ok || readyAt > now.get() {
			break
		}
		c.removeWaiting(e)
		if c.makeReady(e, now) {
			eligible++
		}
	}
	return eligible
}

// nextDeadline returns when the earliest waiting item becomes ready.
func (c *core[T]) nextDeadline() (int64, bool) {
	readyAt, _, ok := c.waiting.Peek()
	return readyAt, ok
}

// dropWaiting forgets every delayed item (at shutdown).
func (c *core[T]) dropWaiting() {
	if len(c.items) == c.waiting.Len() && c.running.head == nil {
		// Only delayed items are queued: drop the map instead of deleting each key.
		c.items = make(map[T]*entry[T])
		c.waiting.Clear()
		return
	}
	for i := range c.waiting.Len() {
		_, e := c.waiting.At(i)
		e.heapIndex = -1
		e.state = stateIdle
		if !e.processing {
			delete(c.items, e.key)
		}
	}
	c.waiting.Clear()
}

// len is the number of ready items, eligible or parked.
func (c *core[T]) len() int { return c.nReady + c.nParked }

func (c *core[T]) nextSeq() uint64 {
	c.seq++
	return c.seq
}

func (c *core[T]) newEntry(key T, priority int) *entry[T] {
	var e *entry[T]
	if e = c.freeEntries; e != nil {
		c.freeEntries, e.next = e.next, nil
	} else {
		e = new(entry[T])
	}
	e.key, e.priority, e.seq, e.heapIndex = key, priority, c.nextSeq(), -1
	return e
}

func (c *core[T]) freeEntry(e *entry[T]) {
	*e = entry[T]{}
	e.next, c.freeEntries = c.freeEntries, e
}
