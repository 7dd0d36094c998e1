package workqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Interface is the untyped work queue interface.
//
// Deprecated: use TypedInterface instead.
type Interface TypedInterface[any]

// TypedInterface is a work queue of items of type T: producers Add items, workers Get an item,
// process it and call Done. An item is never handed to two workers at once, and an item added
// again while a worker holds it is handed out again after that worker calls Done.
type TypedInterface[T comparable] interface {
	// Add marks item as needing processing. Adds after shutdown are dropped.
	Add(item T)
	// Len reports how many items wait to be taken, for information only.
	Len() int
	// Get blocks until an item is available and returns it, or returns shutdown == true once the
	// queue is shut down and has nothing left to hand out. The caller must call Done(item).
	Get() (item T, shutdown bool)
	// Done marks item as processed. If it was added again meanwhile, it is queued again.
	Done(item T)
	// ShutDown stops accepting new items and makes Get return shutdown once the queue is empty.
	ShutDown()
	// ShutDownWithDrain is ShutDown, and then waits until no item is being processed.
	ShutDownWithDrain()
	// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
	ShuttingDown() bool
}

// Queue is the ordering policy of a Typed queue: it holds the items that wait to be taken. The
// Typed queue calls its methods with its own lock held, so an implementation needs no locking
// of its own, must not block and must not call back into the queue. An item is pushed at most
// once until it is popped.
type Queue[T comparable] interface {
	// Touch is called when item, already waiting in the queue, is added again. An
	// implementation can use it to change the item's priority; the default ignores it.
	Touch(item T)
	// Push adds an item that is not in the queue.
	Push(item T)
	// Len returns the number of items in the queue.
	Len() int
	// Pop removes and returns the next item. It is only called when Len() > 0.
	Pop() (item T)
}

// DefaultQueue returns the default ordering policy: first in, first out. It is a ring buffer
// that grows and shrinks with its contents and drops its reference to an item when the item
// is popped. Push and Pop are amortized O(1).
func DefaultQueue[T comparable]() Queue[T] {
	return new(fifo[T])
}

// QueueConfig configures an untyped queue.
//
// Deprecated: use TypedQueueConfig instead.
type QueueConfig = TypedQueueConfig[any]

// TypedQueueConfig configures a Typed queue. The zero value is a valid configuration.
type TypedQueueConfig[T comparable] struct {
	// Name is the queue's name in metrics. Metrics are only recorded for named queues.
	Name string

	// MetricsProvider creates the queue's metrics. Defaults to the provider set with
	// SetProvider, which defaults to one that records nothing.
	MetricsProvider MetricsProvider

	// Clock is used for metrics timing. Defaults to clock.RealClock{}.
	Clock clock.WithTicker

	// Queue orders waiting items. Defaults to DefaultQueue[T]().
	Queue Queue[T]
}

// Type is the untyped work queue.
//
// Deprecated: use Typed instead.
type Type = Typed[any]

// New returns an unnamed untyped queue.
//
// Deprecated: use NewTyped instead.
func New() *Type {
	return NewWithConfig(QueueConfig{})
}

// NewNamed returns an untyped queue whose metrics are recorded under name.
//
// Deprecated: use NewWithConfig instead.
func NewNamed(name string) *Type {
	return NewWithConfig(QueueConfig{Name: name})
}

// NewWithConfig returns an untyped queue configured by config.
//
// Deprecated: use NewTypedWithConfig instead.
func NewWithConfig(config QueueConfig) *Type {
	return NewTypedWithConfig(config)
}

// NewTyped returns an unnamed FIFO queue of items of type T. It records no metrics.
func NewTyped[T comparable]() *Typed[T] {
	return NewTypedWithConfig(TypedQueueConfig[T]{})
}

// NewTypedWithConfig returns a queue configured by config. A named queue with a metrics
// provider runs one goroutine that updates the unfinished-work gauges; ShutDown or
// ShutDownWithDrain stops it.
func NewTypedWithConfig[T comparable](config TypedQueueConfig[T]) *Typed[T] {
	return newTyped(config, unfinishedWorkUpdatePeriod)
}

// unfinishedWorkUpdatePeriod is how often the unfinished-work and longest-running gauges are
// refreshed, as in client-go.
const unfinishedWorkUpdatePeriod = 500 * time.Millisecond

