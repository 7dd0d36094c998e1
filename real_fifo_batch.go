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
// object already in the batch, and at the end of the first Replace's population (so the
// initial list and later changes are never mixed). Objects are told apart by the key computed
// when they were queued; client-go computes keys again here and also ends a batch at an
// object whose key can no longer be computed, which only a key function that changes its
// mind can cause.
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
	first, _ := f.items.Peek()
	firstKey := first.key
	batch := f.takeBatchLocked()
	depth := f.items.Len()
	if depth > 0 {
		f.waker.wakeLocked()
	}
	if f.initialPopulationCount > 0 {
		defer f.countInitialProcessedLocked(len(batch))
	}
	f.metrics.numberOfQueuedItem.Set(float64(depth))

	if f.releaseForProcessingLocked() {
		defer f.mu.Lock()
	}
	timed := f.timeAlways || depth > fifoTraceMinDepth
	var start time.Time
	if timed {
		start = f.clock.Now()
	}
	var err error
	if len(batch) == 1 {
		err = processSingle(Deltas(batch), isInInitialList)
	} else {
		err = processBatch(batch, isInInitialList)
	}
	if timed {
		threshold := min(time.Duration(len(batch))*fifoSlowProcessThreshold, fifoSlowBatchThreshold)
		f.observeProcessing("RealFIFO PopBatch Process", firstKey, depth, len(batch), f.clock.Since(start), threshold)
	}
	return err
}

// takeBatchLocked removes the next batch from the queue, which must not be empty.
func (f *RealFIFO) takeBatchLocked() []Delta {
	limit := min(f.items.Len(), f.batchSize)
	if f.initialPopulationCount > 0 {
		limit = min(limit, f.initialPopulationCount)
	}
	if first, _ := f.items.Peek(); !batchableDeltaTypes[first.Type] || limit == 1 {
		f.items.Pop()
		return []Delta{first.Delta}
	}

	if f.batchKeys == nil {
		f.batchKeys = make(map[string]struct{}, limit)
	}
	clear(f.batchKeys)
	n := 0
	for d := range f.items.All() {
		if n == limit || !batchableDeltaTypes[d.Type] {
			break
		}
		if _, dup := f.batchKeys[d.key]; dup {
			break
		}
		f.batchKeys[d.key] = struct{}{}
		n++
	}
	batch := make([]Delta, n)
	for i := range batch {
		d, _ := f.items.Pop()
		batch[i] = d.Delta
	}
	if len(f.batchKeys) > 2*defaultBatchSize {
		f.batchKeys = nil // do not keep an oversized map (tests may raise batchSize)
	}
	return batch
}
