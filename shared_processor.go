package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// sharedProcessor fans the informer's notifications out to its listeners. Every listener gets
// every add, delete and real update; a "sync" update (same resource version on both sides, from
// a resync or a relist) goes only to the listeners whose syncing flag is true. The flag starts
// true and is recomputed only by shouldResync, so with resync off every listener receives
// same-version updates, as in client-go.
//
// Listeners added before run are started by run; listeners added later are started by
// addListener, after their initial list is queued. Once run's context ends, every listener is
// closed, the processor forgets them, and run waits for their goroutines.
type sharedProcessor struct {
	clock clock.Clock
	// mono reads clock for the lag; every listener gets it.
	mono monoClock

	// wg tracks the listeners' goroutines.
	wg sync.WaitGroup

	// mu guards listeners, started and stopped. distribute holds it for reading.
	mu sync.RWMutex
	// listeners are the registered listeners in the order they were added (a slice, not a
	// map: distribute walks it for every notification), each with whether it receives sync
	// updates. Handlers are few; removing one is a linear search.
	listeners []registeredListener
	// started is true while run is running its listeners.
	started bool
	// stopped is true once run has closed its listeners; the processor cannot run again.
	stopped bool
	// upstreamSynced is true once markUpstreamSynced was called.
	upstreamSynced bool

	// stamp is when the changes being distributed were applied, a monoTime; 0 while
	// EnableInformerTiming is off. An atomic, so that dating a batch takes no lock.
	stamp atomic.Int64
}

// registeredListener is a listener of a processor and whether it receives sync updates.
type registeredListener struct {
	listener *processorListener
	syncing  bool
}

// newSharedProcessor returns an idle processor that reads time from clk.
func newSharedProcessor(clk clock.Clock) *sharedProcessor {
	return &sharedProcessor{clock: clk, mono: newMonoClock(clk)}
}

// indexLocked returns the position of listener in listeners, -1 if it is not registered.
func (p *sharedProcessor) indexLocked(listener *processorListener) int {
	for i, r := range p.listeners {
		if r.listener == listener {
			return i
		}
	}
	return -1
}

// addListener registers listener, queues an initial-list add for each of initialObjects, tells
// its tracker if the informer has synced already and, if the processor is running, starts the
// listener. All of that happens under the processor's
// lock, so no distributed notification can come before or between the initial adds. It calls
// no user code. It returns false, without registering, once the processor has stopped.
func (p *sharedProcessor) addListener(listener *processorListener, initialObjects []interface{}) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.listeners = append(p.listeners, registeredListener{listener: listener, syncing: true})
	listener.mono = p.mono
	listener.addRun(initialObjects, true, p.stampTime())
	if p.upstreamSynced {
		listener.syncTracker.UpstreamHasSynced()
	}
	if p.started {
		listener.start(&p.wg)
	}
	return true
}

// markUpstreamSynced tells every listener's sync tracker, now and for listeners added later,
// that the informer has synced. The informer calls it once its own HasSynced is true.
func (p *sharedProcessor) markUpstreamSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstreamSynced = true
	for _, r := range p.listeners {
		r.listener.syncTracker.UpstreamHasSynced()
	}
}

