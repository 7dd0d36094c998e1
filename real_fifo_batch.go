package cache

import (
	"time"
)

// batchableDeltaTypes are the delta types PopBatch may put into a batch of several deltas:
// those that change one object. ReplacedAll, SyncAll and Bookmark are always handed out alone.
var batchableDeltaTypes = map[DeltaType]bool{
	Added:    true,
	Updated:  true,
	Deleted:  true,
	Replaced: true,
	Sync:     true,
}

// PopBatch blocks until a delta is queued or the queue is closed and empty (then it returns
// ErrFIFOClosed), then removes the longest run of queued deltas, from the front, that can be
// processed together and hands it out: to processBatch if it holds several deltas, to
// processSingle (as a one-delta Deltas) if it holds one. It returns the process function's
// error.
//
// A batch holds at most 1000 deltas, all of batchable types (Added, Updated, Deleted,
// Replaced, Sync) and of distinct objects. It ends before the first delta that is not
// batchable (which, if it comes first, is handed out alone), before a second delta for an
// object already in the batch, at the end of the first Replace's population (so the initial
// list and later changes are never mixed), and after a delta whose key cannot be computed
// (that delta is included, and logged, so that the consumer sees and reports it).
//
// Locking and the slow-processing log ("RealFIFO PopBatch Process", threshold 100ms per
// delta, at most 1s) are as for Pop.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.waitLocked() {
		return ErrFIFOClosed
	}
	isInInitialList := !f.syncedClosed
	batch := f.takeBatchLocked()
	depth := f.items.Len()
	if depth > 0 {
		f.waker.wakeLocked()
	}
	if f.initialPopulationCount > 0 {
		defer f.countInitialProcessedLocked(len(batch))
	}
	f.metrics.numberOfQueuedItem.Set(float64(depth))

	start := f.clock.Now()
	var err error
	if len(batch) == 1 {
		single := Deltas(batch)
		err = f.processLocked(func() error { return processSingle(single, isInInitialList) })
	} else {
		err = f.processLocked(func() error { return processBatch(batch, isInInitialList) })
	}
	if depth > fifoTraceMinDepth {
		threshold := min(time.Duration(len(batch))*fifoSlowProcessThreshold, fifoSlowBatchThreshold)
		f.logSlow("RealFIFO PopBatch Process", batch[0], depth, len(batch), f.clock.Since(start), threshold)
	}
	return err
}

// takeBatchLocked removes the next batch from the queue, which must not be empty.
func (f *RealFIFO) takeBatchLocked() []Delta {
	limit := min(f.items.Len(), f.batchSize)
	if f.initialPopulationCount > 0 {
		limit = min(limit, f.initialPopulationCount)
	}
	first := f.items.At(0)
	if !batchableDeltaTypes[first.Type] || limit == 1 {
		f.items.PopFront()
		return []Delta{first}
	}

	clear(f.batchKeys)
	n := 0
	for ; n < limit; n++ {
		d := f.items.At(n)
		if !batchableDeltaTypes[d.Type] {
			break
		}
		key, err := f.keyOf(d)
		if err != nil {
			// Only a key function that changed its mind since the delta was queued gets
			// here. Hand the delta to the consumer, whose own key lookup will report it, and
			// end the batch so that the batch's objects stay distinct.
			f.logger.Error(err, "Cannot compute the key of a queued delta; ending the batch with it", "type", d.Type)
			n++
			break
		}
		if _, dup := f.batchKeys[key]; dup {
			break
		}
		f.batchKeys[key] = struct{}{}
	}
	batch := make([]Delta, n)
	for i := range batch {
		batch[i] = f.items.PopFront()
	}
	if len(f.batchKeys) > 2*defaultBatchSize {
		f.batchKeys = map[string]struct{}{} // do not keep an oversized map (tests may raise batchSize)
	}
	return batch
}
