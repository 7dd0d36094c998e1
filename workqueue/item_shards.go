package workqueue

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"sync"
)

// itemShardCount is the number of shards the item states are spread over: enough that
// producers and workers on different CPUs rarely meet on one shard, few enough that an idle
// queue costs about 2 KB.
const itemShardCount = 32

// shardShrinkThreshold is the size above which an emptied shard table may drop its slots
// (setSize). Across all shards a queue always keeps tables for up to 4096 items; lower, and a
// queue that drains often keeps reallocating them.
const shardShrinkThreshold = shrinkThreshold / 8

// itemShard holds the states of the items that hash to it. Its lock is the only one an Add of
// an item that is already queued (and not hot), or a Done of an item that was not added again,
// takes.
//
// An item is waiting when it has been added and not yet taken by Get since, and processing
// between Get and Done; a processing item can also be due again, added again since its Get.
// The states live in one table, items, whose entry is the item's state: an Add of an item reads
// it once (and, for a new item, inserts it), a Get rewrites the entry in place, a Done reads
// and deletes it or rewrites it. One table instead of separate sets (client-go's dirty and
// processing) means fewer probes per item, fewer cache lines for an Add on one CPU and the
// Get on another to move between them, and no second entry for an item being processed. The
// table's header shares the lock's cache line (see stateTable).
type itemShard[T comparable] struct {
	// mu guards the fields below, unless the queue runs in locked mode (see Typed.locked),
	// where the queue's own lock guards every shard and mu is not used.
	mu      sync.Mutex
	items   stateTable[T]   // the states of this shard's items that are waiting or processing
	waiting int             // the items of this shard in stateWaiting
	size    setSize         // of items
	met     *itemMetrics[T] // the metrics' bookkeeping of this shard's items; nil without metrics
	// 64 bytes on 64-bit platforms: one cache line per shard, as shards are locked from
	// different CPUs (TestItemShardFillsOneCacheLine).
}

// itemState is the state of an item in its shard; an item in none is absent from the table.
type itemState uint8

const (
	stateWaiting    itemState = iota + 1 // added and not yet taken by Get
	stateProcessing                      // between Get and Done
	stateAgain                           // processing, and added again since its Get: its Done queues it
)

// setSize tracks the sizes a shard's table reached, which decide when to drop its slots: a
// table that a burst made large would otherwise keep the burst's memory. Dropping it at the
// end of every burst costs its growth again at the next one: at 64k items a burst, a third of
// the queue's time. So a table that has emptied is kept if the burst just ended was as large
// as the table has ever been (bursts of that size recur), and dropped once a burst ends that
// needed less than a quarter of it. Memory stays within four times what the last burst needed
// (or shardShrinkThreshold), plus one burst's worth between a large burst and the end of the
// next one.
type setSize struct {
	peak  int32 // largest size since the slots were allocated
	burst int32 // largest size since the table was last empty
}

// grew records the table's size after an insert. Sizes are tracked only once the table has
// passed shardShrinkThreshold: a smaller table is never dropped.
func (z *setSize) grew(n int) {
	if n <= shardShrinkThreshold && z.peak <= shardShrinkThreshold {
		return
	}
	n32 := int32(min(n, math.MaxInt32))
	z.peak = max(z.peak, n32)
	z.burst = max(z.burst, n32)
}

// emptied reports, for a table that has just become empty, whether to drop its slots, and
// starts a new burst.
func (z *setSize) emptied() (drop bool) {
	if z.peak <= shardShrinkThreshold {
		return false
	}
	drop = 4*int64(z.burst) < int64(z.peak)
	if drop {
		z.peak = 0
	}
	z.burst = 0
	return drop
}

// state returns item's state, or 0 if it is neither waiting nor being processed. h is the
// item's hash (itemHash), as for every method below.
func (s *itemShard[T]) state(item T, h uint64) itemState {
	return s.items.get(item, h)
}

// addDirty marks item, which is neither waiting nor being processed, as waiting in the queue.
func (s *itemShard[T]) addDirty(item T, h uint64) {
	s.items.insert(item, h, stateWaiting)
	s.waiting++
	s.size.grew(s.items.n)
}

// isProcessing reports whether item is being processed.
func (s *itemShard[T]) isProcessing(item T, h uint64) bool {
	st := s.items.get(item, h)
	return st == stateProcessing || st == stateAgain
}

// markAddedAgain records that item, which is being processed (in state st), was added again;
// it reports false if that was already recorded.
func (s *itemShard[T]) markAddedAgain(item T, h uint64, st itemState) bool {
	if st == stateAgain {
		return false
	}
	s.items.set(item, h, stateAgain)
	return true
}

// startProcessing moves item from waiting to being processed.
func (s *itemShard[T]) startProcessing(item T, h uint64) {
	s.items.set(item, h, stateProcessing)
	s.waiting--
}

// endProcessing ends the processing of item and reports whether it was being processed (ok)
// and whether it was added again meanwhile, in which case it is waiting again (the caller
// queues it). A table that empties may drop its slots to give a burst's memory back (setSize).
func (s *itemShard[T]) endProcessing(item T, h uint64) (addedAgain, ok bool) {
	switch s.items.get(item, h) {
	case stateProcessing:
		s.forget(item, h)
		return false, true
	case stateAgain:
		s.items.set(item, h, stateWaiting)
		s.waiting++
		return true, true
	}
	return false, false
}

// abandonDirty forgets item, marked waiting by addDirty, when it could not be queued after all.
func (s *itemShard[T]) abandonDirty(item T, h uint64) {
	s.waiting--
	s.forget(item, h)
}

// forget removes item, dropping the table's slots if setSize says so once it is empty.
func (s *itemShard[T]) forget(item T, h uint64) {
	s.items.remove(item, h)
	if s.items.n == 0 && s.size.emptied() {
		s.items.drop()
	}
}

// shardShift makes the top bits of an item's hash its shard: itemShardCount is 1<<(64-shardShift).
const shardShift = 64 - 5

// itemHasher hashes a queue's items (itemHash). Both of its keys are random per queue, so that
// which items share a shard and a slot cannot be chosen from outside: item states live in
// open-addressing tables (stateTable), where many items of one home would make every probe
// long.
type itemHasher struct {
	seed maphash.Seed // for strings and other types
	mix  uint64       // for integers
}

func newItemHasher() itemHasher {
	return itemHasher{seed: maphash.MakeSeed(), mix: rand.Uint64()}
}

// itemHash hashes item: its top bits pick its shard, the bits below them its slot in the
// shard's state table, its low bits its slot in the shard's hot table. Ints and strings, the
// usual keys, take a fast path; other types use maphash.Comparable. None of them allocates.
func itemHash[T comparable](k *itemHasher, item T) uint64 {
	switch v := any(item).(type) {
	case int:
		// Fibonacci hashing (the top bits mix all of v) of v keyed by mix: without the key,
		// the ints (c+i)·φ⁻¹ would all share a shard and a home slot.
		return (uint64(v) ^ k.mix) * 0x9e3779b97f4a7c15
	case int64:
		return (uint64(v) ^ k.mix) * 0x9e3779b97f4a7c15
	case uint64:
		return (v ^ k.mix) * 0x9e3779b97f4a7c15
	case string:
		return maphash.String(k.seed, v)
	default:
		return maphash.Comparable(k.seed, item)
	}
}
