package priorityqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/workqueue"
)

// LowPriority is the priority the event handler adapter gives to items that are not real
// changes (initial list, resync), the same value as controller-runtime's handler.LowPriority.
const LowPriority = -100

// AddOpts describes how AddWithOpts adds items.
type AddOpts struct {
	// After delays the items: they become ready after this long. Zero or negative: ready now.
	After time.Duration
	// RateLimited delays each item by the rate limiter's When, or by After if that is
	// shorter and not zero.
	RateLimited bool
	// Priority of the items; higher is handed out first. Defaults to 0 if nil.
	Priority *int
}

// PriorityQueue is a rate-limited work queue that hands out ready items by priority, FIFO
// within a priority, with an aging rule that keeps any ready item from waiting forever (see
// the package documentation). Like every workqueue it deduplicates: an item queued several
// times is handed out once, keeping the highest priority and the earliest ready time, and an
// item is never held by two workers; one added while it is being processed is handed out
// again after Done. All methods are safe for concurrent use.
type PriorityQueue[T comparable] interface {
	workqueue.TypedRateLimitingInterface[T]
	// AddWithOpts adds items as o says. Adding after shutdown does nothing.
	AddWithOpts(o AddOpts, items ...T)
	// GetWithPriority is Get, also returning the priority the item was handed out with.
	GetWithPriority() (item T, priority int, shutdown bool)
}

// New returns an empty PriorityQueue whose metrics, if any, are recorded under name. It
// starts no goroutine; while items are delayed, or items are being processed and metrics are
// recorded, one goroutine waits on a timer (see the package documentation). Until its
// shutdown the queue is listed by workqueue.Queues, under name or, if name is empty, a default
// name, with its times only when it has metrics (workqueue.EnableTiming does not apply to it;
// kcache extension).
func New[T comparable](name string, opts ...Opt[T]) PriorityQueue[T] {
	var o Opts[T]
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	o.defaults()
	every := o.Aging.Every
	if o.Aging.Disabled {
		every = 0
	}
	q := &queue[T]{
		rateLimiter: o.RateLimiter,
		clock:       o.Clock,
		base:        o.Clock.Now(),
		log:         o.Log.WithValues("queue", name),
		core:        newCore[T](every, int64(o.Aging.After), newQueueMetrics(o.MetricProvider, name)),
		kick:        make(chan struct{}, 1),
		stopCh:      make(chan struct{}),
	}
	q.waiterPool.New = func() any { return &waiter[T]{ch: make(chan handout[T], 1)} }
	q.nowFn = q.now
	_, q.unregister = workqueue.Register(q, name, (*queue[T]).status)
	return q
}

type queue[T comparable] struct {
	rateLimiter workqueue.TypedRateLimiter[T]
	clock       clock.Clock
	base        time.Time
	nowFn       func() int64 // q.now, bound once
	log         klog.Logger

	// down is set at the first shutdown; it lets Add return without the lock.
	down atomic.Bool

	// mu guards core and every field below it.
	mu   sync.Mutex
	core *core[T]
	// waiters are the blocked Gets, oldest first from whead. They exist only while no item
	// is eligible.
	waiters []*waiter[T]
	whead   int
	// shuttingDown is set by ShutDown and ShutDownWithDrain; stopped by ShutDown only.
	shuttingDown, stopped bool
	// drained is closed when a ShutDownWithDrain may return.
	drained chan struct{}
	// timerRunning is whether the timer goroutine runs; timerAt is when it wakes up next.
	timerRunning bool
	timerAt      int64

	// retries counts the adds with a delay, for workqueue.Queues.
	retries int64
	// unregister removes the queue from workqueue.Queues.
	unregister func()

	kick   chan struct{} // wakes the timer goroutine: an earlier deadline
	stopCh chan struct{} // closed at shutdown
	wg     sync.WaitGroup

	waiterPool sync.Pool
}

type handout[T comparable] struct {
	item     T
	priority int
	shutdown bool
}

type waiter[T comparable] struct {
	ch chan handout[T]
}

func (q *queue[T]) now() int64 { return int64(q.clock.Since(q.base)) }

// Add adds item with priority 0, ready now.
func (q *queue[T]) Add(item T) {
	q.addOne(item, 0, 0, false)
}

// AddAfter adds item with priority 0, ready after duration.
func (q *queue[T]) AddAfter(item T, duration time.Duration) {
	q.addOne(item, 0, duration, false)
}

// AddRateLimited adds item with priority 0, ready after the rate limiter's delay.
func (q *queue[T]) AddRateLimited(item T) {
	q.addOne(item, 0, 0, true)
}

