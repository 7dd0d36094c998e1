package workqueue

import "sync/atomic"

// hotTable is a shard's lock-free index of its hot items: items that keep being added while
// they wait in the queue. For those, an Add that finds the item still waiting — the usual Add
// of a busy controller, whose objects change again and again before a worker gets to them —
// loads the item's entry and returns, writing no shared memory. Without it such an Add takes
// the shard's lock, and with producers on several CPUs the lock's cache line then moves
// between them on almost every Add.
//
// Adds read the table without a lock; everything else happens under the shard's lock. An
// entry's item never changes once the entry is published, and the only thing ever written in
// an entry is its waiting flag, so a reader that holds an entry (or a table replaced since)
// always reads a whole, valid item. A table is never shrunk or emptied in place: slots are
// only filled, and pruning publishes a new table. An entry left out of the current table is
// dropped with its flag false and never written again, so an Add that still finds it in an
// old table takes the locked path. The flag is true exactly while its item is dirty (waiting
// in the queue, or marked and about to be queued), the state in which a locked Add is
// absorbed too.
//
// An item is promoted when hotPromoteAfter of its Adds were absorbed under the lock while it
// stayed among its shard's few latest such items (hotCandidates). So a queue whose items are
// all different never builds a table, nor does one whose items are each added two or three
// times while they wait (an add and an update or two before a worker gets to them), which
// would otherwise allocate an entry per item; an item that keeps being added is promoted
// within a few Adds. A shard holds at most hotMaxEntries hot items. The entries of idle items
// are dropped once the shard's waiting set empties, except in the smallest table, which keeps
// up to hotSmallEntries of them so that a queue cycling through a few keys does not allocate
// an entry per cycle.
type hotTable[T comparable] struct {
	slots []atomic.Pointer[hotEntry[T]] // open addressing with linear probing; a power of two
	n     int                           // filled slots, at most half of them; under the shard lock
}

// hotTag returns bits of hash h that pick neither the shard (the top ones) nor, in a table of
// up to 2^27 slots, the slot (the low ones).
func hotTag(h uint64) uint32 { return uint32(h >> 27) }

// hotEntry is one hot item.
type hotEntry[T comparable] struct {
	item    T           // never written after the entry is published
	waiting atomic.Bool // the item is dirty; written under the shard lock
	// The flag is written each time the item is taken or queued, while Adds on other CPUs
	// read the entries next to it: the padding gives an entry of an int or pointer item a
	// cache line of its own (the 64-byte size class is 64-byte aligned). Measured with
	// BenchmarkAddGetDone/producers=1: 16 ns/op against 20 unpadded, medians of 12 runs.
	_ [48]byte
}

const (
	// hotSmallSlots is the size of the smallest table, which holds hotSmallEntries entries.
	hotSmallSlots   = 8
	hotSmallEntries = hotSmallSlots / 2
	// hotMaxEntries bounds a shard's hot items: 2048 per queue. An item beyond it is simply
	// not promoted, and its Adds take the shard's lock as every Add would without the table.
	hotMaxEntries = 64
	// hotPromoteAfter is how many Adds of an item absorbed under the lock promote it.
	hotPromoteAfter = 4
)

// hotCandidates remembers the tags of a shard's last few items whose Adds were absorbed under
// the lock, with how many were. It allocates nothing, and forgets an item once others pushed
// it out, so only an item added again and again while it waits reaches hotPromoteAfter. A tag
// shared by two items can promote the other one early, which costs an entry and nothing else.
type hotCandidates struct {
	tags   [4]uint32
	counts [4]uint8
	next   uint8
}

// absorbed records an Add, absorbed under the shard lock, of the item of hash h, and reports
// whether the item is to be promoted now.
func (c *hotCandidates) absorbed(h uint64) bool {
	tag := hotTag(h)
	for i := range c.tags {
		if c.counts[i] > 0 && c.tags[i] == tag {
			c.counts[i]++
			if c.counts[i] < hotPromoteAfter {
				return false
			}
			c.counts[i] = 0 // promoted: the slot is free
			return true
		}
	}
	i := c.next % uint8(len(c.tags))
	c.next++
	c.tags[i], c.counts[i] = tag, 1
	return hotPromoteAfter <= 1
}

