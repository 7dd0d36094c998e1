package workqueue

import "sync/atomic"

// hotTable is a shard's lock-free index of its hot items: items that keep being added while
// they wait in the queue or are being processed. For those, an Add that finds the item still
// waiting — the usual Add of a busy controller, whose objects change again and again before a
// worker gets to them — or being processed and already due again, reads the item's slot and
// returns, writing no shared memory. Without it such an Add takes the shard's lock, and with
// producers on several CPUs the lock's cache line then moves between them on almost every
// Add; the workers' Dones, which need the same lock, then queue behind the producers.
//
// Adds read the table without a lock; everything else happens under the shard's lock. A slot
// is filled once: its item is written, then its state leaves slotEmpty, and the item is never
// written again, so a reader that sees a filled slot reads a whole, valid item. After that only
// the state changes: it is slotWaiting exactly while the item is dirty (waiting in the queue,
// or marked and about to be queued), slotAgain exactly while it is being processed and marked
// added again (its Done queues it), and slotIdle otherwise: the two states in which a locked
// Add is absorbed too. A table is never emptied in place: a rebuild publishes a new table and
// then sets every slot of the old one to slotIdle, before the shard's lock is released, so an
// Add that still reads the old table takes the locked path.
//
// An item is promoted when hotPromoteAfter of its Adds were absorbed under the lock (while it
// waited, or while it was being processed and already due again) while it stayed among its
// shard's few latest such items, and while the shard's lock was recently found held by an Add
// (hotCandidates). A promotion costs about as much as a dozen locked
// Adds (a slot, the table's growth, a probe at each later Add, Get and Done), and it pays
// only when Adds of one item come from several CPUs: from one goroutine the shard's cache
// line stays where it is. A lock found held is the sign of the other. So a queue fed by one
// goroutine never builds a table, nor does one whose items are all different, nor one whose
// items are each added two or three times while they wait (an add and an update or two
// before a worker gets to them); an item that producers on several CPUs keep adding is
// promoted within a few Adds. A shard holds at most hotMaxEntries hot items. The slots of idle
// items are dropped once no item of the shard is waiting, except in the smallest table, which
// keeps up to hotSmallEntries of them so that a queue cycling through a few keys does not
// rebuild its table every cycle.
type hotTable[T comparable] struct {
	slots []hotSlot[T] // open addressing with linear probing; a power of two
	n     int          // filled slots, at most half of them; under the shard lock
}

// hotSlot is one slot of a hotTable.
type hotSlot[T comparable] struct {
	state atomic.Uint32 // slotEmpty, slotIdle or slotWaiting; changed under the shard lock
	item  T             // written once, before state leaves slotEmpty
}

// The states of a hotSlot. An Add of an item in slotWaiting or slotAgain is absorbed.
const (
	slotEmpty   = iota // never filled: ends a probe
	slotIdle           // a hot item neither waiting nor due again, or a slot of a replaced table
	slotWaiting        // a hot item that is dirty
	slotAgain          // a hot item being processed and added again since its Get: its Done queues it
)

// hotTag returns bits of hash h that pick neither the shard (the top ones) nor, in a table of
// up to 2^27 slots, the slot (the low ones).
func hotTag(h uint64) uint32 { return uint32(h >> 27) }

const (
	// hotSmallSlots is the size of the smallest table, which holds hotSmallEntries items.
	hotSmallSlots   = 8
	hotSmallEntries = hotSmallSlots / 2
	// hotMaxEntries bounds a shard's hot items: 2048 per queue. An item beyond it is simply
	// not promoted, and its Adds take the shard's lock as every Add would without the table.
	hotMaxEntries = 64
	// hotPromoteAfter is how many Adds of an item absorbed under the lock promote it.
	hotPromoteAfter = 4
	// hotHeat is how many Adds absorbed under a shard's lock count towards promotion after an
	// Add found the lock held.
	hotHeat = 1024
)

// hotCandidates remembers the tags of a shard's last few items whose Adds were absorbed under
// the lock, with how many were, while the shard is warm (heat > 0: an Add found its lock held
// not long ago). It allocates nothing, and forgets an item once others pushed it out, so only
// an item added again and again while it waits reaches hotPromoteAfter. A tag shared by two
// items can promote the other one early, which costs a slot and nothing else. Guarded by the
// shard's lock.
type hotCandidates struct {
	tags   [4]uint32
	counts [4]uint8
	next   uint8
	heat   uint16
}

// contended records that an Add found the shard's lock held.
func (c *hotCandidates) contended() { c.heat = hotHeat }

