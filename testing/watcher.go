package testing

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/ring"
)

// queued is an event waiting in a watcher's queue. Objects the source stores are shared, so
// the event is materialised — deep-copied, and given a resource version if setRV is set —
// only when it is sent, outside every lock, once per watcher.
type queued struct {
	typ  watch.EventType
	obj  runtime.Object
	copy bool
	// setRV, when non-zero, is written into the copy: a Deleted event made from an object's
	// previous state carries the version of the change that took it out of the selection.
	setRV int
}

func (q queued) event() watch.Event {
	obj := q.obj
	if q.copy && obj != nil {
		obj = obj.DeepCopyObject()
		if q.setRV != 0 {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetResourceVersion(strconv.Itoa(q.setRV))
			}
		}
	}
	return watch.Event{Type: q.typ, Object: obj}
}

// ending says how a watcher's stream ends.
type ending int

const (
	open  ending = iota
	drain        // send what is queued, then close the result channel
	abort        // drop what is queued and close at once, like a broken connection
)

// watcher is one open watch. The source pushes events into its queue under the source's lock
// without ever blocking; the watcher's own goroutine (run) moves them to the unbuffered result
// channel. The goroutine ends, closing the result channel, when the stream ends (drain or
// abort), the consumer calls Stop, the watch's context ends, or its timeout passes.
type watcher struct {
	src       *FakeControllerSource
	pred      predicate
	bookmarks bool // the watch asked for bookmarks (AllowWatchBookmarks)
	// after is the version the watch started from: changes at or below it are not sent.
	after    int
	maxQueue int

	result  chan watch.Event
	stopCh  chan struct{} // closed by Stop
	abortCh chan struct{} // closed when the stream is aborted
	wake    chan struct{} // capacity 1: something was queued or the stream is ending
	done    chan struct{} // closed when run returns
	ctxDone <-chan struct{}
	timeout time.Duration
	clock   clock.Clock
	stop    sync.Once

	// mu guards queue and end.
	mu    sync.Mutex
	queue ring.Ring[queued]
	end   ending
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch: the result channel is closed and the watch's goroutine has exited when
// Stop returns. Events still queued are dropped. Stop may be called any number of times, from
// any goroutine, also after the source closed the watch.
func (w *watcher) Stop() {
	w.stop.Do(func() { close(w.stopCh) })
	<-w.done
}

// pushLocked queues an event; the caller holds the source's lock. It reports false if the
// watcher no longer takes events — its stream is ending, or this event overflowed its queue
// bound, which aborts it the way a real server drops a watcher that cannot keep up.
func (w *watcher) pushLocked(q queued) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.end != open {
		return false
	}
	if w.maxQueue > 0 && w.queue.Len() >= w.maxQueue {
		w.endLocked(abort)
		return false
	}
	w.queue.Push(q)
	w.signal()
	return true
}

// offerLocked queues what this watcher sees of change c, with the API server's selector rules:
// an object that starts matching arrives as Added, one that stops matching leaves as Deleted
// (its previous state at the change's version). The caller holds the source's lock.
func (w *watcher) offerLocked(c change) bool {
	if c.rv <= w.after {
		return true
	}
	if w.pred.empty() {
		return w.pushLocked(queued{typ: c.typ, obj: c.cur.obj, copy: true})
	}
	wasIn := c.prev != nil && w.pred.matches(c.prev.attrs)
	if c.typ == watch.Deleted {
		if c.prev == nil {
			wasIn = w.pred.matches(c.cur.attrs)
		}
		if !wasIn {
			return true
		}
		return w.pushLocked(queued{typ: watch.Deleted, obj: c.cur.obj, copy: true})
	}
	isIn := w.pred.matches(c.cur.attrs)
	switch {
	case isIn && wasIn:
		return w.pushLocked(queued{typ: c.typ, obj: c.cur.obj, copy: true})
	case isIn:
		return w.pushLocked(queued{typ: watch.Added, obj: c.cur.obj, copy: true})
	case wasIn:
		return w.pushLocked(queued{typ: watch.Deleted, obj: c.prev.obj, copy: true, setRV: c.rv})
	}
	return true
}

func (w *watcher) isOpen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.end == open
}

// finish ends the stream the given way; the source has already forgotten the watcher.
func (w *watcher) finish(how ending) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.end == open {
		w.endLocked(how)
	}
}

func (w *watcher) endLocked(how ending) {
	w.end = how
	if how == abort {
		w.queue.Reset()
		close(w.abortCh)
	}
	w.signal()
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// next returns the next queued event, or ok=false when the stream has ended (closed says
// whether it ended rather than merely being empty).
func (w *watcher) next() (q queued, ok, closed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.end == abort {
		return q, false, true
	}
	q, ok = w.queue.Pop()
	if !ok && w.end == drain {
		return q, false, true
	}
	return q, ok, false
}

// run moves queued events to the result channel until the stream ends; see watcher.
func (w *watcher) run() {
	defer close(w.done)
	defer close(w.result)
	defer w.src.forget(w)

	var expired <-chan time.Time
	if w.timeout > 0 {
		t := w.clock.NewTimer(w.timeout)
		defer t.Stop()
		expired = t.C()
	}
	for {
		q, ok, closed := w.next()
		if closed {
			return
		}
		if !ok {
			select {
			case <-w.wake:
				continue
			case <-w.stopCh:
			case <-w.ctxDone:
			case <-expired:
			}
			return
		}
		select {
		case w.result <- q.event():
		case <-w.stopCh:
			return
		case <-w.abortCh:
			return
		case <-w.ctxDone:
			return
		case <-expired:
			return
		}
	}
}