func newTyped[T comparable](config TypedQueueConfig[T], updatePeriod time.Duration) *Typed[T] {
	provider := config.MetricsProvider
	if provider == nil {
		provider = globalProvider()
	}
	if config.Clock == nil {
		config.Clock = clock.RealClock{}
	}
	q := &Typed[T]{
		queue:   config.Queue,
		clock:   config.Clock,
		metrics: newQueueMetrics[T](provider, config.Name, config.Clock),
		hasher:  newItemHasher(),
		stopCh:  make(chan struct{}),
	}
	if q.queue == nil {
		q.queue = &q.ring
	}
	q.fifo, _ = q.queue.(*fifo[T])
	q.locked = q.fifo == nil
	if q.fifo != nil && q.metrics != nil {
		q.fifo.timed = true // the FIFO keeps each item's add time, instead of a map
	}
	for i := range q.shards {
		q.shards[i].met = q.metrics.newItemMetrics()
	}
	q.waiterPool.New = func() any { return &waiter[T]{ready: make(chan struct{}, 1)} }
	if q.metrics != nil {
		q.wg.Add(1)
		go q.updateUnfinishedWorkLoop(updatePeriod)
	}
	return q
}

// waiter is a Get blocked on an empty queue. Add hands it an item directly, so the worker
// wakes up with its item without taking the lock again. The item is set under the lock, and
// the wake-up is sent after the lock is released, to keep the critical section short.
type waiter[T any] struct {
	item  T
	start time.Time     // when its processing started, for the metrics (countGet)
	ok    bool          // false: woken by shutdown
	ready chan struct{} // capacity 1
}

// Typed is a work queue of items of type T (see TypedInterface). Items are handed out in the
// order of its Queue, FIFO by default. Create it with NewTyped or NewTypedWithConfig; the zero
// value is not usable. All methods are safe for concurrent use; Add, Get and Done are O(1)
// plus the cost of the Queue.
//
// Locking. With the default FIFO, an item's state (dirty, processing) lives in one of
// itemShardCount shards chosen by its hash, under that shard's lock, and mu only orders the FIFO
// and the blocked Gets. An Add of an item that is already queued and a Done of an item that was not
// added again take only their shard's lock; to queue an item, Add (or Done) marks it dirty under
// its shard's lock, releases that, and pushes it under mu, so no two locks are ever held together
// and a worker that takes the item at once does not find its shard locked. Until the push the item
// is dirty but not queued, which only another Add can see (and is absorbed by, as it would be a
// moment later); Get, ShutDown and Done reach only queued or processing items. No item state is
// read or written under mu. One lock for everything made every Add, Get and Done queue behind every
// other: with 4–16 producers and workers on a few CPUs, Go's mutex then falls into its starvation
// mode (FIFO hand-over, a goroutine switch per Unlock), and the queue alternated between that and
// normal mode from run to run. The metrics' per-item bookkeeping (add times, running items) lives
// in the shards, under their locks; the calls into the metric objects are made under mu, as
// client-go makes them under its lock, so they come one at a time and in each item's order (a lock
// of their own, taken three times per item, was the next lock for every goroutine to queue on). An
// item that keeps being added while it waits, or while it is processed, becomes hot (see hotTable):
// from then on an Add that finds it still waiting, or being processed and already due again, takes
// no lock at all and writes nothing. A custom Queue, whose Touch must see every re-Add, puts the
// queue in locked mode: every operation runs under mu, as before, and no item becomes hot.
type Typed[T comparable] struct {
	queue   Queue[T]
	fifo    *fifo[T] // queue itself when it is the default one, to skip interface calls
	clock   clock.WithTicker
	metrics *queueMetrics[T] // nil when nothing is recorded
	locked  bool             // a custom Queue: every operation holds mu; shard locks are not used
	// down mirrors shuttingDown for lock-free reads; draining is set by ShutDownWithDrain.
	// Every Add reads down and every Done draining: they sit with the fields that are only
	// read, away from the lines that change under mu (next to processing, every Add had to
	// fetch the line each Get and Done had just written).
	down     atomic.Bool
	draining atomic.Bool
	hasher   itemHasher

	// hot holds each shard's table of hot items (see hotTable), apart from the shards: Adds
	// read it without a lock while the shards' cache lines are written.
	hot    [itemShardCount]atomic.Pointer[hotTable[T]]
	shards [itemShardCount]itemShard[T]
	// candidates holds each shard's candidates for promotion; under the shard's lock.
	candidates [itemShardCount]hotCandidates

	// mu guards the fields below, the Queue and the metrics bookkeeping (and, in locked
	// mode, the shards).
	mu sync.Mutex
	// ring is the default Queue, when the config names none: it sits next to mu, so that the
	// cache line a worker or producer pulls in to take the lock brings the ring's indexes
	// along (an allocated FIFO cost one more transfer of a line between CPUs per Add and Get,
	// about 5% of the contended queue's time).
	ring         fifo[T]
	waiters      []*waiter[T]
	shuttingDown bool
	drained      chan struct{} // closed when processing reaches 0 during a drain

	// processing counts the items between Get and Done. It is raised under mu; Done lowers it
	// without mu and takes mu only when a drain waits (draining).
	processing atomic.Int64

	waiterPool sync.Pool // of *waiter[T]; per queue so that channels stay in one synctest bubble
	stopCh     chan struct{}
	stopOnce   sync.Once
	wg         sync.WaitGroup
}

