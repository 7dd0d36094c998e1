package cache

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/synctrack"
)

const (
	// initialBufferSize is the number of notification slots a listener keeps once it has had
	// them (internal/ring). It is also the backlog above which slow handler calls are traced.
	initialBufferSize = 1024

	// slowHandlerThreshold is how long a handler call may take, with a backlog above
	// initialBufferSize, before it is logged (logIfSlow).
	slowHandlerThreshold = 100 * time.Millisecond

	// pauseAfterPanic is how long a listener waits before its next delivery after a handler
	// panicked (only reachable when utilruntime.ReallyCrash is false).
	pauseAfterPanic = time.Second
	// panicLogInterval is the least time between two logged stacks of one handler's contained
	// panics: a handler that panics on every notification must not flood the log.
	panicLogInterval = 10 * time.Second
)

// processorListener delivers notifications to one ResourceEventHandler, in order, from one
// goroutine (run). The informer's distribution loop calls add, which only appends to a buffer
// under a short lock and, when the buffer was empty, drops a token in the capacity-1 wake
// channel; add never waits for the handler. The buffer grows by chunks while the handler is
// behind and gives them back as it catches up (client-go uses three goroutines per handler and a
// buffer that doubles and never shrinks). A queued notification takes 32 bytes, and the adds of
// a list into an empty cache (the initial list) or of the cache for a handler added late are
// queued as one element that points into that list (addRun). With MaxPending the buffer
// coalesces per object key once more than MaxPending notifications wait (notificationBuffer).
//
// The handler's sync tracker learns that the informer has synced from the processor
// (sharedProcessor.markUpstreamSynced), not from a goroutine of its own, so a handler costs
// exactly one goroutine, and a handler that is busy or blocked still becomes synced as soon as
// it has returned from its initial adds.
//
// A processorListener is the ResourceEventHandlerRegistration returned to the user.
type processorListener struct {
	logger      klog.Logger
	handler     ResourceEventHandler
	handlerName string
	clock       clock.Clock
	// mono reads clock for the lag and the handler's time; addListener gives the listener
	// its processor's, so that their times compare.
	mono monoClock

	// syncTracker counts initial-list adds that the handler has not finished yet.
	syncTracker *synctrack.SingleFileTracker
	// wake receives a token when the buffer turns non-empty.
	wake chan struct{}
	// done is closed by close; it stops run.
	done      chan struct{}
	closeOnce sync.Once
	// stopped is closed when run has returned (or by close, if run never started).
	stopped chan struct{}
	// runGoroutine is the id of run's goroutine once it has started (0 before), so that
	// ShutDownEventHandler can tell a call from the handler's own callback.
	runGoroutine atomic.Uint64

	// maxPending is HandlerOptions.MaxPending, or -1 for none.
	maxPending int
	// containPanics is HandlerOptions.ContainPanics.
	containPanics bool
	// metrics is nil unless the informer's metrics provider implements HandlerMetricsProvider.
	metrics *handlerMetrics
	// nextPanicLog is the earliest time the stack of a contained panic is logged again, and
	// unloggedPanics counts the contained panics since the last logged one. Only run's
	// goroutine touches them.
	nextPanicLog   time.Time
	unloggedPanics int

	// mu guards pending, closed, running and stats (see listenerStats).
	mu      sync.Mutex
	stats   listenerStats // next to mu: both are touched at every push and pop
	pending notificationBuffer
	closed  bool
	running bool

	// requestedResyncPeriod is the period the handler asked for (after the 1s floor and, for a
	// handler added to a running informer, the check-period floor). It never changes.
	requestedResyncPeriod time.Duration

	// resyncMu guards resyncPeriod and nextResync.
	resyncMu sync.Mutex
	// resyncPeriod is the period in use: requestedResyncPeriod, or 0 when the informer does not
	// resync.
	resyncPeriod time.Duration
	// nextResync is when the handler is next due for a resync.
	nextResync time.Time
}

