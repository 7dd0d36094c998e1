package workqueue

import (
	"hash/maphash"
	"sync"
)

// itemState records where an item known to the queue is. An item is dirty when it has been
// added and not yet taken by Get since; it is processing between Get and Done. An item can be
// both: it was added again while a worker holds it.
type itemState uint8

const (
	stateDirty itemState = 1 << iota
	stateProcessing
)

// itemShardCount is the number of shards the item states are spread over: enough that
// producers and workers on different CPUs rarely meet on one shard, few enough that an idle
// queue costs about 2 KB.
const itemShardCount = 32

// shardShrinkThreshold is the size above which an emptied shard map is dropped. Across all
// shards an idle queue keeps maps for at most 4096 items; lower, and a queue that drains
// often keeps reallocating its maps.
const shardShrinkThreshold = shrinkThreshold / 8

// itemShard holds the states of the items that hash to it. Its lock is the only one an Add of
// an item that is already queued, or a Done of an item that was not added again, takes.
type itemShard[T comparable] struct {
	// mu guards items and peak, unless the queue runs in locked mode (see Typed.locked),
	// where the queue's own lock guards every shard and mu is not used.
	mu    sync.Mutex
	items map[T]itemState // every dirty or processing item of this shard; nil until needed
	peak  int             // largest len(items) since items was last allocated
	met   *itemMetrics[T] // the metrics' bookkeeping of this shard's items; nil without metrics
	_     [64 - 32]byte   // one cache line per shard: shards are locked from different CPUs
}

func (s *itemShard[T]) get(item T) itemState { return s.items[item] }

func (s *itemShard[T]) set(item T, st itemState) {
	if s.items == nil {
		s.items = make(map[T]itemState)
	}
	s.items[item] = st
	if n := len(s.items); n > s.peak {
		s.peak = n
	}
}

// delete forgets item. Go maps never shrink, so once a burst has passed the map is dropped to
// give its memory back.
func (s *itemShard[T]) delete(item T) {
	delete(s.items, item)
	if len(s.items) == 0 && s.peak > shardShrinkThreshold {
		s.items = nil
		s.peak = 0
	}
}

// shardIndex picks item's shard. Ints and strings, the usual keys, take a fast path; other
// types use maphash.Comparable. None of them allocates.
func shardIndex[T comparable](seed maphash.Seed, item T) uint {
	var h uint64
	switch v := any(item).(type) {
	case int:
		h = uint64(v) * 0x9e3779b97f4a7c15 // Fibonacci hashing: the top bits mix all of v
	case int64:
		h = uint64(v) * 0x9e3779b97f4a7c15
	case uint64:
		h = v * 0x9e3779b97f4a7c15
	case string:
		h = maphash.String(seed, v)
	default:
		h = maphash.Comparable(seed, item)
	}
	return uint(h >> 59) // the top 5 bits: itemShardCount is 32
}