// shard returns item's shard and its hash.
func (q *Typed[T]) shard(item T) (*itemShard[T], uint64) {
	h := itemHash(&q.hasher, item)
	return &q.shards[h>>shardShift], h
}

// Add marks item as needing processing. If the item is already waiting, Add only touches it
// in the Queue; if a worker holds it, it is queued again when the worker calls Done. Adds after
// shutdown are dropped silently.
func (q *Typed[T]) Add(item T) {
	if q.locked {
		q.mu.Lock()
		w := q.addLocked(item)
		q.mu.Unlock()
		w.wake()
		return
	}
	if q.down.Load() {
		return
	}
	sh, h := q.shard(item)
	if t := q.hot[h>>shardShift].Load(); t != nil && t.absorbs(item, h) {
		return // a hot item still waiting, or to be queued by its Done: absorbed without the lock
	}
	if !sh.mu.TryLock() {
		sh.mu.Lock()
		q.candidates[h>>shardShift].contended() // Adds from several goroutines: see hotTable
	}
	if queue, _, readded := q.markAdded(sh, item, h); !queue {
		sh.mu.Unlock()
		if readded && q.metrics != nil {
			q.mu.Lock()
			q.metrics.countAdd()
			q.mu.Unlock()
		}
		return
	}
	// The item is now dirty but not yet queued. The shard lock is released first (a worker
	// that takes the item at once then does not find it held): an Add of the item in between
	// is absorbed, as it would be a moment later, and nothing else can reach the item before
	// it is queued: Get and ShutDown see only queued items, Done only processing ones.
	sh.mu.Unlock()
	// The clock is read before the lock is taken: every read under it made the lock's hold,
	// which every Add and Get waits for, longer.
	now := q.metrics.now()
	added := q.metrics.addTime(sh.met, item, true, now)
	q.mu.Lock()
	if q.shuttingDown {
		q.mu.Unlock()
		sh.mu.Lock()
		sh.abandonDirty(item, h)
		q.setHotState(item, h, slotIdle)
		sh.mu.Unlock()
		return
	}
	q.metrics.countAdd()
	w := q.pushLocked(item, added, now)
	q.mu.Unlock()
	w.wake()
}

// markAdded records an Add of item, of hash h, in its shard sh, whose guard the caller holds.
// waiting reports that the item already waits in the queue (the Add is absorbed, and may make
// the item hot); an item being processed is marked to be queued again by its Done, and
// readded reports the first such Add, which the caller counts in the metrics (countAdd, under
// the queue's lock); otherwise the item is marked dirty and queue reports that the caller
// must queue it now (and count it).
func (q *Typed[T]) markAdded(sh *itemShard[T], item T, h uint64) (queue, waiting, readded bool) {
	switch st := sh.state(item, h); st {
	case stateWaiting:
		q.absorbedLocked(sh, item, h, slotWaiting)
		return false, true, false
	case stateProcessing, stateAgain:
		if sh.markAddedAgain(item, h, st) { // its Done queues it
			q.setHotState(item, h, slotAgain)
			q.metrics.addTime(sh.met, item, false, q.metrics.now())
			return false, false, true
		}
		q.absorbedLocked(sh, item, h, slotAgain)
		return false, false, false
	}
	q.addDirty(sh, item, h)
	return true, false, false
}

// absorbedLocked records an Add of item, of hash h, absorbed under its shard's lock, which
// may promote the item (see hotCandidates); state is the item's hot state (slotWaiting or
// slotAgain). A custom Queue sees every re-Add (Touch): no lock-free path in locked mode.
func (q *Typed[T]) absorbedLocked(sh *itemShard[T], item T, h uint64, state uint32) {
	if c := &q.candidates[h>>shardShift]; c.heat != 0 && !q.locked && c.absorbed(h) {
		q.promote(sh, item, h, state)
	}
}

