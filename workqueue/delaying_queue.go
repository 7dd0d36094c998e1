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
	// Name, MetricsProvider and Clock.
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
// O(log n) and never blocks on the waiting goroutine (client-go's AddAfter blocks once 1000
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
		byItem:         make(map[T]*waitEntry[T]),
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
	mu        sync.Mutex
	waiting   waitHeap[T]
	byItem    map[T]*waitEntry[T]
	byItemMax int
	free      []*waitEntry[T]
	stopped   bool

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
	if q.stopped {
		q.mu.Unlock()
		return
	}
	if e, ok := q.byItem[item]; ok {
		if due < q.waiting[e.index].due {
			q.waiting[e.index].due = due
			q.waiting.up(e.index)
			if e.index == 0 {
				q.notifyLocked()
			}
		}
		q.mu.Unlock()
		return
	}
	e := q.newEntryLocked(item)
	q.byItem[item] = e
	q.byItemMax = max(q.byItemMax, len(q.byItem))
	q.waiting.push(due, e)
	if e.index == 0 {
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
		clear(q.waiting)
		q.waiting = nil
		q.byItem = nil
		q.free = nil
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

func (q *delayingType[T]) newEntryLocked(item T) *waitEntry[T] {
	if n := len(q.free); n > 0 {
		e := q.free[n-1]
		q.free[n-1] = nil
		q.free = q.free[:n-1]
		e.item = item
		return e
	}
	return &waitEntry[T]{item: item}
}

// maxReadyBatch bounds how many due items the loop moves per lock hold.
const maxReadyBatch = 256

// popReadyLocked moves up to maxReadyBatch items due at or before now from the heap to ready.
// It returns the earliest remaining due time, and whether there is one.
func (q *delayingType[T]) popReadyLocked(now int64, ready []T) ([]T, int64, bool) {
	for len(q.waiting) > 0 && q.waiting[0].due <= now && len(ready) < maxReadyBatch {
		e := q.waiting.pop()
		ready = append(ready, e.item)
		delete(q.byItem, e.item)
		var zero T
		e.item = zero
		if len(q.free) < shrinkThreshold {
			q.free = append(q.free, e)
		}
	}
	if len(q.byItem) == 0 && q.byItemMax > shrinkThreshold {
		q.byItem = make(map[T]*waitEntry[T])
		q.byItemMax = 0
	}
	if len(q.waiting) == 0 {
		return ready, 0, false
	}
	return ready, q.waiting[0].due, true
}

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
		q.mu.Lock()
		if q.stopped {
			q.mu.Unlock()
			return
		}
		now := q.now()
		var next int64
		var pending bool
		ready, next, pending = q.popReadyLocked(now, ready)
		q.mu.Unlock()

		for _, item := range ready {
			q.Add(item)
		}
		if len(ready) == maxReadyBatch {
			clear(ready)
			ready = ready[:0]
			continue // there may be more due items
		}
		clear(ready)
		ready = ready[:0]

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

// waitEntry is an item waiting in the heap; index is its position there.
type waitEntry[T any] struct {
	item  T
	index int
}

// waitSlot is one heap slot. The due time sits in the slot itself so that sifting compares
// without following pointers.
type waitSlot[T any] struct {
	due   int64
	entry *waitEntry[T]
}

// waitHeap is a binary min-heap on due time that keeps each entry's index up to date.
type waitHeap[T any] []waitSlot[T]

func (h *waitHeap[T]) push(due int64, e *waitEntry[T]) {
	e.index = len(*h)
	*h = append(*h, waitSlot[T]{due: due, entry: e})
	h.up(e.index)
}

// pop removes and returns the entry due first; the heap must not be empty. The backing array
// halves when it is a quarter full and larger than shrinkThreshold.
func (h *waitHeap[T]) pop() *waitEntry[T] {
	s := *h
	top := s[0].entry
	last := len(s) - 1
	s[0] = s[last]
	s[0].entry.index = 0
	s[last] = waitSlot[T]{}
	s = s[:last]
	if cap(s) > shrinkThreshold && len(s) < cap(s)/4 {
		s = append(make([]waitSlot[T], 0, cap(s)/2), s...)
	}
	*h = s
	if last > 0 {
		h.down(0)
	}
	top.index = -1
	return top
}

func (h waitHeap[T]) up(i int) {
	slot := h[i]
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].due <= slot.due {
			break
		}
		h[i] = h[parent]
		h[i].entry.index = i
		i = parent
	}
	h[i] = slot
	slot.entry.index = i
}

func (h waitHeap[T]) down(i int) {
	slot := h[i]
	n := len(h)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if r := child + 1; r < n && h[r].due < h[child].due {
			child = r
		}
		if slot.due <= h[child].due {
			break
		}
		h[i] = h[child]
		h[i].entry.index = i
		i = child
	}
	h[i] = slot
	slot.entry.index = i
}
