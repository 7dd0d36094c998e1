package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"k8s.io/utils/trace"
)

// transformedReplacer is implemented by stores whose Transformer would otherwise run twice on
// the objects of a streaming watch-list.
//
// The Reflector buffers the initial events of a watch-list until the bookmark that ends them,
// and runs the store's Transformer on each object as it buffers it, so that the buffer holds
// transformed (typically much smaller) objects: buffering them untransformed would bring back
// the memory peak that transformers exist to avoid. The store's Replace then transforms every
// object a second time (as in client-go), which costs time and
// requires transforms to be idempotent. A store implementing replaceTransformed receives the
// buffered objects there instead of through Replace, and must not transform them again; it is
// otherwise Replace. The method is unexported: only this package's stores can implement it
// (RealFIFO and DeltaFIFO do, so informers transform each object once).
type transformedReplacer interface {
	replaceTransformed(list []interface{}, resourceVersion string) error
}

// watchList fills the store from a streaming watch-list: a watch with SendInitialEvents that
// starts with an Added event for every object and marks the end of that initial state with a
// bookmark annotated k8s.io/initial-events-end. It returns the still-open watch, on which the
// steady-state watch continues.
//
// It asks for the last resource version (data at least that new), or "" (the newest data) when
// there is none or it was refused. A refused connection or a 429 waits the backoff (or until ctx
// is cancelled: client-go's wait ignores the context) and tries again; an
// expired or too-large resource version tries again at once from ""; a stream that closes
// without the bookmark tries again. Any other error is returned: the caller falls back to a
// LIST. It returns (nil, nil) when ctx is cancelled.
//
// A stream that goes quiet for initialEventsEndTimeout without ending its initial events (no
// event at all, or none since the last) comes from a client that cannot serve watch-lists but
// does not say so: the error is logged with the fix, and this Reflector lists from then on.
// client-go waits for that bookmark forever (kcache fixes it; see MIGRATING.md).
//
// The store is not touched until the bookmark arrives; then it gets one Replace. When the store
// is an informer's queue that dedups relists (see relistDeduper), every event is checked
// against the cache as it arrives: an object cached with the same resourceVersion is buffered
// as the cached object (and not transformed), so the buffer holds only the objects that changed.
func (r *Reflector) watchList(ctx context.Context) (watch.Interface, error) {
	logger := klog.FromContext(ctx)
	var transform TransformFunc
	if ts, ok := r.store.(TransformingStore); ok {
		transform = ts.Transformer()
	}
	initTrace := trace.New("Reflector WatchList", trace.Field{Key: "name", Value: r.name})
	defer initTrace.LogIfLong(10 * time.Second)
	listStart := r.clock.Now()
	r.metrics.lists.Inc()

	dedup, _ := r.store.(relistDeduper)
	if dedup != nil && !dedup.dedupsRelists() {
		dedup = nil
	}
	var (
		w               watch.Interface
		buffer          *watchListBuffer
		resourceVersion string
	)
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		resourceVersion = ""
		buffer = newWatchListBuffer(transform)
		buffer.dedup = dedup
		if le, ok := dedup.(listEncoder); ok {
			buffer.encode = le.listEncoder(false)
		}
		options := metav1.ListOptions{
			ResourceVersion:      r.rewatchResourceVersion(),
			AllowWatchBookmarks:  true,
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			TimeoutSeconds:       r.watchTimeoutSeconds(),
		}
		start := r.clock.Now()
		var err error
		w, err = r.listerWatcher.WatchWithContext(ctx, options)
		if err == nil && w == nil {
			err = errNilWatch
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			if r.retryWatchList(ctx, err) {
				continue
			}
			return nil, err
		}
		h := r.newWatchHandler(buffer, true)
		done, err := h.consume(ctx, start, w, nil, func(rv string, pastSyntheticAdds bool) {
			if pastSyntheticAdds {
				resourceVersion = rv
			}
		})
		if err != nil {
			// consume stopped w.
			if errors.Is(err, errorStopRequested) {
				return nil, nil
			}
			if errors.Is(err, errInitialEventsEndMissing) {
				// client-go waits for the bookmark forever; kcache stops streaming for good.
				r.useWatchList = false
				utilruntime.HandleErrorWithContext(ctx, err, "Streaming watch-list did not complete; listing instead from now on. "+
					"A client that cannot serve streaming watch-lists (such as client-go's fake clientsets) should say so: "+
					"build the factory with informers.WithWatchListSemanticsOf(client), wrap the ListWatch with "+
					"cache.ToListWatcherWithWatchListSemantics(lw, client), or set KUBE_FEATURE_WatchListClient=false",
					"reflector", r.name, "type", r.typeDescription)
				return nil, err
			}
			if r.retryWatchList(ctx, err) {
				continue
			}
			return nil, err
		}
		if done {
			break
		}
	}

	items, cached := buffer.list()
	initTrace.Step("Objects streamed", trace.Field{Key: "count", Value: len(items)}, trace.Field{Key: "unchanged", Value: buffer.unchanged})
	r.setIsLastSyncResourceVersionUnavailable(false)
	r.checkWatchListConsistencyIfRequested(ctx, resourceVersion, transform, items)

	var err error
	if dedup != nil {
		err = dedup.replaceRelisted(items, cached, resourceVersion, transform != nil)
	} else if tr, ok := r.store.(transformedReplacer); ok && transform != nil {
		err = tr.replaceTransformed(items, resourceVersion)
	} else {
		err = r.store.Replace(items, resourceVersion)
	}
	if err != nil {
		w.Stop()
		return nil, fmt.Errorf("unable to sync watch-list result: %w", err)
	}
	initTrace.Step("SyncWith done")
	r.setLastSyncResourceVersion(resourceVersion)
	r.metrics.listDuration.Observe(r.clock.Since(listStart).Seconds())
	r.metrics.itemsInList.Observe(float64(len(items)))
	logger.V(4).Info("Watch-list finished", "reflector", r.name, "items", len(items), "resourceVersion", resourceVersion)
	return w, nil
}

