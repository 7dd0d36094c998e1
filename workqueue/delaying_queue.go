package workqueue

import (
	"math"
	"sync"
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

	// Name is the queue's name in metrics. Metrics are only recorded for named queues.
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
	logger := klog.Background()
	if config.Logger != nil {
		logger = *config.Logger
	}
	if config.Clock == nil {
		config.Clock = clock.RealClock{}
	}
	if config.Queue == nil {
		config.Queue = NewTypedWithConfig(TypedQueueConfig[T]{
			Name:            config.Name,
			MetricsProvider: config.MetricsProvider,
			Clock:           config.Clock,
		})
	}
	q := &delayingType[T]{
		TypedInterface: config.Queue,
		clock:          config.Clock,
		retries:        newRetryMetrics(config.Name, config.MetricsProvider),
		base:           config.Clock.Now(),
		waiting:        newWaitingSet[T](),
		wake:           make(chan struct{}, 1),
		stopCh:         make(chan struct{}),
		loopDone:       make(chan struct{}),
	}
	go q.waitingLoop(logger)
	return q
}

// delayingType adds AddAfter to a TypedInterface.
type delayingType[T comparable] struct {
	TypedInterface[T]

	clock   clock.Clock
	retries *retryMetrics
	base    time.Time // due times are nanoseconds since base

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

	var (
		timer   clock.Timer
		armed   bool  // timer is running or has fired without being received
		armedAt int64 // due time the timer is set for
		ready   = make([]T, 0, maxReadyBatch)
	)
	disarm := func() {
		if armed && !timer.Stop() {
			// It fired; drop the tick, or a fake clock's Step would block on the full channel.
			select {
			case <-timer.C():
			default:
			}
		}
		armed = false
	}
	defer func() {
		if timer != nil {
			disarm()
		}
	}()

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

		var fired <-chan time.Time
		switch {
		case !pending:
			disarm()
		case !armed || armedAt != next:
			// Measure from the clock's time now: the Adds above took some. A fake clock
			// fires a timer only when it is stepped, so an item that is already due is
			// handled by looping rather than by a timer with a delay <= 0.
			wait := time.Duration(next - q.now())
			if wait <= 0 {
				continue
			}
			if timer == nil {
				timer = q.clock.NewTimer(wait)
			} else {
				disarm()
				timer.Reset(wait)
			}
			armed, armedAt = true, next
		}
		if armed {
			fired = timer.C()
		}

		select {
		case <-q.stopCh:
			return
		case <-q.wake:
		case <-fired:
			armed = false
		}
	}
}
