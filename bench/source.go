package main

import (
	"errors"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// source is an in-memory API server for one resource: List returns what list returns (called
// once per LIST, so it can hand out fresh copies as a decoding client would), Watch returns a
// FakeWatcher the workload sends events into. It refuses streaming watch-lists, so both
// libraries' reflectors do a plain LIST and then a watch.
type source struct {
	list func() runtime.Object

	mu      sync.Mutex
	watcher *watch.FakeWatcher
	gone    bool // the next Watch fails with 410 Gone, which makes the reflector relist
	watched chan struct{}

	lists atomic.Int32
}

func newSource(list func() runtime.Object) *source {
	return &source{list: list, watched: make(chan struct{}, 16)}
}

func (s *source) List(metav1.ListOptions) (runtime.Object, error) {
	s.lists.Add(1)
	return s.list(), nil
}

func (s *source) Watch(options metav1.ListOptions) (watch.Interface, error) {
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return nil, errors.New("bench: streaming lists are not supported")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		s.gone = false
		return nil, apierrors.NewResourceExpired("bench: resource version too old")
	}
	s.watcher = watch.NewFakeWithChanSize(1024, false)
	select {
	case s.watched <- struct{}{}:
	default:
	}
	return s.watcher, nil
}

// IsWatchListSemanticsUnSupported tells both reflectors not to try a streaming list.
func (s *source) IsWatchListSemanticsUnSupported() bool { return true }

// current returns the watcher of the running watch.
func (s *source) current() *watch.FakeWatcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watcher
}

// relist ends the running watch and makes the next one fail with 410 Gone: the reflector
// lists again from scratch.
func (s *source) relist() {
	s.mu.Lock()
	s.gone = true
	w := s.watcher
	s.mu.Unlock()
	w.Stop()
}