// retryWatchList reports whether a watch-list that failed with err should be tried again, after
// doing what the retry needs: waiting the backoff for a refused connection or a 429 (cut short
// when ctx is cancelled; the caller then sees ctx done), or marking the last resource version
// unavailable when the server refused it.
func (r *Reflector) retryWatchList(ctx context.Context, err error) bool {
	switch {
	case isWatchErrorRetriable(err):
		klog.FromContext(ctx).V(2).Info("watch-list failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", err)
		r.nextBackoff(ctx)
		return true
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		r.setIsLastSyncResourceVersionUnavailable(true)
		return true
	}
	return false
}

// watchListBuffer holds the initial events of a watch-list, in arrival order, keyed like the
// informer's store. It is used by one goroutine.
type watchListBuffer struct {
	transform TransformFunc
	// dedup, if set, replaces objects the informer has cached unchanged (see relistDeduper).
	dedup relistDeduper
	// encode, if set, gives what the buffer keeps for each transformed object (see
	// listEncoder).
	encode  func(obj interface{}) (item interface{}, transformed bool)
	index   map[string]int
	entries []watchListEntry
	live    int
	// unchanged counts the live entries taken from the cache.
	unchanged int
}

type watchListEntry struct {
	obj     interface{}
	deleted bool
	// cached says that obj came from the informer's cache: it is not transformed again.
	cached bool
}

func newWatchListBuffer(transform TransformFunc) *watchListBuffer {
	return &watchListBuffer{transform: transform, index: map[string]int{}}
}

var _ ReflectorStore = &watchListBuffer{}

// Add buffers obj, transformed (or the cached object, see dedup), replacing any object with
// its key.
func (b *watchListBuffer) Add(obj interface{}) error {
	cached := false
	if b.dedup != nil {
		if c, ok := b.dedup.unchangedInCache(obj); ok {
			obj, cached = c, true
		}
	}
	if b.transform != nil && !cached {
		var err error
		if obj, err = b.transform(obj); err != nil {
			return err
		}
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return KeyError{Obj: obj, Err: err}
	}
	if b.encode != nil && !cached {
		obj, _ = b.encode(obj)
	}
	if i, ok := b.index[key]; ok {
		b.countCached(b.entries[i].cached, -1)
		b.entries[i].obj, b.entries[i].cached = obj, cached
		b.countCached(cached, 1)
		return nil
	}
	b.index[key] = len(b.entries)
	b.entries = append(b.entries, watchListEntry{obj: obj, cached: cached})
	b.live++
	b.countCached(cached, 1)
	return nil
}

func (b *watchListBuffer) countCached(cached bool, delta int) {
	if cached {
		b.unchanged += delta
	}
}

// Update is Add.
func (b *watchListBuffer) Update(obj interface{}) error { return b.Add(obj) }

// Delete drops the object with obj's key.
func (b *watchListBuffer) Delete(obj interface{}) error {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return KeyError{Obj: obj, Err: err}
	}
	if i, ok := b.index[key]; ok {
		b.countCached(b.entries[i].cached, -1)
		b.entries[i] = watchListEntry{deleted: true}
		delete(b.index, key)
		b.live--
	}
	return nil
}