// AddWithOpts adds items with the priority, delay and rate limiting of o.
func (q *queue[T]) AddWithOpts(o AddOpts, items ...T) {
	if len(items) == 0 || q.down.Load() {
		return
	}
	priority := 0
	if o.Priority != nil {
		priority = *o.Priority
	}
	if len(items) == 1 {
		q.addOne(items[0], priority, o.After, o.RateLimited)
		return
	}
	var delays []time.Duration
	if o.RateLimited {
		delays = make([]time.Duration, len(items))
		for i, item := range items {
			delays[i] = q.delay(item, o.After, true)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	now := instant{read: q.nowFn}
	for i, item := range items {
		d := o.After
		if delays != nil {
			d = delays[i]
		}
		q.addLocked(item, priority, d, &now)
	}
	q.afterAddLocked(&now)
}

func (q *queue[T]) addOne(item T, priority int, after time.Duration, rateLimited bool) {
	if q.down.Load() {
		return
	}
	d := q.delay(item, after, rateLimited)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	now := instant{read: q.nowFn}
	q.addLocked(item, priority, d, &now)
	q.afterAddLocked(&now)
}

// delay returns an item's delay; the rate limiter is called without the lock.
func (q *queue[T]) delay(item T, after time.Duration, rateLimited bool) time.Duration {
	if !rateLimited {
		return after
	}
	if rl := q.rateLimiter.When(item); after <= 0 || rl < after {
		return rl
	}
	return after
}

func (q *queue[T]) addLocked(item T, priority int, d time.Duration, now *instant) {
	if d > 0 {
		q.retries++
		q.core.metrics.retry()
	}
	q.core.add(item, priority, int64(d), now)
}

// afterAddLocked hands new eligible items to waiters and makes sure the timer goroutine runs
// and knows the earliest deadline.
func (q *queue[T]) afterAddLocked(now *instant) {
	q.dispatchLocked(now)
	q.ensureTimerLocked()
}

// nextWakeLocked returns when the timer goroutine must next wake up: the earliest delayed
// item's deadline or the gauges' next refresh, whichever comes first.
func (q *queue[T]) nextWakeLocked() (int64, bool) {
	at, ok := q.core.nextDeadline()
	if r, rok := q.core.nextRefresh(); rok && (!ok || r < at) {
		at, ok = r, true
	}
	return at, ok
}

// ensureTimerLocked starts the timer goroutine if it has a deadline to wait for, or wakes it
// if the deadline is earlier than the one it waits for.
func (q *queue[T]) ensureTimerLocked() {
	next, ok := q.nextWakeLocked()
	switch {
	case !ok || q.shuttingDown:
	case !q.timerRunning:
		q.timerRunning, q.timerAt = true, next
		q.wg.Add(1)
		go q.timerLoop()
	case next < q.timerAt:
		q.timerAt = next
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
}

// handedOutLocked follows every hand-out: it refreshes the unfinished-work gauges if due and
// keeps the timer that refreshes them while items are held. Nothing without metrics.
func (q *queue[T]) handedOutLocked(now *instant) {
	if q.core.metrics == nil {
		return
	}
	q.core.refreshUnfinished(now, false)
	q.ensureTimerLocked()
}

// dispatchLocked hands eligible items directly to blocked Gets.
func (q *queue[T]) dispatchLocked(now *instant) {
	n := 0
	for q.whead < len(q.waiters) && q.core.nReady > 0 {
		e := q.core.take(now)
		q.popWaiterLocked().ch <- handout[T]{item: e.key, priority: e.priority}
		n++
	}
	if n > 0 {
		q.handedOutLocked(now)
	}
}

func (q *queue[T]) popWaiterLocked() *waiter[T] {
	w := q.waiters[q.whead]
	q.waiters[q.whead] = nil
	q.whead++
	if q.whead == len(q.waiters) {
		q.waiters, q.whead = q.waiters[:0], 0
	}
	return w
}

// wakeAllLocked tells every blocked Get that the queue is shut down.
func (q *queue[T]) wakeAllLocked() {
	for q.whead < len(q.waiters) {
		q.popWaiterLocked().ch <- handout[T]{shutdown: true}
	}
}

// Get is GetWithPriority without the priority.
func (q *queue[T]) Get() (item T, shutdown bool) {
	item, _, shutdown = q.GetWithPriority()
	return item, shutdown
}

// GetWithPriority blocks until an item is eligible and hands it out, with the priority it
// had; the caller must call Done for it. After ShutDown it returns shutdown == true at once.
// After ShutDownWithDrain it still hands out the ready items, then returns shutdown == true.
func (q *queue[T]) GetWithPriority() (item T, priority int, shutdown bool) {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return item, 0, true
	}
	now := instant{read: q.nowFn}
	// Items whose delay is over are taken in now rather than after the timer goroutine's
	// wake-up: Get does not wait for the timer's latency.
	q.core.promote(&now)
	if e := q.core.take(&now); e != nil {
		item, priority = e.key, e.priority
		q.handedOutLocked(&now)
		q.mu.Unlock()
		return item, priority, false
	}
	if q.shuttingDown && q.core.nParked == 0 {
		q.mu.Unlock()
		return item, 0, true
	}
	w := q.waiterPool.Get().(*waiter[T])
	q.waiters = append(q.waiters, w)
	q.mu.Unlock()
	h := <-w.ch
	q.waiterPool.Put(w)
	return h.item, h.priority, h.shutdown
}

// Done marks item as processed. If it was added again meanwhile, it becomes eligible now.
// Done for an item that is not being processed does nothing.
func (q *queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := instant{read: q.nowFn}
	if q.core.done(item, &now) && !q.stopped {
		q.dispatchLocked(&now)
	}
	q.core.refreshUnfinished(&now, false)
	if q.shuttingDown {
		q.checkDrainedLocked()
	}
}

// checkDrainedLocked ends ShutDownWithDrain once nothing is processing, and releases the
// blocked Gets once nothing more can become eligible.
func (q *queue[T]) checkDrainedLocked() {
	if q.core.running.head == nil && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	if q.core.nReady == 0 && q.core.nParked == 0 {
		q.wakeAllLocked()
	}
}

// Forget tells the rate limiter to stop tracking item.
func (q *queue[T]) Forget(item T) { q.rateLimiter.Forget(item) }

// NumRequeues returns how many times the rate limiter has delayed item.
func (q *queue[T]) NumRequeues(item T) int { return q.rateLimiter.NumRequeues(item) }

// Len returns the number of ready items, including one added again while being processed;
// delayed items are not counted. O(1).
func (q *queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.core.len()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
func (q *queue[T]) ShuttingDown() bool { return q.down.Load() }

// ShutDown makes the queue ignore new items, drops the delayed ones, and makes every Get,
// blocked or future, return shutdown == true at once; ready items are not handed out any
// more. It ends a ShutDownWithDrain that is waiting and returns once the timer goroutine, if
// any, has exited. It may be called more than once.
func (q *queue[T]) ShutDown() {
	q.mu.Lock()
	q.beginShutDownLocked()
	q.stopped = true
	q.wakeAllLocked()
	if q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	q.mu.Unlock()
	q.wg.Wait()
}

// ShutDownWithDrain makes the queue ignore new items and drops the delayed ones; Gets still
// hand out the ready items, then return shutdown == true. It waits until no item is being
// processed — every handed-out item is Done — as the plain workqueue does (controller-runtime's
// priority queue does not wait). A ShutDown call ends the wait. Workers must call Done for
// every item they Get, or ShutDownWithDrain blocks forever.
func (q *queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	q.beginShutDownLocked()
	var wait chan struct{}
	if q.core.running.head != nil && !q.stopped {
		if q.drained == nil {
			q.drained = make(chan struct{})
		}
		wait = q.drained
	}
	if q.core.nReady == 0 && q.core.nParked == 0 {
		q.wakeAllLocked()
	}
	q.mu.Unlock()
	q.wg.Wait()
	if wait != nil {
		<-wait
	}
	q.log.V(4).Info("Priority queue drained")
}

func (q *queue[T]) beginShutDownLocked() {
	if q.shuttingDown {
		return
	}
	q.shuttingDown = true
	q.down.Store(true)
	q.core.dropWaiting()
	q.unregister()
	close(q.stopCh)
	q.log.V(4).Info("Priority queue shutting down", "ready", q.core.len())
}

// timerLoop is the queue's only goroutine. It runs while items are delayed, or items are
// being processed and metrics are recorded: it sleeps until the earliest delayed item is due
// or the unfinished-work gauges are, makes the due items ready, refreshes the gauges, and
// exits when it has nothing left to wait for, or at shutdown.
func (q *queue[T]) timerLoop() {
	defer q.wg.Done()
	var t clock.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		q.mu.Lock()
		if q.shuttingDown {
			q.timerRunning = false
			q.mu.Unlock()
			return
		}
		now := instant{read: q.nowFn}
		if q.core.promote(&now) > 0 {
			q.dispatchLocked(&now)
		}
		q.core.refreshUnfinished(&now, false)
		next, ok := q.nextWakeLocked()
		if !ok {
			q.timerRunning = false
			q.mu.Unlock()
			return
		}
		q.timerAt = next
		q.mu.Unlock()
		d := time.Duration(next - now.get())
		if t == nil {
			t = q.clock.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-t.C():
		case <-q.kick:
			t.Stop()
			select { // a fake clock's timer may have fired into its buffer
			case <-t.C():
			default:
			}
		case <-q.stopCh:
		}
	}
}
