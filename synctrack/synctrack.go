package synctrack

import (
	"sync"
	"sync/atomic"
)

// AsyncTracker tracks the keys of an initial list that are being processed in parallel, for
// example by several workqueue workers. It is synced once UpstreamHasSynced was called and
// every key passed to Start has been passed to Finished.
//
// Call Start for each key of the initial list before it is processed, Finished when it has
// been processed, and UpstreamHasSynced once the upstream (the informer or the event handler
// feeding the keys) reports that it has synced. Once synced, it stays synced: later Start calls
// do not change that.
//
// The zero value is usable and has an empty name. All methods are safe for concurrent use.
type AsyncTracker[T comparable] struct {
	name string

	// upstreamHasSynced turns true once, in UpstreamHasSynced.
	upstreamHasSynced atomic.Bool

	synced doneSignal

	// mu guards waiting.
	mu sync.Mutex
	// waiting holds the started keys that have not finished yet.
	waiting map[T]struct{}
}

// NewAsyncTracker returns an AsyncTracker whose Name is name.
func NewAsyncTracker[T comparable](name string) *AsyncTracker[T] {
	return &AsyncTracker[T]{name: name}
}

// Start records that key, part of the initial list, is about to be processed. O(1).
func (t *AsyncTracker[T]) Start(key T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.waiting == nil {
		t.waiting = make(map[T]struct{})
	}
	t.waiting[key] = struct{}{}
}

// Finished records that key has been processed. Keys are tracked individually, so calling
// Finished for a key that was never started, or twice, is harmless: that keeps it simple to call
// from a queue that does not know whether a key came from the initial list. O(1).
func (t *AsyncTracker[T]) Finished(key T) {
	t.mu.Lock()
	delete(t.waiting, key)
	idle := len(t.waiting) == 0
	t.mu.Unlock()
	if idle && t.upstreamHasSynced.Load() {
		t.synced.fire()
	}
}

// UpstreamHasSynced tells the tracker that the upstream has synced, that is, every key of the
// initial list has been passed to Start. Call it at least once, after those Start calls.
func (t *AsyncTracker[T]) UpstreamHasSynced() {
	t.upstreamHasSynced.Store(true)
	t.mu.Lock()
	idle := len(t.waiting) == 0
	t.mu.Unlock()
	if idle {
		t.synced.fire()
	}
}

// HasSynced reports whether the upstream has synced and every started key has finished. It
// does not block.
func (t *AsyncTracker[T]) HasSynced() bool {
	return t.synced.fired()
}

// Done returns a channel that is closed once HasSynced turns true.
func (t *AsyncTracker[T]) Done() <-chan struct{} {
	return t.synced.done()
}

// Name returns the name given to NewAsyncTracker.
func (t *AsyncTracker[T]) Name() string {
	return t.name
}

// SingleFileTracker tracks an initial list processed one item at a time, in order, such as by
// an informer's event handler. It only counts: Start adds one, Finished subtracts one, and the
// tracker is synced once UpstreamHasSynced was called and the count is zero.
//
// Finished without a matching Start is a programming error that would make HasSynced lie, so
// Finished panics when the count goes negative, as client-go's does, with a message that
// contains client-go's phrase "negative counter" (tests match on it).
//
// The zero value is usable and has an empty name. All methods are safe for concurrent use and
// cost O(1).
type SingleFileTracker struct {
	name string

	// count is the number of started items that have not finished.
	count atomic.Int64

	// upstreamHasSynced turns true once, in UpstreamHasSynced.
	upstreamHasSynced atomic.Bool

	synced doneSignal
}

// NewSingleFileTracker returns a SingleFileTracker whose Name is name.
func NewSingleFileTracker(name string) *SingleFileTracker {
	return &SingleFileTracker{name: name}
}

// Start records that an item of the initial list is about to be processed.
func (t *SingleFileTracker) Start() {
	t.count.Add(1)
}

// Finished records that an item passed to Start has been processed. It panics if there was no
// matching Start.
func (t *SingleFileTracker) Finished() {
	left := t.count.Add(-1)
	if left < 0 {
		panic("synctrack: negative counter; this logic error means HasSynced may return incorrect value (SingleFileTracker.Finished was called more often than Start)")
	}
	// The store to count happens before this load, and UpstreamHasSynced stores its flag before
	// loading count, so at least one of the two sees both and fires.
	if left == 0 && t.upstreamHasSynced.Load() {
		t.synced.fire()
	}
}

// UpstreamHasSynced tells the tracker that the upstream has synced, that is, every item of the
// initial list has been passed to Start. Call it at least once, after those Start calls.
func (t *SingleFileTracker) UpstreamHasSynced() {
	t.upstreamHasSynced.Store(true)
	if t.count.Load() == 0 {
		t.synced.fire()
	}
}

// HasSynced reports whether the upstream has synced and every started item has finished. It
// does not block.
func (t *SingleFileTracker) HasSynced() bool {
	return t.synced.fired()
}

// Done returns a channel that is closed once HasSynced turns true.
func (t *SingleFileTracker) Done() <-chan struct{} {
	return t.synced.done()
}

// Name returns the name given to NewSingleFileTracker.
func (t *SingleFileTracker) Name() string {
	return t.name
}
