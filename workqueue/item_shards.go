package workqueue

import (
	"hash/maphash"
	"math"
	"sync"
)

// itemShardCount is the number of shards the item states are spread over: enough that
// producers and workers on different CPUs rarely meet on one shard, few enough that an idle
// queue costs about 2 KB.
const itemShardCount = 32

// shardShrinkThreshold is the size above which an emptied shard map may be dropped (setSize).
// Across all shards a queue always keeps maps for up to 4096 items; lower, and a queue that
// drains often keeps reallocating its maps.
const shardShrinkThreshold = shrinkThreshold / 8

// itemShard holds the states of the items that hash to it. Its lock is the only one an Add of
// an item that is already queued (and not hot), or a Done of an item that was not added again,
// takes.
//
// An item is dirty when it has been added and not yet taken by Get since, and processing
// between Get and Done; it can be both, added again while a worker holds it. The states live in
// sets, as in client-go, but split differently, so that an item is in dirty or in processing,
// never both, and the common operations touch as few sets as possible: dirty holds the items
// waiting in the queue, processing the items being processed, and addedAgain those of the
// latter added again since their Get. dirty, the set that grows with a backlog, is read once by
// an Add of a waiting item (which writes nothing, and for a hot item is answered by the
// queue's hot table without the lock), read and written once by an Add of a new one and
// written once by Get, and its entries are just the items. Done deletes from processing,
// which holds no more items than there are workers, and reads addedAgain only if it is not
// empty.
type itemShard[T comparable] struct {
	// mu guards the fields below, unless the queue runs in locked mode (see Typed.locked),
	// where the queue's own lock guards every shard and mu is not used.
	mu         sync.Mutex
	dirty      map[T]struct{}  // the items of this shard waiting in the queue; nil until needed
	processing map[T]struct{}  // the items being processed
	addedAgain map[T]struct{}  // the items being processed that were added again since their Get
	dirtySize  setSize         // of dirty
	procSize   setSize         // of processing
	met        *itemMetrics[T] // the metrics' bookkeeping of this shard's items; nil without metrics
	_          [64 - 56]byte   // one cache line per shard: shards are locked from different CPUs
}

// setSize tracks the sizes a Go map reached, which decide when to drop it: Go maps never
// shrink, so a set that a burst made large keeps the burst's memory until it is replaced.
// Replacing it at the end of every burst costs its growth again at the next one: at 64k items
// a burst, a third of the queue's time. So a set that has emptied is kept if the burst just
// ended was as large as the set has ever been (bursts of that size recur), and dropped once
// a burst ends that needed less than a quarter of it. Memory stays within four times what
// the last burst needed (or shardShrinkThreshold), plus one burst's worth between a large
// burst and the end of the next one.
type setSize struct {
	peak  int32 // largest len since the map was allocated
	burst int32 // largest len since the set was last empty
}

// grew records the set's length after an insert. Sizes are tracked only once the set has
// passed shardShrinkThreshold: a smaller set is never dropped.
func (z *setSize) grew(n int) {
	if n <= shardShrinkThreshold && z.peak <= shardShrinkThreshold {
		return
	}
	n32 := int32(min(n, math.MaxInt32))
	z.peak = max(z.peak, n32)
	z.burst = max(z.burst, n32)
}

// emptied reports, for a set that has just become empty, whether to drop its map, and starts
// a new burst.
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

// addDirty marks item, which is neither waiting nor being processed, as waiting in the queue.
func (s *itemShard[T]) addDirty(item T) {
	if s.dirty == nil {
		s.dirty = make(map[T]struct{})
	}
	s.dirty[item] = struct{}{}
	s.dirtySize.grew(len(s.dirty))
}

// isDirty reports whether item is waiting in the queue.
func (s *itemShard[T]) isDirty(item T) bool {
	_, ok := s.dirty[item]
	return ok
}

// isProcessing reports whether item is being processed.
func (s *itemShard[T]) isProcessing(item T) bool {
	_, ok := s.processing[item]
	return ok
}

// markAddedAgain records that item, which is being processed, was added again; it reports
// false if that was already recorded.
func (s *itemShard[T]) markAddedAgain(item T) bool {
	if _, ok := s.addedAgain[item]; ok {
		return false
	}
	if s.addedAgain == nil {
		s.addedAgain = make(map[T]struct{})
	}
	s.addedAgain[item] = struct{}{}
	return true
}

// startProcessing moves item from waiting to being processed. A waiting set that empties may
// be dropped to give a burst's memory back (setSize).
func (s *itemShard[T]) startProcessing(item T) {
	s.forgetDirty(item)
	if s.processing == nil {
		s.processing = make(map[T]struct{})
	}
	s.processing[item] = struct{}{}
	s.procSize.grew(len(s.processing))
}

// forgetDirty removes item from the waiting set, dropping the set if setSize says so once it
// is empty.
func (s *itemShard[T]) forgetDirty(item T) {
	delete(s.dirty, item)
	if len(s.dirty) == 0 && s.dirty != nil && s.dirtySize.emptied() {
		s.dirty = nil
	}
}

// endProcessing forgets that item is being processed and reports whether it was (ok) and
// whether it was added again meanwhile. One probe of processing: the deletion either removes
// the item or finds nothing, and the set's length tells which.
func (s *itemShard[T]) endProcessing(item T) (addedAgain, ok bool) {
	n := len(s.processing)
	delete(s.processing, item)
	if len(s.processing) == n {
		return false, false
	}
	if len(s.processing) == 0 && s.procSize.emptied() {
		s.processing = nil
	}
	if len(s.addedAgain) > 0 {
		if _, addedAgain = s.addedAgain[item]; addedAgain {
			delete(s.addedAgain, item)
		}
	}
	return addedAgain, true
}

// abandonDirty forgets item, marked waiting by addDirty, when it could not be queued after all.
func (s *itemShard[T]) abandonDirty(item T) {
	s.forgetDirty(item)
}

// shardShift makes the top bits of an item's hash its shard: itemShardCount is 1<<(64-shardShift).
const shardShift = 64 - 5

// itemHash hashes item: its top bits pick its shard, its low bits its slot in the shard's
// hot table. Ints and strings, the usual keys, take a fast path; other types use
// maphash.Comparable. None of them allocates.
func itemHash[T comparable](seed maphash.Seed, item T) uint64 {
	switch v := any(item).(type) {
	case int:
		return uint64(v) * 0x9e3779b97f4a7c15 // Fibonacci hashing: the top bits mix all of v
	case int64:
		return uint64(v) * 0x9e3779b97f4a7c15
	case uint64:
		return v * 0x9e3779b97f4a7c15
	case string:
		return maphash.String(seed, v)
	default:
		return maphash.Comparable(seed, item)
	}
}
