package cache

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// errorStopRequested ends a watch because the reflector's context was cancelled.
var errorStopRequested = errors.New("stop requested")

// watchTimeoutSeconds draws a watch timeout from [minWatchTimeout, maxWatchTimeout].
func (r *Reflector) watchTimeoutSeconds() *int64 {
	lo, hi := r.minWatchTimeout.Seconds(), r.maxWatchTimeout.Seconds()
	s := int64(lo + rand.Float64()*(hi-lo))
	return &s
}

// watchWithResync runs the watch loop with the resync timer beside it. w, if not nil, is the
// already-open stream of a watch-list; it is stopped before watchWithResync returns.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	resyncErrc := make(chan error, 1)
	resyncCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.startResync(resyncCtx, resyncErrc) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	return r.watch(ctx, w, resyncErrc)
}

// startResync calls the store's Resync every resync period (when ShouldResync agrees) until ctx
// is cancelled. A Resync error is sent on errc and ends the resyncs (and the watch). With no
// resync period it just waits for ctx.
func (r *Reflector) startResync(ctx context.Context, errc chan<- error) {
	if r.resyncPeriod == 0 {
		<-ctx.Done()
		return
	}
	logger := klog.FromContext(ctx)
	for {
		// A new timer each round, stopped when the round ends, so that reflectors whose watches
		// keep failing do not pile up timers.
		t := r.clock.NewTimer(r.resyncPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if r.ShouldResync == nil || r.ShouldResync() {
			logger.V(4).Info("Forcing resync", "reflector", r.name)
			if err := r.store.Resync(); err != nil {
				errc <- err
				return
			}
		}
	}
}

// watch watches from the last synced resource version, and keeps re-establishing the watch
// after it ends normally, until it cannot be resumed. If w is not nil it is consumed first.
//
// Outcomes: a normal close starts a new watch from the last resource version; a refused
// connection or a 429 (when starting the watch, or in the stream) waits the backoff and tries
// again; an internal error (500) in the stream is retried at once while MaxInternalErrorRetry
// Duration allows. An error starting the watch otherwise is returned (the round fails, the
// caller relists); any other error in the stream, an expired resource version included, or a
// Resync error returns nil, so that the caller relists. ctx cancelled returns nil.
func (r *Reflector) watch(ctx context.Context, w watch.Interface, resyncErrc chan error) error {
	logger := klog.FromContext(ctx)
	retry := NewRetryWithDeadline(r.MaxInternalErrorRetryDuration, time.Minute, apierrors.IsInternalError, r.clock)
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()

	for {
		if ctx.Err() != nil {
			return nil
		}
		// Measure from before the request: some proxies send nothing until the first event.
		start := r.clock.Now()
		// A watch from "" or "0" starts with synthetic Added events of the current state, in no
		// particular resource-version order. The handed-over watch-list stream is past them.
		propagateRVFromStart := true
		if w == nil {
			options := metav1.ListOptions{
				ResourceVersion: r.LastSyncResourceVersion(),
				// Ask the server to end the watch in due time, in case it hangs silently.
				TimeoutSeconds: r.watchTimeoutSeconds(),
				// Servers that do not support bookmarks ignore this.
				AllowWatchBookmarks: true,
			}
			if options.ResourceVersion == "" || options.ResourceVersion == "0" {
				propagateRVFromStart = false
			}
			var err error
			w, err = r.listerWatcher.WatchWithContext(ctx, options)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				r.status.watchFailed(err)
				if isWatchErrorRetriable(err) {
					logger.V(4).Info("Watch failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", err)
					if !r.nextBackoff(ctx) {
						return nil
					}
					continue
				}
				return err
			}
			if w == nil {
				return errNilWatch
			}
		}

		r.status.watchStarted()
		h := r.newWatchHandler(r.store, false)
		err := h.run(ctx, start, w, resyncErrc, func(rv string, pastSyntheticAdds bool) {
			// From a watch that started at "" or "0", a resource version is only trusted once
			// something other than an Added event arrived: before that the events are the
			// synthetic initial state, in no order, and recording one of their versions could
			// make a later resume skip events (the cache would go back in time).
			if propagateRVFromStart || pastSyntheticAdds {
				r.setLastSyncResourceVersion(rv)
				if u, ok := r.store.(ResourceVersionUpdater); ok {
					u.UpdateResourceVersion(rv)
				}
			}
		})
		w = nil // run always stops the watch
		retry.After(err)
		if err == nil || errors.Is(err, errorStopRequested) {
			continue // the loop's ctx check ends it when stopping
		}
		r.status.watchFailed(err)
		switch {
		case isExpiredError(err):
			// Not marked unavailable: a LIST at the last resource version returns data at
			// least that new, so the relist tries it first.
			logger.V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", err)
		case apierrors.IsTooManyRequests(err):
			logger.V(2).Info("Watch returned 429 - backing off", "reflector", r.name, "type", r.typeDescription)
			if !r.nextBackoff(ctx) {
				return nil
			}
			continue
		case apierrors.IsInternalError(err) && retry.ShouldRetry():
			logger.V(2).Info("Retrying watch after internal error", "reflector", r.name, "type", r.typeDescription, "err", err)
			continue
		default:
			logger.Info("Warning: watch ended with error", "reflector", r.name, "type", r.typeDescription, "err", err)
		}
		return nil
	}
}

// errNilWatch is returned when a ListerWatcher's Watch returns neither a watch nor an error.
var errNilWatch = errors.New("cache: watch returned a nil watch.Interface and no error")
