package workqueue

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DelayingInterface is the untyped delaying queue interface.
//
// Deprecated: use TypedDelayingInterface instead.
type DelayingInterface TypedDelayingInterface[any]

// TypedDelayingInterface is a TypedInterface that can also add an item after a delay, which
// lets a controller requeue a failed item without spinning on it.
type TypedDelayingInterface[T comparable] interface {
	TypedInterface[T]
	// AddAfter adds item once duration has passed; a duration <= 0 adds it at once.
	AddAfter(item T, duration time.Duration)
}

// DelayingQueueConfig configures an untyped delaying queue.
//
// Deprecated: use TypedDelayingQueueConfig instead.
type DelayingQueueConfig = TypedDelayingQueueConfig[any]

// TypedDelayingQueueConfig configures a delaying queue. The zero value is a valid configuration.
type TypedDelayingQueueConfig[T comparable] struct {
	// Logger reports a panic of the waiting goroutine. The queue's name is not added to it.
	// Defaults to klog.Background().
	Logger *klog.Logger

	// Name is the queue's name in metrics and in Queues. Metrics are only recorded for named
	// queues, unless the provider is an ExtendedMetricsProvider. Defaults to a name derived
	// from the function that creates the queue (see Queues).
	Name string

	// MetricsProvider creates the queue's metrics. Defaults to the provider set with
	// SetProvider.
	MetricsProvider MetricsProvider

	// Clock measures the delays. Defaults to clock.RealClock{}.
	Clock clock.WithTicker

	// Queue receives the items when they are due. Defaults to a new Typed queue with the same
	// Name, MetricsProvider and Clock. Shut the delaying queue down rather than this one: the
	// waiting goroutine notices a shutdown of Queue alone only when it next wakes up.
	Queue TypedInterface[T]
}

// NewDelayingQueue returns an unnamed untyped delaying queue.
//
// Deprecated: use NewTypedDelayingQueue instead.
func NewDelayingQueue() DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{})
}

// NewDelayingQueueWithConfig returns an untyped delaying queue configured by config.
//
// Deprecated: use NewTypedDelayingQueueWithConfig instead.
func NewDelayingQueueWithConfig(config DelayingQueueConfig) DelayingInterface {
	return NewTypedDelayingQueueWithConfig(config)
}

// NewNamedDelayingQueue returns an untyped delaying queue whose metrics are recorded under name.
//
// Deprecated: use NewDelayingQueueWithConfig instead.
func NewNamedDelayingQueue(name string) DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{Name: name})
}

// NewDelayingQueueWithCustomQueue returns an untyped delaying queue that feeds q.
//
// Deprecated: use NewDelayingQueueWithConfig instead.
func NewDelayingQueueWithCustomQueue(q Interface, name string) DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{Name: name, Queue: q})
}

// NewDelayingQueueWithCustomClock returns an untyped delaying queue that measures delays with
// clock.
//
// Deprecated: use NewDelayingQueueWithConfig instead.
func NewDelayingQueueWithCustomClock(clock clock.WithTicker, name string) DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{Name: name, Clock: clock})
}

// NewTypedDelayingQueue returns an unnamed delaying queue. It records no metrics.
func NewTypedDelayingQueue[T comparable]() TypedDelayingInterface[T] {
	return NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[T]{})
}

// TypedNewDelayingQueue is NewTypedDelayingQueue under its old name.
//
// Deprecated: use NewTypedDelayingQueueWithConfig instead.
func TypedNewDelayingQueue[T comparable]() TypedDelayingInterface[T] {
	return NewTypedDelayingQueue[T]()
}

// NewTypedDelayingQueueWithConfig returns a delaying queue configured by config.
//
// Waiting items sit in a min-heap ordered by due time, guarded by a mutex: AddAfter is
// amortized O(log n) and never blocks on the waiting goroutine (client-go's AddAfter blocks once 1000
// items are in flight to it). One goroutine moves due items to the underlying queue; it sleeps
// on a single reused timer set to the earliest due time and is woken when an earlier item
// arrives, so it needs no periodic heartbeat. ShutDown and ShutDownWithDrain stop it before
// they return; items still waiting are dropped.
func NewTypedDelayingQueueWithConfig[T comparable](config TypedDelayingQueueConfig[T]) TypedDelayingInterface[T] {
	return newDelaying(config, resolveName(config.Name))
}

func newDelaying[T comparable](config TypedDelayingQueueConfig[T], name queueName) TypedDelayingInterface[T] {
	logger := klog.Background()
	if config.Logger != nil {
		logger = *config.Logger
	}
	if config.Clock == nil {
		config.Clock = clock.RealClock{}
	}
	if config.Queue == nil {
		config.Queue = newTyped(TypedQueueConfig[T]{
			MetricsProvider: config.MetricsProvider,
			Clock:           config.Clock,
		}, name, unfinishedWorkUpdatePeriod)
	}
	q := &delayingType[T]{
		TypedInterface: config.Queue,
		clock:          config.Clock,
		retries:        newRetryMetrics(name, config.MetricsProvider),
		base:           config.Clock.Now(),
		waiting:        newWaitingSet[T](),
		wake:           make(chan struct{}, 1),
		stopCh:         make(chan struct{}),
		loopDone:       make(chan struct{}),
	}
	if typed, ok := config.Queue.(*Typed[T]); ok {
		typed.setDelaying(q)
	}
	go q.waitingLoop(logger)
	return q
}

// delayingType adds AddAfter to a TypedInterface.
type delayingType[T comparable] struct {
	TypedInterface[T]

	clock      clock.Clock
	retries    *retryMetrics
	retryCount atomic.Int64 // for Queues
	base       time.Time    // due times are nanoseconds since base

	// mu guards the fields below.
	mu      sync.Mutex
	waiting *waitingSet[T]
	stopped bool

	wake     chan struct{} // capacity 1: the earliest due time changed
	stopCh   chan struct{}
	stopOnce sync.Once
	loopDone chan struct{}
}