// addDirty marks item, of hash h, which is neither waiting nor being processed, as waiting.
// Under its shard's guard.
func (q *Typed[T]) addDirty(sh *itemShard[T], item T, h uint64) {
	sh.addDirty(item, h)
	q.setHotState(item, h, slotWaiting)
}

func (q *Typed[T]) addLocked(item T) *waiter[T] {
	if q.shuttingDown {
		return nil
	}
	sh, h := q.shard(item)
	queue, waiting, readded := q.markAdded(sh, item, h)
	if waiting {
		q.queue.Touch(item) // locked mode has a custom Queue, which sees every re-Add
	}
	if readded {
		q.metrics.countAdd()
	}
	if !queue {
		return nil
	}
	// A custom Queue cannot carry the add time: the metrics keep it.
	q.metrics.countAdd()
	now := q.metrics.now()
	return q.pushLocked(item, q.metrics.addTime(sh.met, item, false, now), now)
}

// Len returns the number of items waiting to be taken. It is informational: do not gate Add or
// Get on it.
func (q *Typed[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lenLocked()
}

// Get blocks until it can return an item, which the caller then holds until it calls
// Done(item). After shutdown Get keeps returning the items still waiting; once there are none
// it returns the zero T and shutdown == true, at once, and the caller should stop.
func (q *Typed[T]) Get() (item T, shutdown bool) {
	now := q.metrics.now() // before the lock, as in Add
	q.mu.Lock()
	if q.lenLocked() > 0 {
		item, start := q.takeLocked(now)
		q.mu.Unlock()
		q.startProcessing(item, start)
		return item, false
	}
	if q.shuttingDown {
		q.mu.Unlock()
		return item, true
	}
	w := q.waiterPool.Get().(*waiter[T])
	q.waiters = append(q.waiters, w)
	q.mu.Unlock()
	<-w.ready
	item, shutdown = w.item, !w.ok
	start := w.start
	var zero T
	w.item, w.start, w.ok = zero, time.Time{}, false
	q.waiterPool.Put(w)
	if !shutdown {
		q.startProcessing(item, start)
	}
	return item, shutdown
}

// startProcessing moves item, just taken from the Queue (by takeLocked, whose start time for
// the metrics it gets), from dirty to processing. Until then it stays dirty, so an Add in
// between is absorbed by this processing, which begins after it.
func (q *Typed[T]) startProcessing(item T, start time.Time) {
	if q.locked {
		return // done by takeLocked
	}
	sh, h := q.shard(item)
	sh.mu.Lock()
	q.metrics.startRun(sh.met, item, start)
	q.moveToProcessing(sh, item, h)
	sh.mu.Unlock()
}

// moveToProcessing moves item, of hash h, from waiting to being processed. Under its shard's
// guard.
func (q *Typed[T]) moveToProcessing(sh *itemShard[T], item T, h uint64) {
	sh.startProcessing(item, h)
	q.setHotState(item, h, slotIdle)
	if sh.waiting == 0 {
		q.pruneHot(sh, h)
	}
}

// Done ends the processing of item. If the item was added while it was being processed, it is
// queued again. Done of an item that is not being processed (never taken, or already done) is
// ignored; client-go would queue such an item twice if it was waiting.
func (q *Typed[T]) Done(item T) {
	if q.locked {
		q.mu.Lock()
		w := q.doneLocked(item)
		q.mu.Unlock()
		w.wake()
		return
	}
	sh, h := q.shard(item)
	sh.mu.Lock()
	addedAgain, ok := sh.endProcessing(item, h)
	if !ok {
		sh.mu.Unlock()
		return
	}
	took, ran := q.metrics.endRun(sh.met, item)
	var w *waiter[T]
	if addedAgain {
		// As in Add: marked dirty (by endProcessing), then queued after the shard lock is
		// released. Done queues it even while shutting down, as client-go does, so that it can
		// still be drained.
		q.setHotState(item, h, slotWaiting)
		added := q.metrics.takeAddTime(sh.met, item)
		sh.mu.Unlock()
		now := q.metrics.now()
		q.mu.Lock()
		if ran {
			q.metrics.countDone(took)
		}
		w = q.pushLocked(item, added, now)
		q.mu.Unlock()
	} else {
		sh.mu.Unlock()
		if ran {
			q.mu.Lock()
			q.metrics.countDone(took)
			q.mu.Unlock()
		}
	}
	if q.processing.Add(-1) == 0 && q.draining.Load() {
		q.mu.Lock()
		q.releaseDrainLocked()
		q.mu.Unlock()
	}
	w.wake()
}

func (q *Typed[T]) doneLocked(item T) *waiter[T] {
	sh, h := q.shard(item)
	addedAgain, ok := sh.endProcessing(item, h)
	if !ok {
		return nil
	}
	if took, ran := q.metrics.endRun(sh.met, item); ran {
		q.metrics.countDone(took)
	}
	q.processing.Add(-1)
	var w *waiter[T]
	if addedAgain {
		q.setHotState(item, h, slotWaiting)
		w = q.pushLocked(item, noTime, q.metrics.now()) // a custom Queue: the add time stays in the map
	}
	q.releaseDrainLocked()
	return w
}

// releaseDrainLocked ends a ShutDownWithDrain's wait once nothing is being processed.
func (q *Typed[T]) releaseDrainLocked() {
	if q.drained != nil && q.processing.Load() == 0 {
		close(q.drained)
		q.drained = nil
	}
}

// ShutDown makes the queue ignore new items. Workers keep getting the items that are still
// waiting; then Get returns shutdown == true. ShutDown ends a ShutDownWithDrain that is
// waiting, and returns after the queue's metrics goroutine, if any, has stopped. It may be
// called more than once.
func (q *Typed[T]) ShutDown() {
	q.mu.Lock()
	waiters := q.shutDownLocked(false)
	q.mu.Unlock()
	for _, w := range waiters {
		w.wake()
	}
	q.stopBackground()
}

// ShutDownWithDrain is ShutDown, and then waits until no item is being processed: until every
// item taken by a worker is Done. Items still waiting to be taken, including one queued again
// by its Done, are not waited for (workers still get them), as in client-go. A ShutDown call
// ends the wait early. Workers must call Done for every item they Get, or ShutDownWithDrain
// blocks forever.
func (q *Typed[T]) ShutDownWithDrain() {
	q.mu.Lock()
	waiters := q.shutDownLocked(true)
	q.draining.Store(true) // before reading processing: see Done
	var wait chan struct{}
	if q.processing.Load() > 0 {
		if q.drained == nil {
			q.drained = make(chan struct{})
		}
		wait = q.drained
	}
	q.mu.Unlock()
	for _, w := range waiters {
		w.wake()
	}
	if wait != nil {
		<-wait
	}
	q.stopBackground()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called. It takes no lock.
func (q *Typed[T]) ShuttingDown() bool {
	return q.down.Load()
}

// shutDownLocked marks the queue as shutting down and returns the blocked Gets, which the
// caller wakes after unlocking: they report shutdown. A plain ShutDown also releases anyone
// waiting for a drain.
func (q *Typed[T]) shutDownLocked(drain bool) []*waiter[T] {
	q.shuttingDown = true
	q.down.Store(true)
	waiters := q.waiters
	q.waiters = nil
	if !drain && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	return waiters
}

func (q *Typed[T]) stopBackground() {
	q.stopOnce.Do(func() { close(q.stopCh) })
	q.wg.Wait()
}

// pushLocked queues item with its add time for the metrics (or noTime). If a Get is blocked,
// it takes the next item for it at once and returns it, for the caller to wake after
// unlocking. Waiters exist only while the Queue is empty, so the order of the Queue is kept.
func (q *Typed[T]) pushLocked(item T, added int64, now time.Time) *waiter[T] {
	if q.fifo != nil {
		q.fifo.pushAt(item, added)
	} else {
		q.queue.Push(item)
	}
	n := len(q.waiters)
	if n == 0 {
		return nil
	}
	w := q.waiters[n-1]
	q.waiters[n-1] = nil
	q.waiters = q.waiters[:n-1]
	w.item, w.start = q.takeLocked(now)
	w.ok = true
	return w
}

// wake lets a waiter's Get return; w may be nil. The channel has room: one wake per wait.
func (w *waiter[T]) wake() {
	if w != nil {
		w.ready <- struct{}{}
	}
}

// takeLocked pops the next item, counts it as processing and in the metrics, and returns it
// with the time its processing starts, for the metrics. In locked mode it also moves it from
// dirty to processing; otherwise the caller does that after unlocking (startProcessing).
func (q *Typed[T]) takeLocked(now time.Time) (item T, start time.Time) {
	added := int64(noTime)
	if q.fifo != nil {
		item, added = q.fifo.popAt()
	} else {
		item = q.queue.Pop()
	}
	q.processing.Add(1)
	if !q.locked {
		// The FIFO carries every item's add time; the shard's bookkeeping is not ours here.
		return item, q.metrics.countGet(nil, item, added, now)
	}
	sh, h := q.shard(item)
	start = q.metrics.countGet(sh.met, item, added, now)
	q.metrics.startRun(sh.met, item, start)
	q.moveToProcessing(sh, item, h)
	return item, start
}

func (q *Typed[T]) lenLocked() int {
	if q.fifo != nil {
		return q.fifo.Len()
	}
	return q.queue.Len()
}

// shrinkThreshold is the size above which an emptied map or buffer is reallocated.
const shrinkThreshold = 1024

// shrinkCap returns the capacity a buffer of capacity c holding n items should shrink to, or
// 0 to keep it. A buffer shrinks to a quarter once it is less than 1/16 full, and back to
// shrinkThreshold once empty: memory stays within 16 times what is held (or
// shrinkThreshold), and draining a burst reallocates only about a third of the buffer.
func shrinkCap(n, c int) int {
	switch {
	case c <= shrinkThreshold:
		return 0
	case n == 0:
		return shrinkThreshold
	case n < c/16:
		return max(c/4, shrinkThreshold)
	}
	return 0
}

func (q *Typed[T]) updateUnfinishedWorkLoop(period time.Duration) {
	defer q.wg.Done()
	t := q.clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-q.stopCh:
			return
		case <-t.C():
			q.updateUnfinishedWork()
		}
	}
}

