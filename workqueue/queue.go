package workqueue

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/ring"
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
// is popped. Push and Pop are O(1), apart from allocating storage as the queue grows.
func DefaultQueue[T comparable]() Queue[T] {
	return new(fifo[T])
}

// fifo is the default Queue: first in, first out, in a ring.Ring.
type fifo[T comparable] struct {
	ring ring.Ring[T]
}

// Touch does nothing: re-adding an item does not move it.
func (f *fifo[T]) Touch(T) {}

// Push appends item.
func (f *fifo[T]) Push(item T) { f.ring.Push(item) }

// Len returns the number of queued items.
func (f *fifo[T]) Len() int { return f.ring.Len() }

// Pop removes and returns the oldest item.
func (f *fifo[T]) Pop() T {
	item, _ := f.ring.Pop()
	return item
}

// QueueConfig configures an untyped queue.
//
// Deprecated: use TypedQueueConfig instead.
type QueueConfig = TypedQueueConfig[any]

// TypedQueueConfig configures a Typed queue. The zero value is a valid configuration.
type TypedQueueConfig[T comparable] struct {
	// Name is the queue's name in metrics and in Queues. Metrics are only recorded for named
	// queues, unless the provider is an ExtendedMetricsProvider. Defaults to a name derived
	// from the function that creates the queue (see Queues).
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

// NewTypedWithConfig returns a queue configured by config. A measured queue runs one
// goroutine that updates the unfinished-work gauges (and, with an ExtendedMetricsProvider,
// depth and adds) every 500ms; ShutDown or ShutDownWithDrain stops it.
func NewTypedWithConfig[T comparable](config TypedQueueConfig[T]) *Typed[T] {
	return newTyped(config, resolveName(config.Name), unfinishedWorkUpdatePeriod)
}

// unfinishedWorkUpdatePeriod is how often the unfinished-work and longest-running gauges are
// refreshed, as in client-go.
const unfinishedWorkUpdatePeriod = 500 * time.Millisecond

func newTyped[T comparable](config TypedQueueConfig[T], name queueName, updatePeriod time.Duration) *Typed[T] {
	provider := config.MetricsProvider
	if provider == nil {
		provider = globalProvider()
	}
	if config.Clock == nil {
		config.Clock = clock.RealClock{}
	}
	if config.Queue == nil {
		config.Queue = DefaultQueue[T]()
	}
	q := &Typed[T]{
		queue:   config.Queue,
		clock:   config.Clock,
		name:    name,
		metrics: newQueueMetrics[T](provider, name, config.Clock),
		items:   make(map[T]itemState),
		stopCh:  make(chan struct{}),
	}
	q.cond = sync.NewCond(&q.mu)
	q.regID = register(q)
	if q.metrics != nil && q.metrics.provided {
		q.wg.Add(1)
		go q.updateUnfinishedWorkLoop(updatePeriod)
	}
	return q
}

// itemState is the state of an item the queue knows: its phase in the low bits, the metrics'
// timing in the others (startExact…). An item in no phase is absent from items. (For keys of
// 8 or 16 bytes a map slot takes as much room with 8 bytes of state as with 1.)
type itemState uint64

// The phases.
const (
	stateWaiting    itemState = iota + 1 // added and not yet taken by Get
	stateProcessing                      // between Get and Done
	stateAgain                           // processing, and added again since its Get: its Done queues it
	phaseMask       itemState = 0x0f
)

// phase returns the phase of st without its timing flags.
func (st itemState) phase() itemState { return st & phaseMask }

// Typed is a work queue of items of type T (see TypedInterface). Items are handed out in the
// order of its Queue, FIFO by default. Create it with NewTyped or NewTypedWithConfig; the zero
// value is not usable. All methods are safe for concurrent use; Add, Get and Done are O(1)
// plus the cost of the Queue.
//
// One mutex guards everything, as in client-go, and a blocked Get waits on a sync.Cond that
// Add, Done and ShutDown signal (Get takes no context: ShutDown is what ends its wait). A
// controller's reconcile takes a thousand times longer than a queue operation, so the queue
// is built to be easy to check rather than to spread over CPUs (BENCHMARKS.md,
// "Workqueue").
type Typed[T comparable] struct {
	queue   Queue[T]
	clock   clock.WithTicker
	name    queueName
	metrics *queueMetrics[T] // nil when nothing is recorded
	regID   uint64           // in the registry of Queues

	// mu guards the fields below, the Queue and the metrics.
	mu   sync.Mutex
	cond *sync.Cond // on mu: signalled when an item is queued, broadcast at shutdown
	// items holds the state of every item that is waiting or being processed.
	items        map[T]itemState
	itemsSize    burstSize // of items
	processing   int       // items in stateProcessing or stateAgain
	shuttingDown bool
	drained      chan struct{} // closed when processing reaches 0 during a drain
	adds         int64         // adds that made an item dirty, for Queues
	delaying     delayStatus   // the delaying queue feeding this one, if any

	stopCh   chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// Add marks item as needing processing. If the item is already waiting, Add only touches it
// in the Queue; if a worker holds it, it is queued again when the worker calls Done. Adds after
// shutdown are dropped silently.
func (q *Typed[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	st := q.items[item]
	switch st.phase() {
	case stateWaiting:
		q.queue.Touch(item)
		return
	case stateAgain:
		return
	case stateProcessing:
		st = st&^phaseMask | stateAgain // its Done queues it
	default:
		st = stateWaiting
	}
	q.adds++
	if q.metrics != nil {
		st |= q.metrics.add(item)
	}
	q.items[item] = st
	if st.phase() == stateWaiting {
		q.itemsSize.grew(len(q.items))
		q.queue.Push(item)
		q.cond.Signal()
	}
}

// Len returns the number of items waiting to be taken. It is informational: do not gate Add or
// Get on it.
func (q *Typed[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queue.Len()
}

// Get blocks until it can return an item, which the caller then holds until it calls
// Done(item). After shutdown Get keeps returning the items still waiting; once there are none
// it returns the zero T and shutdown == true, at once, and the caller should stop.
func (q *Typed[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.queue.Len() == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if q.queue.Len() == 0 {
		return item, true // shutting down, nothing left
	}
	item = q.queue.Pop()
	st := stateProcessing
	if q.metrics != nil {
		st |= q.metrics.get(item)
	}
	q.items[item] = st
	q.processing++
	return item, false
}

// Done ends the processing of item. If the item was added while it was being processed, it is
// queued again. Done of an item that is not being processed (never taken, or already done) is
// ignored; client-go would queue such an item twice if it was waiting.
func (q *Typed[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.items[item]
	phase := st.phase()
	if phase != stateProcessing && phase != stateAgain {
		return
	}
	if q.metrics != nil {
		q.metrics.done(item, st)
	}
	q.processing--
	if phase == stateAgain {
		// Queued again even while shutting down, as client-go does, so that it can be drained.
		q.items[item] = stateWaiting | st&addedMask
		q.queue.Push(item)
		q.cond.Signal()
	} else {
		q.forget(item)
	}
	if q.processing == 0 && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
}

// forget removes item's state, reallocating the emptied map if burstSize says so.
func (q *Typed[T]) forget(item T) {
	delete(q.items, item)
	if len(q.items) == 0 && q.itemsSize.emptied() {
		q.items = make(map[T]itemState)
	}
}

// burstSize tracks the sizes a map reached, to decide when to reallocate it: a Go map keeps
// its size after deletes, so a map that a burst made large would keep the burst's memory, but
// reallocating it at the end of every burst pays its growth again at the next one. So an
// emptied map is kept if the burst that just ended was at least a quarter of the largest since
// the map was allocated (bursts of that size recur), and reallocated otherwise. Memory stays
// within four times what the last burst needed, or shrinkThreshold items.
type burstSize struct {
	peak  int // largest size since the map was allocated
	burst int // largest size since the map was last empty
}

// grew records the map's size after an insert.
func (z *burstSize) grew(n int) {
	z.peak = max(z.peak, n)
	z.burst = max(z.burst, n)
}

// emptied reports, for a map that has just become empty, whether to reallocate it, and starts
// a new burst.
func (z *burstSize) emptied() (reallocate bool) {
	reallocate = z.peak > shrinkThreshold && 4*z.burst < z.peak
	if reallocate {
		z.peak = 0
	}
	z.burst = 0
	return reallocate
}

// ShutDown makes the queue ignore new items. Workers keep getting the items that are still
// waiting; then Get returns shutdown == true. ShutDown ends a ShutDownWithDrain that is
// waiting, and returns after the queue's metrics goroutine, if any, has stopped. The queue
// leaves Queues. It may be called more than once.
func (q *Typed[T]) ShutDown() {
	q.mu.Lock()
	q.shutDownLocked()
	if q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	q.mu.Unlock()
	q.stopBackground()
}

// ShutDownWithDrain is ShutDown, and then waits until no item is being processed: until every
// item taken by a worker is Done. Items still waiting to be taken, including one queued again
// by its Done, are not waited for (workers still get them), as in client-go. A ShutDown call
// ends the wait early. Workers must call Done for every item they Get, or ShutDownWithDrain
// blocks forever.
func (q *Typed[T]) ShutDownWithDrain() {
	q.mu.Lock()
	q.shutDownLocked()
	var wait chan struct{}
	if q.processing > 0 {
		if q.drained == nil {
			q.drained = make(chan struct{})
		}
		wait = q.drained
	}
	q.mu.Unlock()
	if wait != nil {
		<-wait
	}
	q.stopBackground()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
func (q *Typed[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// shutDownLocked marks the queue as shutting down and wakes every blocked Get.
func (q *Typed[T]) shutDownLocked() {
	q.shuttingDown = true
	q.cond.Broadcast()
}

func (q *Typed[T]) stopBackground() {
	q.stopOnce.Do(func() {
		close(q.stopCh)
		unregister(q.regID)
	})
	q.wg.Wait()
}

// status returns the queue's entry in Queues.
func (q *Typed[T]) status() QueueStatus {
	q.mu.Lock()
	s := QueueStatus{
		Name:       q.name.name,
		Named:      q.name.given,
		Depth:      q.queue.Len(),
		Adds:       q.adds,
		Processing: q.processing,
	}
	if q.metrics != nil {
		s.Timed = true
		ages := q.metrics.ages(q.items)
		s.UnfinishedWork, s.LongestRunning, s.OldestWaiting = ages.unfinished, ages.longestRunning, ages.oldestWaiting
	}
	delaying := q.delaying
	q.mu.Unlock()
	if delaying != nil {
		s.Delayed, s.Retries = delaying.delayCounts()
	}
	return s
}

// setDelaying records the delaying queue that feeds q, for Queues.
func (q *Typed[T]) setDelaying(d delayStatus) {
	q.mu.Lock()
	q.delaying = d
	q.mu.Unlock()
}

// shrinkThreshold is the size above which an emptied map is reallocated, and the number of
// stale slots a waiting set keeps at most beyond twice its items.
const shrinkThreshold = 1024

func (q *Typed[T]) updateUnfinishedWorkLoop(period time.Duration) {
	defer q.wg.Done()
	t := q.clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-q.stopCh:
			q.mu.Lock()
			q.metrics.stop(q.adds)
			q.mu.Unlock()
			return
		case <-t.C():
			q.mu.Lock()
			if !q.shuttingDown {
				q.metrics.refresh(q.items, q.adds)
			}
			q.mu.Unlock()
		}
	}
}
