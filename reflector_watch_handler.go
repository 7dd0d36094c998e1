package cache

import (
	"context"
	"errors"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// errInitialEventsEndWithoutRV fails a watch-list whose initial events end with a bookmark
// that carries no resource version: the Reflector cannot tell which version the list reflects,
// so it falls back to a LIST.
var errInitialEventsEndWithoutRV = errors.New("cache: the bookmark ending the initial events of a watch-list has no resourceVersion")

// watchHandler turns the events of one watch into writes on a store.
type watchHandler struct {
	r     *Reflector
	store ReflectorStore
	// initialEvents is true while consuming the start of a streaming watch-list: the handler
	// then returns, leaving the watch open, at the bookmark that ends the initial events, and
	// warns while that bookmark is overdue. It is false for a steady-state watch, whose
	// metrics it records.
	initialEvents bool
}

func (r *Reflector) newWatchHandler(store ReflectorStore, initialEvents bool) *watchHandler {
	return &watchHandler{r: r, store: store, initialEvents: initialEvents}
}

// run is consume for a steady-state watch.
func (h *watchHandler) run(ctx context.Context, start time.Time, w watch.Interface, errc chan error, setRV func(rv string, pastSyntheticAdds bool)) error {
	_, err := h.consume(ctx, start, w, errc, setRV)
	return err
}

// consume applies the events of w to the store until the watch closes, ctx is cancelled
// (errorStopRequested), an error arrives on errc or in the stream (a watch.Error event), or, in
// initial-events mode, the bookmark that ends the initial events arrives. It reports whether
// that bookmark arrived. w is stopped on return, except after that bookmark in initial-events
// mode, when the caller keeps watching on it.
//
// Each event's resource version goes to setRV after the event is applied, with
// pastSyntheticAdds true once an event other than Added was seen; an empty resource version
// does not (client-go would resume the next watch from "", the current state, missing the
// deletions in between). Events whose object has the wrong type or GroupVersionKind, is a
// server-side Table, or has no metadata are logged and dropped, and so are bookmarks without a
// resource version — except the bookmark ending a watch-list's initial events, which then
// fails it with errInitialEventsEndWithoutRV. Store errors are logged and the event counts as
// handled.
//
// In initial-events mode, a stream that has sent nothing for initialEventsEndTimeout (no event
// yet, or none since the last one) returns an error wrapping errInitialEventsEndMissing.
//
// A watch that closes within a second without any event returns a *VeryShortWatchError.
func (h *watchHandler) consume(ctx context.Context, start time.Time, w watch.Interface, errc chan error, setRV func(rv string, pastSyntheticAdds bool)) (initialEventsEnd bool, err error) {
	r := h.r
	logger := klog.FromContext(ctx)
	keepOpen := false
	defer func() {
		if !keepOpen {
			w.Stop()
		}
	}()
	ticker := newInitialEventsEndBookmarkTicker(r.name, r.clock, start, h.initialEvents)
	defer ticker.Stop()
	if !h.initialEvents {
		r.metrics.watches.Inc()
	}

	pastSyntheticAdds := false
	eventCount := 0
	defer func() {
		if !h.initialEvents {
			r.metrics.watchDuration.Observe(r.clock.Since(start).Seconds())
			r.metrics.itemsInWatch.Observe(float64(eventCount))
		}
	}()

	results := w.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return initialEventsEnd, errorStopRequested
		case err := <-errc:
			return initialEventsEnd, err
		case <-ticker.C():
			if err := ticker.expired(); err != nil {
				return initialEventsEnd, err
			}
			continue
		case event, ok := <-results:
			if !ok {
				if r.clock.Since(start) < time.Second && eventCount == 0 {
					if !h.initialEvents {
						r.metrics.shortWatches.Inc()
					}
					return initialEventsEnd, &VeryShortWatchError{Name: r.name}
				}
				logger.V(4).Info("Watch close", "reflector", r.name, "type", r.typeDescription, "totalItems", eventCount)
				return initialEventsEnd, nil
			}
			if event.Type == watch.Error {
				return initialEventsEnd, apierrors.FromObject(event.Object)
			}
			accessor, ok := h.acceptable(ctx, event)
			if !ok {
				continue
			}
			rv := accessor.GetResourceVersion()
			endMark := event.Type == watch.Bookmark && accessor.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
			if event.Type == watch.Bookmark && rv == "" {
				// A bookmark is nothing but a resource version: without one it is malformed.
				utilruntime.HandleErrorWithContext(ctx, nil, "Watch bookmark without a resourceVersion", "reflector", r.name)
				if endMark && h.initialEvents {
					return false, errInitialEventsEndWithoutRV
				}
				continue
			}
			switch event.Type {
			case watch.Modified, watch.Deleted, watch.Bookmark:
				pastSyntheticAdds = true
			}
			initialEventsEnd = initialEventsEnd || endMark
			h.apply(ctx, event, rv)
			if rv != "" {
				// An object without a resource version does not tell where the watch is:
				// the last known version stays, so that a resumed watch misses nothing.
				setRV(rv, pastSyntheticAdds)
			}
			eventCount++
			if h.initialEvents && initialEventsEnd {
				keepOpen = true
				logger.V(4).Info("Exiting watch because received the bookmark that marks the end of initial events stream",
					"reflector", r.name, "totalItems", eventCount, "duration", r.clock.Since(start))
				return initialEventsEnd, nil
			}
			ticker.observeEvent()
			if h.initialEvents {
				r.status.listReceivedItems(1, ticker.lastEvent)
			}
		}
	}
}