// AddAfter adds item to the queue once duration has passed. A duration <= 0 adds it at once.
// If the item is already waiting, it keeps the earlier of its two due times. AddAfter is
// dropped once the queue is shutting down; otherwise it counts one retry in the metrics. It
// never blocks on the waiting goroutine.
func (q *delayingType[T]) AddAfter(item T, duration time.Duration) {
	if q.ShuttingDown() {
		return
	}
	q.retries.retry()
	q.retryCount.Add(1)
	if duration <= 0 {
		q.Add(item)
		return
	}
	now := q.now()
	due := now + duration.Nanoseconds()
	if due < now { // overflow: due in about 292 years
		due = math.MaxInt64
	}

	q.mu.Lock()
	if !q.stopped && q.waiting.add(item, due) {
		q.notifyLocked()
	}
	q.mu.Unlock()
}

// ShutDown stops the waiting goroutine, drops the waiting items and shuts the underlying
// queue down. It may be called more than once, also to end a ShutDownWithDrain.
func (q *delayingType[T]) ShutDown() {
	q.stop()
	q.TypedInterface.ShutDown()
}

// ShutDownWithDrain stops the waiting goroutine at once (client-go leaves it running until
// its next 10s heartbeat), drops the waiting items and drains the underlying queue.
func (q *delayingType[T]) ShutDownWithDrain() {
	q.stop()
	q.TypedInterface.ShutDownWithDrain()
}

// delayCounts returns the number of items waiting for their delay and of AddAfter calls.
func (q *delayingType[T]) delayCounts() (delayed int, retries int64) {
	q.mu.Lock()
	if q.waiting != nil {
		delayed = q.waiting.len()
	}
	q.mu.Unlock()
	return delayed, q.retryCount.Load()
}

func (q *delayingType[T]) stop() {
	q.stopOnce.Do(func() {
		q.mu.Lock()
		q.stopped = true
		q.waiting = nil
		q.mu.Unlock()
		close(q.stopCh)
	})
	<-q.loopDone
}

// now returns the clock's time as nanoseconds since q.base.
func (q *delayingType[T]) now() int64 {
	return int64(q.clock.Since(q.base))
}

func (q *delayingType[T]) notifyLocked() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// maxReadyBatch bounds how many due items the loop moves per lock hold.
const maxReadyBatch = 256

// waitingLoop moves items to the queue when they are due, until the queue is stopped.
func (q *delayingType[T]) waitingLoop(logger klog.Logger) {
	defer close(q.loopDone)
	defer utilruntime.HandleCrashWithLogger(logger)

	timer := dueTimer{clock: q.clock, now: q.now}
	defer timer.disarm()
	ready := make([]T, 0, maxReadyBatch)

	for {
		if q.TypedInterface.ShuttingDown() {
			return // the underlying queue was shut down on its own
		}
		q.mu.Lock()
		if q.stopped {
			q.mu.Unlock()
			return
		}
		ready = q.waiting.popDue(q.now(), ready, maxReadyBatch)
		next, pending := q.waiting.next()
		q.mu.Unlock()

		for _, item := range ready {
			q.Add(item)
		}
		full := len(ready) == maxReadyBatch
		clear(ready) // drop the references
		ready = ready[:0]
		if full {
			continue // more items may be due
		}

		if !pending {
			timer.disarm()
		} else if !timer.arm(next) {
			continue // due already
		}

		select {
		case <-q.stopCh:
			return
		case <-q.wake:
		case <-timer.c():
			timer.armed = false
		}
	}
}

// dueTimer is the waiting goroutine's one timer, created on first use and then reset, set to
// fire when the clock reaches a due time (nanoseconds since the queue's base time).
type dueTimer struct {
	clock clock.Clock
	now   func() int64
	t     clock.Timer
	armed bool  // running, or fired and not yet received
	at    int64 // the due time it is set for, when armed
}

// c returns the channel that fires, or nil (which blocks forever) when not armed.
func (d *dueTimer) c() <-chan time.Time {
	if !d.armed {
		return nil
	}
	return d.t.C()
}

// disarm stops the timer and drops a tick it may have left: a fake clock's Step would block
// on the full channel at the next expiry otherwise.
func (d *dueTimer) disarm() {
	if d.armed && !d.t.Stop() {
		select {
		case <-d.t.C():
		default:
		}
	}
	d.armed = false
}

// armTolerance is how far the clock may move while the timer is being set before it is set
// again.
const armTolerance = int64(time.Microsecond)

// arm makes the timer fire once the clock reaches at. It returns false if the clock is there
// already: the caller handles the due items instead of waiting (a fake clock would only fire
// a timer with a delay <= 0 at its next Step).
//
// A timer takes a duration, which the clock turns into an expiry by reading its own time. If
// the clock moves between our reading and that one (a fake clock stepped by another
// goroutine, say by the whole delay), the timer would fire late, possibly never; so when the
// clock has moved by more than armTolerance meanwhile, the timer is set again from a fresh
// reading.
func (d *dueTimer) arm(at int64) bool {
	if d.armed && d.at == at {
		return true
	}
	for range 3 {
		before := d.now()
		if at <= before {
			return false
		}
		wait := time.Duration(at - before)
		if d.t == nil {
			d.t = d.clock.NewTimer(wait)
		} else {
			d.disarm()
			d.t.Reset(wait)
		}
		d.armed, d.at = true, at
		if d.now()-before <= armTolerance {
			break
		}
	}
	return true
}