// absorbed records an Add, absorbed under the shard lock, of the item of hash h, and reports
// whether the item is to be promoted now. The shard must be warm (heat > 0).
func (c *hotCandidates) absorbed(h uint64) bool {
	c.heat--
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

// lookup returns item's slot and the state it read there, or nil. h is the item's hash
// (itemHash); the slot is chosen by its low bits, the shard by its high ones. It only reads,
// so it may run without the lock.
func (t *hotTable[T]) lookup(item T, h uint64) (*hotSlot[T], uint32) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		st := s.state.Load()
		if st == slotEmpty {
			return nil, slotEmpty // a table is at most half full: an empty slot ends every probe
		}
		if s.item == item {
			return s, st
		}
	}
}

// insert puts item, which is not in the table, in an empty slot with the given state; the
// table must have room (n < len(slots)/2). Under the shard lock.
func (t *hotTable[T]) insert(item T, h uint64, state uint32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].state.Load() != slotEmpty {
		i = (i + 1) & mask
	}
	t.slots[i].item = item
	t.slots[i].state.Store(state)
	t.n++
}

// newHotTable returns a table with room for n items and one more, with at most half of its
// slots filled.
func newHotTable[T comparable](n int) *hotTable[T] {
	size := hotSmallSlots
	for size < 2*(n+1) {
		size *= 2
	}
	return &hotTable[T]{slots: make([]hotSlot[T], size)}
}

// absorbs reports whether t holds item in a state that absorbs an Add: waiting, or being
// processed and already added again. It only reads.
func (t *hotTable[T]) absorbs(item T, h uint64) bool {
	_, st := t.lookup(item, h)
	return st == slotWaiting || st == slotAgain
}

// setHotState sets the state of item, if it is hot. Called, under the shard lock, wherever
// the item starts or stops waiting, and where it is marked added again while
// being processed.
func (q *Typed[T]) setHotState(item T, h uint64, state uint32) {
	if t := q.hot[h>>shardShift].Load(); t != nil {
		if s, _ := t.lookup(item, h); s != nil {
			s.state.Store(state)
		}
	}
}

// promote makes item hot, in the given state, if the shard has room: an item whose Add was
// just absorbed, because it is dirty (slotWaiting) or being processed and already added
// again (slotAgain). Under the shard lock sh.
func (q *Typed[T]) promote(sh *itemShard[T], item T, h uint64, state uint32) {
	ref := &q.hot[h>>shardShift]
	t := ref.Load()
	if t != nil {
		if s, _ := t.lookup(item, h); s != nil {
			return // already hot, in this state: this Add read it before it was set
		}
	}
	if t == nil || 2*(t.n+1) > len(t.slots) {
		if t != nil && t.n >= hotMaxEntries {
			return // full: idle items go when no item of the shard is waiting (pruneHot)
		}
		t = q.rebuildHot(sh, ref, t, false)
	}
	t.insert(item, h, state)
}

// rebuildHot publishes in ref a new table holding items of old (which may be nil), with room
// for one more, and retires old: every slot of it becomes slotIdle. Growing (prune false), it
// keeps every item; pruning, only those that are dirty or being processed, and a table that
// would hold nothing is published as nil. It returns the new table. Under the shard lock sh.
func (q *Typed[T]) rebuildHot(sh *itemShard[T], ref *atomic.Pointer[hotTable[T]], old *hotTable[T], prune bool) *hotTable[T] {
	keep := func(s *hotSlot[T]) bool {
		switch s.state.Load() {
		case slotWaiting, slotAgain:
			return true
		case slotIdle:
			return !prune || sh.isProcessing(s.item, itemHash(&q.hasher, s.item))
		}
		return false
	}
	kept := 0
	if old != nil {
		kept = old.n
		if prune {
			kept = 0
			for i := range old.slots {
				if keep(&old.slots[i]) {
					kept++
				}
			}
		}
	}
	var t *hotTable[T]
	if kept > 0 || !prune {
		t = newHotTable[T](kept)
		if old != nil {
			for i := range old.slots {
				if s := &old.slots[i]; keep(s) {
					t.insert(s.item, itemHash(&q.hasher, s.item), s.state.Load())
				}
			}
		}
	}
	ref.Store(t)
	if old != nil {
		for i := range old.slots {
			if s := &old.slots[i]; s.state.Load() != slotEmpty {
				s.state.Store(slotIdle)
			}
		}
	}
	return t
}

// pruneHot drops the slots of idle items once no item of the shard is waiting, unless the
// table is the smallest one. Under the shard lock sh.
func (q *Typed[T]) pruneHot(sh *itemShard[T], h uint64) {
	ref := &q.hot[h>>shardShift]
	if t := ref.Load(); t != nil && len(t.slots) > hotSmallSlots {
		q.rebuildHot(sh, ref, t, true)
	}
}