// acceptable checks an event's object against the reflector's expectations, logs and rejects
// what does not fit, and returns the object's metadata.
func (h *watchHandler) acceptable(ctx context.Context, event watch.Event) (metav1.Object, bool) {
	r := h.r
	if isNilObject(event.Object) {
		utilruntime.HandleErrorWithContext(ctx, nil, "Watch event without an object", "reflector", r.name, "eventType", event.Type)
		return nil, false
	}
	if r.expectedType != nil {
		if e, a := r.expectedType, reflect.TypeOf(event.Object); e != a {
			utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected watch event object type", "reflector", r.name, "expectedType", e, "actualType", a)
			return nil, false
		}
	}
	if r.expectedGVK != nil {
		if e, a := *r.expectedGVK, event.Object.GetObjectKind().GroupVersionKind(); e != a {
			utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected watch event object gvk", "reflector", r.name, "expectedGVK", e, "actualGVK", a)
			return nil, false
		}
	}
	if isUnsupportedTableObject(event.Object) {
		utilruntime.HandleErrorWithContext(ctx, nil, "Unsupported watch event object gvk", "reflector", r.name, "actualGVK", event.Object.GetObjectKind().GroupVersionKind())
		return nil, false
	}
	accessor, err := meta.Accessor(event.Object)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Unable to understand watch event", "reflector", r.name, "event", event)
		return nil, false
	}
	return accessor, true
}

// apply writes one accepted event to the store; a store error is logged.
func (h *watchHandler) apply(ctx context.Context, event watch.Event, rv string) {
	name := h.r.name
	switch event.Type {
	case watch.Added:
		if err := h.store.Add(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to add watch event object to store", "reflector", name, "object", event.Object)
		}
	case watch.Modified:
		if err := h.store.Update(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to update watch event object to store", "reflector", name, "object", event.Object)
		}
	case watch.Deleted:
		if err := h.store.Delete(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to delete watch event object from store", "reflector", name, "object", event.Object)
		}
	case watch.Bookmark:
		// A bookmark changes no object: it only moves the resource version forward, which
		// stores that care hear about.
		if bs, ok := h.store.(ReflectorBookmarkStore); ok {
			if err := bs.Bookmark(rv); err != nil {
				utilruntime.HandleErrorWithContext(ctx, err, "Unable to send bookmark event to store", "reflector", name, "object", event.Object)
			}
		}
	default:
		utilruntime.HandleErrorWithContext(ctx, nil, "Unknown watch event", "reflector", name, "event", event)
	}
}

// isNilObject reports whether obj is nil or a nil pointer, which no accessor can read.
func isNilObject(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
