package main

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// source is an in-memory API server for one resource: List returns what list returns (called
// once per LIST, so it can hand out fresh copies as a decoding client would), Watch returns a
// FakeWatcher the workload sends events into. Unless stream is set it refuses streaming
// watch-lists, so both libraries' reflectors do a LIST and then a watch.
type source struct {
	list func(options metav1.ListOptions) runtime.Object
	// stream, if set, serves a streaming watch-list: it sends every object as an Added event
	// and then the bookmark that ends the initial events.
	stream func(w *watch.FakeWatcher)

	mu      sync.Mutex
	watcher *watch.FakeWatcher
	watched chan struct{}

	lists atomic.Int32

	// sampleFn, if set, runs at the first page of every LIST and every sampleEvery-th page
	// after it, at every Watch call, and every sampleEvery*500-th object of a streamed list:
	// when the reflector waits for the source.
	sampleFn    atomic.Pointer[func()]
	sampleEvery atomic.Int64
	pages       atomic.Int64
}

// setSample makes f run while the reflector waits for the source (see sampleFn); nil stops it.
func (s *source) setSample(f func(), every int) {
	s.sampleEvery.Store(int64(every))
	if f == nil {
		s.sampleFn.Store(nil)
		return
	}
	s.sampleFn.Store(&f)
}

func (s *source) sample() {
	if f := s.sampleFn.Load(); f != nil {
		(*f)()
	}
}

func newSource(list func() runtime.Object) *source {
	return &source{list: func(metav1.ListOptions) runtime.Object { return list() }, watched: make(chan struct{}, 16)}
}

// podSource modes: how a source of pods serves the initial list and every relist.
const (
	onePage   = "one-page"   // a LIST answered in one response, as from the watch cache
	paged     = "paged"      // a LIST answered in pages of the reflector's limit (500), as from etcd
	watchList = "watch-list" // a streaming watch-list, client-go v0.37's default
)

// podSet is what a pod source serves: pods 0..n-1 at list resource version rv, each made
// afresh by pod on every call (nil: the pod does not exist), so that the source holds no copy
// of its own and hands out new objects, as a client decoding the server's answer does.
type podSet struct {
	n   int
	rv  string
	pod func(i int) *v1.Pod
}

// newPodSource serves the pods of the set that set returns at the time of each call.
func newPodSource(mode string, set func() *podSet) *source {
	s := &source{watched: make(chan struct{}, 16)}
	s.list = func(options metav1.ListOptions) runtime.Object {
		all := set()
		i := 0
		if options.Continue != "" {
			i, _ = strconv.Atoi(options.Continue)
		}
		list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: all.rv}}
		for ; i < all.n && (mode != paged || options.Limit <= 0 || int64(len(list.Items)) < options.Limit); i++ {
			if p := all.pod(i); p != nil {
				list.Items = append(list.Items, *p)
			}
		}
		if i < all.n {
			list.Continue = strconv.Itoa(i)
		}
		return list
	}
	if mode == watchList {
		s.stream = func(w *watch.FakeWatcher) {
			all := set()
			for i := range all.n {
				if i > 0 && int64(i)%(max(1, s.sampleEvery.Load())*500) == 0 {
					s.sample()
				}
				if p := all.pod(i); p != nil {
					w.Add(p)
				}
			}
			w.Action(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: all.rv,
				Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
			}})
		}
	}
	return s
}

func (s *source) List(options metav1.ListOptions) (runtime.Object, error) {
	s.lists.Add(1)
	if options.Continue == "" {
		s.pages.Store(0)
	}
	if n := s.pages.Add(1) - 1; n%max(1, s.sampleEvery.Load()) == 0 {
		s.sample()
	}
	return s.list(options), nil
}

func (s *source) Watch(options metav1.ListOptions) (watch.Interface, error) {
	s.sample()
	initial := options.SendInitialEvents != nil && *options.SendInitialEvents
	if initial && s.stream == nil {
		return nil, errors.New("bench: streaming lists are not supported")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := watch.NewFakeWithChanSize(1024, false)
	s.watcher = w
	if !initial {
		s.signalWatched()
		return w, nil
	}
	// The stream ends before the informer can sync, so before the workload may stop this
	// watcher (a FakeWatcher must not be sent to after Stop). watched is signalled once the
	// initial events are sent, so that what the workload sends next comes after them.
	go func() {
		s.stream(w)
		s.signalWatched()
	}()
	return w, nil
}

// signalWatched tells the workload that a watch runs and has sent its initial events, if any.
func (s *source) signalWatched() {
	select {
	case s.watched <- struct{}{}:
	default:
	}
}

// IsWatchListSemanticsUnSupported tells both reflectors not to try a streaming list unless
// the source serves them.
func (s *source) IsWatchListSemanticsUnSupported() bool { return s.stream == nil }

// current returns the watcher of the running watch.
func (s *source) current() *watch.FakeWatcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watcher
}

// relist ends the running watch with a 410 Gone error event, as a server does when the
// watch's resource version has been compacted: the reflector lists again. (Stopping the watch
// instead would make a reflector whose watch lasted under a second relist twice: once for the
// "very short watch", once for the 410 of the next Watch call.)
func (s *source) relist() {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	w.Error(&metav1.Status{
		Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
		Message: "bench: too old resource version",
	})
}