// newProcessListener returns a listener for handler that is not running yet. upstreamHasSynced
// is the informer's sync checker; only its name is used, as the prefix of the handler
// tracker's name.
func newProcessListener(logger klog.Logger, handler ResourceEventHandler, requestedResyncPeriod, resyncPeriod time.Duration, clk clock.Clock, upstreamHasSynced DoneChecker) *processorListener {
	name := nameForHandler(handler)
	p := &processorListener{
		logger:                logger,
		handler:               handler,
		handlerName:           name,
		clock:                 clk,
		mono:                  newMonoClock(clk),
		syncTracker:           synctrack.NewSingleFileTracker(fmt.Sprintf("%s + event handler %s", upstreamHasSynced.Name(), name)),
		wake:                  make(chan struct{}, 1),
		done:                  make(chan struct{}),
		stopped:               make(chan struct{}),
		maxPending:            -1,
		pending:               newNotificationBuffer(-1),
		requestedResyncPeriod: requestedResyncPeriod,
		resyncPeriod:          resyncPeriod,
	}
	p.determineNextResync(clk.Now())
	return p
}

// configure applies a handler's options; call it before the listener is registered.
// maxPending < 0 means no bound. metrics may be nil.
func (p *processorListener) configure(maxPending int, containPanics bool, metrics *handlerMetrics) {
	p.maxPending = maxPending
	p.containPanics = containPanics
	p.metrics = metrics
	p.pending = newNotificationBuffer(maxPending)
}

// HasSynced reports whether the informer has synced and this handler has returned from every
// add of the initial list. It does not block.
func (p *processorListener) HasSynced() bool {
	return p.syncTracker.HasSynced()
}

// HasSyncedChecker returns a DoneChecker that is done when HasSynced turns true. Its name is
// "<informer> + event handler <handler name>".
func (p *processorListener) HasSyncedChecker() DoneChecker {
	return p.syncTracker
}

// ShutdownChan returns a channel that is closed once the listener has stopped for good: after
// it was removed or its informer stopped, and the handler has returned from its last callback.
// Until then it stays open. ShutDownEventHandler waits on it.
func (p *processorListener) ShutdownChan() <-chan struct{} {
	return p.stopped
}

// isClosed reports whether close was called.
func (p *processorListener) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// onDeliveryGoroutine reports whether the caller runs on the goroutine that delivers this
// listener's notifications, that is, inside one of its handler's callbacks.
func (p *processorListener) onDeliveryGoroutine() bool {
	id := p.runGoroutine.Load()
	return id != 0 && id == currentGoroutineID()
}

// add queues n for the handler. It never blocks on the handler; after close it does nothing.
// An initial-list add is counted by the sync tracker before it is queued.
func (p *processorListener) add(n notification) {
	p.addAt(n, 0)
}

// addAt is add for a notification queued at at (0 when EnableInformerTiming is off).
func (p *processorListener) addAt(n notification, at monoTime) {
	if n.isInitialAdd() {
		p.syncTracker.Start()
	}
	p.enqueue(n, nil, false, at)
}

// addRun queues an add of each of objs, in order, all with isInInitialList initial, as add
// would one by one; objs must not change afterwards (see notificationBuffer.PushRun).
func (p *processorListener) addRun(objs []interface{}, initial bool, at monoTime) {
	if len(objs) == 0 {
		return
	}
	if initial {
		for range objs {
			p.syncTracker.Start()
		}
	}
	p.enqueue(notification{}, objs, initial, at)
}

// enqueue pushes n, or, if run is not nil, the adds of run's objects with isInInitialList
// initial, and wakes the delivery goroutine if the buffer was empty. at is when they were
// queued, 0 when EnableInformerTiming is off.
func (p *processorListener) enqueue(n notification, run []interface{}, initial bool, at monoTime) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	wasEmpty := p.pending.Len() == 0
	var ev coalesceEvent
	if at != 0 {
		p.stats.markLocked(at, p.pending.Len(), p.pending.coalescedAway)
	}
	if run != nil {
		p.stats.pushed += uint64(len(run))
		ev = p.pending.PushRun(run, initial)
	} else {
		p.stats.pushed++
		ev = p.pending.Push(n)
	}
	pending := p.pending.Len()
	p.mu.Unlock()
	if ev == coalesceStarted {
		p.logger.Info("Event handler is falling behind, coalescing its notifications per object until it catches up",
			"handler", p.handlerName, "pendingNotifications", p.maxPending+1, "pendingObjects", pending)
		if p.metrics != nil {
			p.metrics.episodes.Inc()
		}
	}
	if p.metrics != nil {
		p.metrics.pending.Set(float64(pending))
	}
	if wasEmpty {
		select {
		case p.wake <- struct{}{}:
		default: // a token is already waiting
		}
	}
}