// lookup returns item's entry, or nil. h is the item's hash (itemHash); the slot is chosen by
// its low bits, the shard by its high ones. It only reads, so it may run without the lock.
func (t *hotTable[T]) lookup(item T, h uint64) *hotEntry[T] {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.slots[i].Load()
		if e == nil || e.item == item {
			return e // a table is at most half full: a nil slot ends every probe
		}
	}
}

// insert adds e, whose item is not in the table, into a free slot; the table must have room
// (n < len(slots)/2). Under the shard lock.
func (t *hotTable[T]) insert(e *hotEntry[T], h uint64) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].Load() != nil {
		i = (i + 1) & mask
	}
	t.slots[i].Store(e)
	t.n++
}

// newHotTable returns a table with room for n entries and one more, with at most half of its
// slots filled.
func newHotTable[T comparable](n int) *hotTable[T] {
	size := hotSmallSlots
	for size < 2*(n+1) {
		size *= 2
	}
	return &hotTable[T]{slots: make([]atomic.Pointer[hotEntry[T]], size)}
}

// isWaiting reports, without a lock, whether item is a hot item that is waiting in the queue.
// false means only that the caller must take the shard's lock and look.
func (q *Typed[T]) isWaiting(item T, h uint64) bool {
	t := q.hot[h>>shardShift].Load()
	if t == nil {
		return false
	}
	e := t.lookup(item, h)
	return e != nil && e.waiting.Load()
}

// setHotWaiting sets item's waiting flag if it is hot. Called, under the shard lock, wherever
// the item enters or leaves the shard's dirty set.
func (q *Typed[T]) setHotWaiting(item T, h uint64, waiting bool) {
	if t := q.hot[h>>shardShift].Load(); t != nil {
		if e := t.lookup(item, h); e != nil {
			e.waiting.Store(waiting)
		}
	}
}

// promote makes item, which is dirty and was just added again, hot, if the shard has room.
// Under the shard lock sh.
func (q *Typed[T]) promote(sh *itemShard[T], item T, h uint64) {
	slot := &q.hot[h>>shardShift]
	t := slot.Load()
	if t != nil {
		if t.lookup(item, h) != nil {
			return // already hot (and waiting): this Add read the flag before the item was queued
		}
	}
	if t == nil || 2*(t.n+1) > len(t.slots) {
		if t != nil && t.n >= hotMaxEntries {
			return // full: idle entries go when the shard's waiting set empties (pruneHot)
		}
		t = q.rebuildHot(sh, t)
		slot.Store(t)
	}
	e := &hotEntry[T]{item: item}
	e.waiting.Store(true)
	t.insert(e, h)
}

// keepHot reports whether e stays when its table is rebuilt: its item is dirty or being
// processed. Under the shard lock sh.
func keepHot[T comparable](sh *itemShard[T], e *hotEntry[T]) bool {
	return e != nil && (e.waiting.Load() || sh.isProcessing(e.item))
}

// rebuildHot returns a new table holding the entries of old (which may be nil) that keepHot
// keeps, with room for one more. Entries left out are not waiting and are never written
// again. Under the shard lock sh.
func (q *Typed[T]) rebuildHot(sh *itemShard[T], old *hotTable[T]) *hotTable[T] {
	kept := 0
	if old != nil {
		for i := range old.slots {
			if keepHot(sh, old.slots[i].Load()) {
				kept++
			}
		}
	}
	t := newHotTable[T](kept)
	if old != nil {
		for i := range old.slots {
			if e := old.slots[i].Load(); keepHot(sh, e) {
				t.insert(e, itemHash(q.seed, e.item))
			}
		}
	}
	return t
}

// pruneHot drops the entries of idle items once the shard's dirty set has emptied, unless the
// table is the smallest one. Under the shard lock sh.
func (q *Typed[T]) pruneHot(sh *itemShard[T], h uint64) {
	slot := &q.hot[h>>shardShift]
	if t := slot.Load(); t != nil && len(t.slots) > hotSmallSlots {
		t = q.rebuildHot(sh, t)
		if t.n == 0 {
			t = nil
		}
		slot.Store(t)
	}
}