// updateUnfinishedWork sets the unfinished-work and longest-running gauges from every shard's
// items being processed, unless the queue is shutting down. In locked mode it holds mu
// throughout; otherwise it takes each shard's lock in turn, without mu.
func (q *Typed[T]) updateUnfinishedWork() {
	var u unfinished
	q.mu.Lock()
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	if q.locked {
		for i := range q.shards {
			collectUnfinished(&u, q.shards[i].met)
		}
	} else {
		q.mu.Unlock()
		for i := range q.shards {
			sh := &q.shards[i]
			sh.mu.Lock()
			collectUnfinished(&u, sh.met)
			sh.mu.Unlock()
		}
		q.mu.Lock()
	}
	q.metrics.setUnfinishedWork(&u) // the metric objects are called under mu
	q.mu.Unlock()
}

// fifo is the default Queue: a ring buffer whose length is a power of two.
type fifo[T comparable] struct {
	buf  []T
	head int
	n    int

	// timed says that the queue records metrics: times then holds each queued item's add
	// time (an offset from the metrics' base, or noTime) in the slot of the item in buf.
	timed bool
	times []int64
}

// Touch does nothing: re-adding an item does not move it.
func (f *fifo[T]) Touch(T) {}

// Push appends item, doubling the buffer when it is full.
func (f *fifo[T]) Push(item T) { f.pushAt(item, noTime) }

