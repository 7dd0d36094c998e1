package cache

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	fcache "github.com/kcache/cache/testing"
)

// fzProxy is a misbehaving proxy in front of the fake source: each List and Watch call takes
// the next fault the fuzzer scheduled for it, if any. Once quiet is set it passes everything
// through unchanged, also on the watches already open: the server is well-behaved again.
type fzProxy struct {
	src *fcache.FakeControllerSource

	// mu guards every field below.
	mu          sync.Mutex
	listFaults  []fzListFault
	watchFaults []fzWatchFault
	quiet       bool
	// pageCap, if positive, lowers a list's Limit to it: the server returns fewer items per
	// page than asked, so that even small lists come in pages.
	pageCap int64
	// delivered counts the malformed objects that reached the reflector, by kind.
	delivered map[string]int
}

// fzListFault is what happens to one List call.
type fzListFault struct {
	err     error
	notList bool // the answer is a Pod, not a list
	nilList bool // neither a list nor an error
	dupKey  bool // the first item is repeated at the end
	// expire makes the server change an object and compact its history before answering,
	// so that a continue token of an earlier page has expired.
	expire bool
}

// fzWatchFault is what happens to one Watch call: err or nilWatch fails it at once; otherwise
// the stream runs through the proxy, which after `after` events does `then`.
type fzWatchFault struct {
	err      error
	nilWatch bool
	after    int
	then     fzStreamFault
}

type fzStreamFault int

const (
	fzPass            fzStreamFault = iota
	fzClose                         // the stream ends, as if the connection broke
	fzErrorExpired                  // an ERROR event with a 410 Expired status, then the end
	fzErrorInternal                 // an ERROR event with a 500 status
	fzErrorNotStatus                // an ERROR event whose object is a Pod
	fzDropEndMark                   // the bookmark ending a watch-list's initial events is lost
	fzStripBookmarkRV               // bookmarks arrive without a resource version
	numStreamFaults
)

func newFzProxy(src *fcache.FakeControllerSource) *fzProxy {
	return &fzProxy{src: src, delivered: map[string]int{}}
}

func (p *fzProxy) List(options metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), options)
}

func (p *fzProxy) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return p.WatchWithContext(context.Background(), options)
}

func (p *fzProxy) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	p.mu.Lock()
	var f fzListFault
	if len(p.listFaults) > 0 && !p.quiet {
		f, p.listFaults = p.listFaults[0], p.listFaults[1:]
	}
	if p.pageCap > 0 && options.Limit > p.pageCap && !p.quiet {
		options.Limit = p.pageCap
	}
	p.mu.Unlock()
	switch {
	case f.err != nil:
		return nil, f.err
	case f.notList:
		p.count("list: not a list")
		return &v1.Pod{}, nil
	case f.nilList:
		p.count("list: nil")
		return nil, nil
	case f.expire:
		p.src.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fzKey(0), UID: types.UID("uid-" + fzKey(0)),
			Labels: map[string]string{"gen": "expire"}}})
		p.src.Compact(p.src.ResourceVersion())
	}
	obj, err := p.src.ListWithContext(ctx, options)
	if err != nil || !f.dupKey {
		return obj, err
	}
	list := obj.(*v1.PodList)
	if len(list.Items) > 0 {
		list.Items = append(list.Items, *list.Items[0].DeepCopy())
	}
	return list, nil
}

func (p *fzProxy) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	p.mu.Lock()
	var f fzWatchFault
	if len(p.watchFaults) > 0 && !p.quiet {
		f, p.watchFaults = p.watchFaults[0], p.watchFaults[1:]
	}
	p.mu.Unlock()
	switch {
	case f.err != nil:
		return nil, f.err
	case f.nilWatch:
		return nil, nil
	}
	inner, err := p.src.WatchWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	w := &fzWatch{p: p, inner: inner, fault: f, result: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w, nil
}

func (p *fzProxy) count(kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delivered[kind]++
}

func (p *fzProxy) isQuiet() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.quiet
}

// setQuiet makes the proxy pass everything through from now on and drops the faults still
// scheduled.
func (p *fzProxy) setQuiet() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quiet = true
	p.listFaults, p.watchFaults = nil, nil
}

// fzWatch is one watch through the proxy: its goroutine copies the inner stream's events to
// result, applying the fault.
type fzWatch struct {
	p      *fzProxy
	inner  watch.Interface
	fault  fzWatchFault
	result chan watch.Event
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
}

func (w *fzWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch; the proxy's goroutine and the inner watch have stopped when it returns.
func (w *fzWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *fzWatch) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.stop:
		return false
	}
}

func (w *fzWatch) run() {
	defer close(w.done)
	defer close(w.result)
	defer w.inner.Stop()
	n := 0
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-w.inner.ResultChan():
		case <-w.stop:
			return
		}
		if !ok {
			return
		}
		if !w.p.isQuiet() && n >= w.fault.after {
			switch w.fault.then {
			case fzClose:
				return
			case fzErrorExpired:
				s := fcache.ExpiredError().(interface{ Status() metav1.Status }).Status()
				w.send(watch.Event{Type: watch.Error, Object: &s})
				return
			case fzErrorInternal:
				s := fcache.InternalError().(interface{ Status() metav1.Status }).Status()
				w.send(watch.Event{Type: watch.Error, Object: &s})
				return
			case fzErrorNotStatus:
				w.send(watch.Event{Type: watch.Error, Object: &v1.Pod{}})
				return
			case fzDropEndMark:
				if ev.Type == watch.Bookmark {
					if m, ok := ev.Object.(*v1.Pod); ok && m.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
						continue
					}
				}
			case fzStripBookmarkRV:
				if ev.Type == watch.Bookmark {
					if m, ok := ev.Object.(*v1.Pod); ok {
						m.ResourceVersion = ""
					}
				}
			}
		}
		n++
		kind := ""
		switch obj := ev.Object; {
		case ev.Type == watch.Error:
		case isNilObject(obj):
			kind = "watch: nil object"
		default:
			if p, ok := obj.(*v1.Pod); !ok {
				kind = "watch: wrong type"
			} else if ev.Type == watch.Bookmark && p.ResourceVersion == "" {
				kind = "watch: bookmark without a resourceVersion"
			}
		}
		if !w.send(ev) {
			return
		}
		if kind != "" {
			w.p.count(kind)
		}
	}
}