// start runs the listener on a goroutine tracked by wg, unless it is closed or running.
func (p *processorListener) start(wg *sync.WaitGroup) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.running {
		return
	}
	p.running = true
	wg.Go(p.run)
}

// close stops the listener: queued notifications are dropped and run returns after the
// handler call in progress, if any. It does not wait for that; wait on stopped for it. It is
// idempotent.
func (p *processorListener) close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.pending.Drop()
		running := p.running
		p.mu.Unlock()
		close(p.done)
		if !running {
			close(p.stopped)
		}
	})
}

// run delivers notifications until close. It is the listener's only goroutine.
func (p *processorListener) run() {
	defer close(p.stopped)
	p.runGoroutine.Store(currentGoroutineID())
	panicked := false
	var coalescedBefore, episodeStart uint64
	returned := false // the handler returned from a call not yet counted in stats.processed
	// waited is true when the goroutine waited for work since the last call; busy counts the
	// calls since the last one timed, which started at lastTimed; dated is when the newest
	// notification was queued (see HandlerStatus.HandlerTime).
	waited, busy := true, uint64(0)
	var lastTimed, dated monoTime
	for {
		p.mu.Lock()
		if returned {
			p.stats.processed++
			returned = false
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		d, ok, ev := p.pending.Pop()
		backlog := p.pending.Len()
		coalesced := p.pending.coalescedAway
		if ok {
			p.stats.poppedLocked(d.call, coalesced)
			dated = p.stats.newestDateLocked()
		}
		p.mu.Unlock()
		if ok {
			if ev == coalesceStopped {
				p.logger.Info("Event handler caught up, no longer coalescing its notifications",
					"handler", p.handlerName, "pendingNotifications", backlog, "coalescedNotifications", coalesced-episodeStart)
				episodeStart = coalesced
			}
			p.recordPop(backlog, coalesced-coalescedBefore)
			coalescedBefore = coalesced
		}
		if !ok {
			waited = true
			select {
			case <-p.wake:
			case <-p.done:
				return
			}
			continue
		}
		if panicked && !p.pause() {
			return
		}
		var start monoTime
		weight := uint64(0)
		if d.call && informerTiming.Load() {
			busy++
			if busy >= handlerTimeSampling || waited && (dated == 0 || lastTimed == 0 || time.Duration(dated-lastTimed) >= handlerTimeGap) {
				weight, busy = busy, 0
				start = p.mono.now()
				lastTimed = start
			}
		}
		waited = false
		panicked = !p.deliver(d, backlog)
		if weight > 0 && !panicked {
			p.stats.handlerTime.observe(time.Duration(p.mono.now()-start), weight)
		}
		returned = d.call && d.initialAdds == 0 // deliver counted a call of the initial list
	}
}

// recordPop updates the handler metrics after a pop: the backlog left and the notifications
// that pop coalesced away.
func (p *processorListener) recordPop(backlog int, coalesced uint64) {
	if p.metrics == nil {
		return
	}
	p.metrics.pending.Set(float64(backlog))
	for range coalesced {
		p.metrics.coalesced.Inc()
	}
}

// pause waits pauseAfterPanic on the clock; it returns false if the listener was closed
// meanwhile.
func (p *processorListener) pause() bool {
	select {
	case <-p.clock.After(pauseAfterPanic):
		return true
	case <-p.done:
		return false
	}
}

// deliver makes the handler call d stands for, if any, and reports whether it returned
// normally. Then, also after a panic, the initial-list adds d stands for count as processed
// (client-go leaves a handler that panicked on one unsynced forever); a call that carries
// initial-list adds is counted in stats.initialCalls before they are, so that a handler that
// reports synced has every call of the initial list in its Processed count.
//
// A panic is handled by utilruntime.HandleCrashWithLogger: it is logged and passed to
// utilruntime.PanicHandlers, and then, when utilruntime.ReallyCrash is true (the default),
// re-raised so that the process crashes, exactly as in client-go. With ReallyCrash false the
// notification is skipped and the caller pauses before the next one. With containPanics the
// panic is counted and the notification skipped, without a pause; see reportContainedPanic
// for the log.
func (p *processorListener) deliver(d delivery, backlog int) (ok bool) {
	if d.initialAdds > 0 {
		defer func() {
			if d.call {
				p.stats.initialCalls.Add(1)
			}
			for range d.initialAdds {
				p.syncTracker.Finished()
			}
		}()
	}
	if !d.call {
		return true
	}
	n := d.n
	if p.containPanics {
		defer func() {
			if r := recover(); r != nil {
				p.reportContainedPanic(n, r)
				ok = true
			}
		}()
	} else {
		defer utilruntime.HandleCrashWithLogger(p.logger)
	}
	if backlog > initialBufferSize {
		defer p.logIfSlow(p.mono.now(), backlog)
	}
	// A compact store's initial list reaches the handlers encoded (see encodedItem).
	n.obj = resolveListed(n.obj)
	switch m, _ := n.tag.(*notificationMarker); {
	case m == nil:
		p.handler.OnUpdate(resolveListed(n.tag), n.obj)
	case m.kind == notifyAdd:
		p.handler.OnAdd(n.obj, m.initial)
	default:
		p.handler.OnDelete(n.obj)
	}
	return true
}

// reportContainedPanic counts a panic of the handler on n that containPanics caught, and logs
// it with the handler's name and stack — at most once per panicLogInterval on the listener's
// clock. The panics in between are logged at V(4) without a stack, and the next logged one
// says how many there were (panicsNotLogged).
func (p *processorListener) reportContainedPanic(n notification, r interface{}) {
	p.stats.panics.Add(1)
	if p.metrics != nil {
		p.metrics.panics.Inc()
	}
	kind := map[notificationKind]string{notifyAdd: "OnAdd", notifyUpdate: "OnUpdate", notifyDelete: "OnDelete"}[n.kind()]
	err := fmt.Errorf("cache: event handler panicked: %v", r)
	now := p.clock.Now()
	if now.Before(p.nextPanicLog) {
		p.unloggedPanics++
		p.logger.V(4).Info("Event handler panicked again, notification dropped; stack not logged",
			"handler", p.handlerName, "method", kind, "err", err)
		return
	}
	p.nextPanicLog = now.Add(panicLogInterval)
	kv := []interface{}{"handler", p.handlerName, "method", kind, "stack", string(debug.Stack())}
	if p.unloggedPanics > 0 {
		kv = append(kv, "panicsNotLogged", p.unloggedPanics)
		p.unloggedPanics = 0
	}
	p.logger.Error(err, "Event handler panicked, notification dropped", kv...)
}

// logIfSlow logs the "processorListener handler" trace of client-go when the handler call that
// started at start took longer than slowHandlerThreshold. Unlike client-go, which builds a
// utiltrace.Trace for every call made while the backlog is long, it costs a clock read
// (monotonic) before and after the call, so a lagging handler is not slowed down further.
func (p *processorListener) logIfSlow(start monoTime, backlog int) {
	if took := time.Duration(p.mono.now() - start); took > slowHandlerThreshold {
		p.logger.Info("Trace \"processorListener handler\" took longer than expected",
			"handler", p.handlerName, "pendingNotifications", backlog, "totalTime", took)
	}
}

// shouldResync reports whether the handler is due for a resync at now; never when its period
// is 0.
func (p *processorListener) shouldResync(now time.Time) bool {
	p.resyncMu.Lock()
	defer p.resyncMu.Unlock()
	return p.resyncPeriod != 0 && !now.Before(p.nextResync)
}

// determineNextResync schedules the next resync one period after now.
func (p *processorListener) determineNextResync(now time.Time) {
	p.resyncMu.Lock()
	defer p.resyncMu.Unlock()
	p.nextResync = now.Add(p.resyncPeriod)
}

// setResyncPeriod changes the period in use.
func (p *processorListener) setResyncPeriod(resyncPeriod time.Duration) {
	p.resyncMu.Lock()
	defer p.resyncMu.Unlock()
	p.resyncPeriod = resyncPeriod
}