// pushAt appends item with its add time, kept if the FIFO is timed.
func (f *fifo[T]) pushAt(item T, added int64) {
	if f.n == len(f.buf) {
		f.resize(max(2*len(f.buf), 16))
	}
	i := (f.head + f.n) & (len(f.buf) - 1)
	f.buf[i] = item
	if f.timed {
		f.times[i] = added
	}
	f.n++
}

// Len returns the number of queued items.
func (f *fifo[T]) Len() int { return f.n }

// Pop removes the oldest item and clears its slot; the buffer shrinks as shrinkCap says.
func (f *fifo[T]) Pop() T {
	item, _ := f.popAt()
	return item
}

// popAt is Pop, also returning the item's add time (noTime unless the FIFO is timed).
func (f *fifo[T]) popAt() (item T, added int64) {
	var zero T
	item, added = f.buf[f.head], noTime
	f.buf[f.head] = zero
	if f.timed {
		added = f.times[f.head]
	}
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	if c := shrinkCap(f.n, len(f.buf)); c > 0 {
		f.resize(c)
	}
	return item, added
}

func (f *fifo[T]) resize(size int) {
	f.buf = moveRing(f.buf, f.head, f.n, size)
	if f.timed {
		f.times = moveRing(f.times, f.head, f.n, size)
	}
	f.head = 0
}

// moveRing copies the n elements of the ring buf starting at head, in order, to the start of a
// new slice of the given size.
func moveRing[E any](buf []E, head, n, size int) []E {
	out := make([]E, size)
	if n > 0 {
		k := copy(out, buf[head:min(head+n, len(buf))])
		copy(out[k:], buf[:n-k])
	}
	return out
}