// removeListener unregisters the listener behind handle and closes it, so its goroutine ends
// after the handler call in progress, if any; it does not wait for that (ShutDownEventHandler
// waits on the listener's ShutdownChan). Removing a handle that
// is not registered (again, or after stop) does nothing. A handle of a foreign type is an
// error.
func (p *sharedProcessor) removeListener(handle ResourceEventHandlerRegistration) error {
	listener, ok := handle.(*processorListener)
	if !ok {
		return fmt.Errorf("cache: invalid registration handle type %T", handle)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.indexLocked(listener)
	if i < 0 {
		return nil
	}
	p.listeners = slices.Delete(p.listeners, i, i+1)
	listener.close()
	return nil
}

// hasListener reports whether handle is a registered listener.
func (p *sharedProcessor) hasListener(handle ResourceEventHandlerRegistration) bool {
	listener, ok := handle.(*processorListener)
	if !ok {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.indexLocked(listener) >= 0
}

// distributeRun queues an add of each of objs, in order, for every listener, as distribute
// would one by one; objs must not change afterwards. Each listener queues the run as one
// element that points into objs (notificationBuffer.PushRun).
func (p *sharedProcessor) distributeRun(objs []interface{}, isInInitialList bool) {
	at := p.stampTime()
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, r := range p.listeners {
		r.listener.addRun(objs, isInInitialList, at)
	}
}

// distribute queues n for every listener, or, for a sync update, for the listeners due for a
// resync. It never waits for a handler.
func (p *sharedProcessor) distribute(n notification, sync bool) {
	at := p.stampTime()
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, r := range p.listeners {
		if !sync || r.syncing {
			r.listener.addAt(n, at)
		}
	}
}

// run starts every registered listener, waits for ctx to end, then closes all of them and
// waits until their goroutines have returned (a handler call in progress is waited for).
func (p *sharedProcessor) run(ctx context.Context) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	for _, r := range p.listeners {
		r.listener.start(&p.wg)
	}
	p.started = true
	p.mu.Unlock()

	<-ctx.Done()

	p.mu.Lock()
	for _, r := range p.listeners {
		r.listener.close()
	}
	p.listeners = nil
	p.started = false
	p.stopped = true
	p.mu.Unlock()
	p.wg.Wait()
}

// shouldResync marks which listeners are due for a resync now, schedules their next one, and
// reports whether any is due. The informer's controller calls it on every resync check.
func (p *sharedProcessor) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	due := false
	for i := range p.listeners {
		r := &p.listeners[i]
		r.syncing = r.listener.shouldResync(now)
		if r.syncing {
			due = true
			r.listener.determineNextResync(now)
		}
	}
	return due
}

// resyncCheckPeriodChanged recomputes every listener's period for a new check period.
func (p *sharedProcessor) resyncCheckPeriodChanged(logger klog.Logger, resyncCheckPeriod time.Duration) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, r := range p.listeners {
		r.listener.setResyncPeriod(determineResyncPeriod(logger, r.listener.requestedResyncPeriod, resyncCheckPeriod))
	}
}

// determineResyncPeriod returns the period a handler that asked for desired gets from an
// informer that checks for resyncs every check: 0 if either is 0 (with a warning when the
// handler wanted resyncs the informer does not do), otherwise at least check.
func determineResyncPeriod(logger klog.Logger, desired, check time.Duration) time.Duration {
	switch {
	case desired == 0:
		return 0
	case check == 0:
		logger.Info("Warning: the specified resyncPeriod is invalid because this shared informer doesn't support resyncing", "desired", desired)
		return 0
	case desired < check:
		logger.Info("Warning: the specified resyncPeriod is being increased to the minimum resyncCheckPeriod", "desired", desired, "resyncCheckPeriod", check)
		return check
	default:
		return desired
	}
}

// setStamp records that the changes about to be distributed are applied now (see stamp).
func (p *sharedProcessor) setStamp() {
	p.stamp.Store(int64(p.mono.now()))
}

// stampTime returns stamp, 0 if unset.
func (p *sharedProcessor) stampTime() monoTime {
	return monoTime(p.stamp.Load())
}

// handlerStatuses returns the status of every registered handler at now, in the order they
// were added. A handler whose name an earlier one has gets "#2", "#3"… appended.
func (p *sharedProcessor) handlerStatuses(now time.Time) []HandlerStatus {
	p.mu.RLock()
	listeners := make([]*processorListener, 0, len(p.listeners))
	for _, r := range p.listeners {
		listeners = append(listeners, r.listener)
	}
	p.mu.RUnlock()
	out := make([]HandlerStatus, 0, len(listeners))
	seen := map[string]int{}
	for _, l := range listeners {
		st := l.status(p.mono.at(now))
		seen[st.Name]++
		if n := seen[st.Name]; n > 1 {
			st.Name = fmt.Sprintf("%s#%d", st.Name, n)
		}
		out = append(out, st)
	}
	return out
}