// Replace is not used during a watch-list; it makes list the content, for completeness.
func (b *watchListBuffer) Replace(list []interface{}, _ string) error {
	dedup, encode := b.dedup, b.encode
	*b = *newWatchListBuffer(b.transform)
	b.dedup, b.encode = dedup, encode
	for _, obj := range list {
		if err := b.Add(obj); err != nil {
			return err
		}
	}
	return nil
}

// Resync does nothing.
func (b *watchListBuffer) Resync() error { return nil }

// list returns the buffered objects in arrival order and, for each, whether it came from the
// informer's cache.
func (b *watchListBuffer) list() ([]interface{}, []bool) {
	out := make([]interface{}, 0, b.live)
	cached := make([]bool, 0, b.live)
	for _, e := range b.entries {
		if !e.deleted {
			out = append(out, e.obj)
			cached = append(cached, e.cached)
		}
	}
	return out, cached
}

// initialEventsEndTimeout is how long a watch-list waits, with nothing arriving, for the bookmark
// that ends its initial events before it gives up on streaming.
const initialEventsEndTimeout = 10 * time.Second

// errInitialEventsEndMissing says that a watch-list stream went quiet without the bookmark that
// ends its initial events. A server that serves streaming watch-lists sends that bookmark right
// after the initial events; a client that cannot serve them but does not say so (client-go's
// fake dynamic and metadata clients, a hand-written fake) never does, and client-go waits for it
// forever. kcache logs this error, naming the fix, and lists instead (see watchList).
var errInitialEventsEndMissing = errors.New("cache: the watch-list stream sent no bookmark marking the end of its initial events")

// initialEventsEndBookmarkTicker fires while the bookmark that ends the initial events of a
// watch-list is overdue: no event at all for initialEventsEndTimeout, or none for that long
// since the last one. It is a no-op for steady-state watches. Not safe for concurrent use.
//
// It ticks with a timer re-armed after each tick rather than a clock.Ticker: the fake clock's
// tickers cannot be stopped, so each watch-list would leave a waiter behind on a test's
// FakeClock forever, and HasWaiters-based tests would stop working.
type initialEventsEndBookmarkTicker struct {
	timer      clock.Timer // nil for the no-op ticker
	clock      clock.Clock
	name       string
	interval   time.Duration
	watchStart time.Time
	lastEvent  time.Time
}

func newInitialEventsEndBookmarkTicker(name string, c clock.Clock, watchStart time.Time, initialEvents bool) *initialEventsEndBookmarkTicker {
	t := &initialEventsEndBookmarkTicker{clock: c, name: name, interval: initialEventsEndTimeout, watchStart: watchStart}
	if initialEvents {
		t.timer = c.NewTimer(t.interval)
	}
	return t
}

// C returns the tick channel, nil (never ready) for the no-op ticker.
func (t *initialEventsEndBookmarkTicker) C() <-chan time.Time {
	if t.timer == nil {
		return nil
	}
	return t.timer.C()
}

// Stop stops the ticker.
func (t *initialEventsEndBookmarkTicker) Stop() {
	if t.timer != nil {
		t.timer.Stop()
	}
}

// observeEvent records that an event arrived now. The no-op ticker does not read the clock:
// a steady-state watch calls this for every event.
func (t *initialEventsEndBookmarkTicker) observeEvent() {
	if t.timer != nil {
		t.observeLastEventTimeStamp(t.clock.Now())
	}
}

func (t *initialEventsEndBookmarkTicker) observeLastEventTimeStamp(ts time.Time) {
	t.lastEvent = ts
}

// expired handles a tick: it returns an error wrapping errInitialEventsEndMissing when the
// stream has been quiet for the whole interval, and otherwise arms the next tick and returns nil.
func (t *initialEventsEndBookmarkTicker) expired() error {
	if t.timer == nil {
		return nil
	}
	quietSince := t.lastEvent
	if quietSince.IsZero() {
		quietSince = t.watchStart
	}
	quiet := t.clock.Since(quietSince)
	if quiet < t.interval {
		t.timer.Reset(t.interval - quiet)
		return nil
	}
	if t.lastEvent.IsZero() {
		return fmt.Errorf("%w: no events received for %v (reflector %s)", errInitialEventsEndMissing, quiet, t.name)
	}
	return fmt.Errorf("%w: received last event %v ago (reflector %s)", errInitialEventsEndMissing, quiet, t.name)
}
