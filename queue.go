package cache

import (
	"errors"
	"sync"
)

// ErrFIFOClosed is returned by a queue's Pop and PopBatch once the queue is closed and empty.
// Every queue type in this package returns this same value; compare with errors.Is.
var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// PopProcessFunc processes what a queue's Pop hands out. isInInitialList is true while the
// queue has not yet delivered everything of its first Replace.
type PopProcessFunc func(obj interface{}, isInInitialList bool) error

// ProcessBatchFunc processes a batch of deltas popped together; no two of them concern the same
// object.
type ProcessBatchFunc func(deltas []Delta, isInInitialList bool) error

// Queue is a ReflectorStore that also hands out what it accumulated, one item at a time, to a
// single consumer. It is safe for concurrent producers; Pop must be called from one goroutine.
type Queue interface {
	ReflectorStore

	// Pop blocks until an item is queued or the queue is closed. It removes the oldest item
	// and passes it to process, returning the item and process's error. Once the queue is
	// closed and empty it returns ErrFIFOClosed.
	Pop(PopProcessFunc) (interface{}, error)

	// HasSynced reports whether everything of the first Replace has been popped and processed
	// (or whether an Add, Update or Delete came before any Replace).
	HasSynced() bool

	// HasSyncedChecker returns a DoneChecker that is done when HasSynced turns true.
	HasSyncedChecker() DoneChecker

	// Close wakes every Pop; Pop returns ErrFIFOClosed once the queue is empty.
	Close()
}

// QueueWithBatch is a Queue that can also pop several items at once.
type QueueWithBatch interface {
	Queue

	// PopBatch pops one or more items. A batch of several goes to processBatch, a single item
	// to processSingle; both must process items the same way. Like Pop it is for one
	// consumer goroutine.
	PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error
}

// KeyListerGetter lists keys and looks objects up by key; queues use one (usually the indexer)
// as the set of objects the consumer already knows.
type KeyListerGetter interface {
	KeyLister
	KeyGetter
}

// KeyLister lists keys.
type KeyLister interface {
	ListKeys() []string
}

// KeyGetter looks an object up by key.
type KeyGetter interface {
	// GetByKey returns the object stored under key, or exists=false.
	GetByKey(key string) (value interface{}, exists bool, err error)
}

// queueRingMin is the minimum capacity of the rings of DeltaFIFO and RealFIFO: the first
// chunk they allocate, and what they keep once drained. An informer's queue mostly holds a
// few deltas between pops, and a new one often only one Replace.
const queueRingMin = 4

// popWaker lets a consumer blocked on an empty queue sleep until a producer queues something
// or the queue is closed, without sync.Cond. The owner's mutex guards both fields; ch has
// capacity one, so a wake-up is never lost and producers never block. A consumer that wakes
// must re-check its condition: a wake-up may be stale. The zero value is ready: ch is made by
// the first consumer that waits, so a queue that is never waited on (one Replace and Pop on a
// full queue, say) does not allocate it. DeltaFIFO and RealFIFO use it.
type popWaker struct {
	ch      chan struct{}
	waiters int
}

// waitLocked releases mu, sleeps until woken, and re-acquires mu. mu must be held.
func (w *popWaker) waitLocked(mu *sync.Mutex) {
	if w.ch == nil {
		w.ch = make(chan struct{}, 1)
	}
	ch := w.ch
	w.waiters++
	mu.Unlock()
	<-ch
	mu.Lock()
	w.waiters--
}

// wakeLocked wakes one sleeping consumer, if any. The owner's mutex must be held. A consumer
// that takes an item and leaves more behind, or that returns because the queue is closed,
// calls it again to pass the wake-up on.
func (w *popWaker) wakeLocked() {
	if w.waiters == 0 {
		return
	}
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// initialSync is the sync bookkeeping DeltaFIFO and RealFIFO share: whether the queue has
// been populated (by its first Replace, or by a write before it), how many deltas of that
// first Replace are still to be processed, and the channel closed once none is, which
// HasSynced and Done read. Both queues embed it; its fields are guarded by the queue's lock,
// except synced, which is only ever closed, so HasSynced takes no lock.
type initialSync struct {
	// name is the queue's name, for DoneChecker and its logger.
	name string
	// synced is closed once the initial population has been processed.
	synced chan struct{}
	// populated is set by the first Replace, or by an Add, Update or Delete before it.
	populated bool
	// initialPopulationCount is how many items of the first Replace are still to be
	// processed.
	initialPopulationCount int
	// syncedClosed records that synced was closed.
	syncedClosed bool
}

func newInitialSync(name string) initialSync {
	return initialSync{name: name, synced: make(chan struct{})}
}

// HasSyncedChecker returns a DoneChecker, named after the queue, that is done when HasSynced
// turns true.
func (s *initialSync) HasSyncedChecker() DoneChecker {
	return s
}

// Name returns the queue's name, for DoneChecker.
func (s *initialSync) Name() string {
	return s.name
}

// Done returns a channel that is closed when HasSynced turns true, for DoneChecker.
func (s *initialSync) Done() <-chan struct{} {
	return s.synced
}

// checkSyncedLocked closes synced once the initial population is processed. It must run after
// every change of populated or initialPopulationCount.
func (s *initialSync) checkSyncedLocked() {
	if s.populated && s.initialPopulationCount == 0 && !s.syncedClosed {
		s.syncedClosed = true
		close(s.synced)
	}
}

// populateLocked marks the queue populated: by a first Replace that queued n items, or (n = 0)
// by a write.
func (s *initialSync) populateLocked(n int) {
	if !s.populated {
		s.populated = true
		s.initialPopulationCount = n
	}
	s.checkSyncedLocked()
}

// countInitialProcessedLocked records that n items of the initial population were processed.
func (s *initialSync) countInitialProcessedLocked(n int) {
	if s.initialPopulationCount > 0 {
		s.initialPopulationCount = max(0, s.initialPopulationCount-n)
		s.checkSyncedLocked()
	}
}
