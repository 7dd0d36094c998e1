package testing

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch starts a watch; it is WatchWithContext without a context: the watch runs until Stop,
// its timeout, or the source closes it.
func (f *FakeControllerSource) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return f.watch(context.Background(), options)
}

// WatchWithContext starts a watch of the objects that match options' selectors. The watch
// also ends when ctx ends. Where it starts is decided as on a real API server:
//
//   - ResourceVersion "" or "0" without SendInitialEvents: an Added event for every current
//     object (sorted by namespace, name and UID), then the changes that follow.
//   - ResourceVersion N: the retained changes after N, then the changes that follow. N below
//     the compacted version fails with 410 Expired ("too old resource version"); N above the
//     current version is accepted and sends the changes after N when they happen.
//   - SendInitialEvents=true (ResourceVersionMatch must be NotOlderThan): a streaming list.
//     An Added event for every current object, then — if AllowWatchBookmarks is set — a
//     Bookmark at the current version annotated "k8s.io/initial-events-end": "true", then
//     the changes that follow. N above the current version fails at once with the "Too large
//     resource version" error (a real server first waits up to 3s). With streaming lists
//     switched off (SetWatchListSupported), such a request fails with Invalid.
//   - SendInitialEvents=false: the changes after ResourceVersion, or after the current
//     version if it is "" or "0".
//
// Objects that start or stop matching the selectors arrive as Added or Deleted, as from a
// real server's watch cache. Bookmark sends bookmarks to watches with AllowWatchBookmarks.
// TimeoutSeconds, if set, ends the watch that long after it started, on Options.Clock.
// Every event carries its own deep copy of the object.
//
// Each watch has its own goroutine and an unbounded queue (see Options.MaxWatchQueue), so the
// source never waits for a slow consumer. Stop ends the goroutine before it returns; so do
// the end of ctx and the timeout. A watch closed by the source (ResetWatch, Shutdown,
// CloseWatches) ends its goroutine once its consumer has read what was left for it, or calls
// Stop.
//
// Before that, the call is recorded (Requests), the RequestHook runs, and a failure scheduled
// with FailWatches, then ErrShutdown after Shutdown, is returned.
func (f *FakeControllerSource) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return f.watch(ctx, options)
}

func (f *FakeControllerSource) watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	if err := f.beginRequest(ctx, VerbWatch, options); err != nil {
		return nil, err
	}
	f.mu.Lock()
	watchList := !f.noWatchList
	f.mu.Unlock()
	if err := validateWatch(options, watchList); err != nil {
		return nil, err
	}
	pred, err := parsePredicate(options, f.opts.FieldsFunc != nil)
	if err != nil {
		return nil, err
	}
	rv, hasRV, err := parseResourceVersion(options.ResourceVersion)
	if err != nil {
		return nil, err
	}
	initial := !hasRV
	if options.SendInitialEvents != nil {
		initial = *options.SendInitialEvents
	}
	var endMark metav1.Object
	var endObj runtime.Object
	if initial && options.SendInitialEvents != nil && options.AllowWatchBookmarks {
		if endObj, err = f.newObject(); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if endMark, err = meta.Accessor(endObj); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("testing: bookmark object %T: %w", endObj, err))
		}
	}

	w := &watcher{
		src:       f,
		pred:      pred,
		bookmarks: options.AllowWatchBookmarks,
		maxQueue:  f.opts.MaxWatchQueue,
		result:    make(chan watch.Event),
		stopCh:    make(chan struct{}),
		abortCh:   make(chan struct{}),
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		ctxDone:   ctx.Done(),
		clock:     f.opts.Clock,
	}
	if s := options.TimeoutSeconds; s != nil && *s > 0 {
		w.timeout = time.Duration(*s) * time.Second
	}

	f.mu.Lock()
	err = f.startLocked(w, rv, hasRV, initial, endObj, endMark)
	if err == nil && w.isOpen() {
		f.watchers[w] = struct{}{}
		f.notifyLocked()
	}
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	go w.run()
	return w, nil
}

// startLocked queues what a new watch sees before the live changes, as WatchWithContext
// documents. endObj, if not nil, becomes the initial-events-end bookmark.
func (f *FakeControllerSource) startLocked(w *watcher, rv int, hasRV, initial bool, endObj runtime.Object, endMark metav1.Object) error {
	if f.shutdown {
		return ErrShutdown
	}
	h := &f.hist
	switch {
	case initial:
		if hasRV && rv > h.lastRV {
			return tooLargeError(rv, h.lastRV)
		}
		// The watch is not visible yet: its queue may be filled without its lock, and the
		// initial events are not subject to MaxWatchQueue.
		keys, objs := h.snapshot(h.lastRV)
		for _, k := range keys {
			if e := objs[k]; w.pred.matches(e.attrs) {
				w.queue.Push(queued{typ: watch.Added, obj: e.obj, copy: true})
			}
		}
		w.after = h.lastRV
		if endObj != nil {
			endMark.SetResourceVersion(strconv.Itoa(h.lastRV))
			annotations := maps.Clone(endMark.GetAnnotations())
			if annotations == nil {
				annotations = map[string]string{}
			}
			maps.Copy(annotations, initialEventsEnd)
			endMark.SetAnnotations(annotations)
			w.queue.Push(queued{typ: watch.Bookmark, obj: endObj})
		}
	case !hasRV:
		w.after = h.lastRV
	case rv > h.lastRV:
		w.after = rv
	case !h.retained(rv):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, h.compacted))
	default:
		w.after = rv
		for _, c := range h.changesAfter(rv) {
			if !w.offerLocked(c) {
				break
			}
		}
	}
	return nil
}
