package integration

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"
)

// recorder sits between a Reflector and the API client. It records every list and watch call
// and what comes back, and lets a test drop the open watches (as a load balancer or a network
// blip would) and hold new ones back.
type recorder struct {
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)

	// mu guards every field below.
	mu    sync.Mutex
	lists []metav1.ListOptions
	// listRVs are the resource versions of the successful list responses.
	listRVs []string
	watches []metav1.ListOptions
	active  map[*recordedWatch]struct{}
	// expired counts 410 answers: list or watch calls that failed with Expired/Gone, and ERROR
	// events carrying such a status.
	expired int
	// bookmarks counts BOOKMARK events; events counts every other event, by type.
	bookmarks int
	events    map[watch.EventType]int
	// hold, when not nil, makes new watch calls wait until it is closed.
	hold chan struct{}
}

func newRecorder(
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) *recorder {
	return &recorder{
		list:   list,
		watch:  watchFn,
		active: map[*recordedWatch]struct{}{},
		events: map[watch.EventType]int{},
	}
}

// ListWatch returns the ListWatch to hand to a Reflector or informer.
func (r *recorder) ListWatch() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			r.mu.Lock()
			r.lists = append(r.lists, opts)
			r.mu.Unlock()
			obj, err := r.list(ctx, opts)
			r.noteErr(err)
			if err == nil {
				if l, lerr := meta.ListAccessor(obj); lerr == nil {
					r.mu.Lock()
					r.listRVs = append(r.listRVs, l.GetResourceVersion())
					r.mu.Unlock()
				}
			}
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			r.mu.Lock()
			hold := r.hold
			r.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			r.mu.Lock()
			r.watches = append(r.watches, opts)
			r.mu.Unlock()
			w, err := r.watch(ctx, opts)
			r.noteErr(err)
			if err != nil {
				return nil, err
			}
			return r.wrap(w), nil
		},
	}
}

func (r *recorder) noteErr(err error) {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		r.mu.Lock()
		r.expired++
		r.mu.Unlock()
	}
}

// Lists returns the options of every list call so far.
func (r *recorder) Lists() []metav1.ListOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]metav1.ListOptions(nil), r.lists...)
}

// ListResourceVersions returns the resource versions of the list responses so far.
func (r *recorder) ListResourceVersions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.listRVs...)
}

// Watches returns the options of every watch call so far.
func (r *recorder) Watches() []metav1.ListOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]metav1.ListOptions(nil), r.watches...)
}

// Relists counts the calls that fetch the whole state: list calls that start a list (not
// continuation pages) and watch calls that ask for initial events.
func (r *recorder) Relists() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.lists {
		if o.Continue == "" {
			n++
		}
	}
	for _, o := range r.watches {
		if isWatchList(o) {
			n++
		}
	}
	return n
}

// Expired counts the 410 Gone answers seen so far.
func (r *recorder) Expired() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.expired
}

// Bookmarks counts the BOOKMARK events seen so far.
func (r *recorder) Bookmarks() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bookmarks
}

// Events counts the non-bookmark events of type typ seen so far.
func (r *recorder) Events(typ watch.EventType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events[typ]
}

// HoldWatches makes every watch call from now on wait until ReleaseWatches.
func (r *recorder) HoldWatches() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold == nil {
		r.hold = make(chan struct{})
	}
}

// ReleaseWatches lets held and future watch calls through.
func (r *recorder) ReleaseWatches() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
}

// DropWatches ends every open watch: its result channel closes as when the connection ends.
func (r *recorder) DropWatches() int {
	r.mu.Lock()
	ws := make([]*recordedWatch, 0, len(r.active))
	for w := range r.active {
		ws = append(ws, w)
	}
	r.mu.Unlock()
	for _, w := range ws {
		w.Stop()
	}
	return len(ws)
}

func isWatchList(o metav1.ListOptions) bool {
	return o.SendInitialEvents != nil && *o.SendInitialEvents
}

// recordedWatch forwards a watch's events to its own channel, counting them on the way.
type recordedWatch struct {
	rec      *recorder
	inner    watch.Interface
	out      chan watch.Event
	stopOnce sync.Once
	stopped  chan struct{}
}

func (r *recorder) wrap(inner watch.Interface) *recordedWatch {
	w := &recordedWatch{rec: r, inner: inner, out: make(chan watch.Event), stopped: make(chan struct{})}
	r.mu.Lock()
	r.active[w] = struct{}{}
	r.mu.Unlock()
	go w.forward()
	return w
}

func (w *recordedWatch) forward() {
	defer func() {
		w.rec.mu.Lock()
		delete(w.rec.active, w)
		w.rec.mu.Unlock()
		w.inner.Stop()
		close(w.out)
	}()
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			w.rec.observe(ev)
			select {
			case w.out <- ev:
			case <-w.stopped:
				return
			}
		case <-w.stopped:
			return
		}
	}
}

func (r *recorder) observe(ev watch.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case watch.Bookmark:
		r.bookmarks++
	case watch.Error:
		r.events[ev.Type]++
		err := apierrors.FromObject(ev.Object)
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			r.expired++
		}
	default:
		r.events[ev.Type]++
	}
}

// Stop ends the watch; ResultChan closes.
func (w *recordedWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stopped) })
}

// ResultChan returns the forwarded events.
func (w *recordedWatch) ResultChan() <-chan watch.Event { return w.out }
