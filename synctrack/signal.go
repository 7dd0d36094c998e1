package synctrack

import "sync"

// doneSignal is a channel that is closed at most once. Its zero value is ready to use: the
// channel is made on first use, so trackers work without their constructors.
type doneSignal struct {
	initOnce  sync.Once
	closeOnce sync.Once
	ch        chan struct{}
}

func (s *doneSignal) channel() chan struct{} {
	s.initOnce.Do(func() { s.ch = make(chan struct{}) })
	return s.ch
}

// fire closes the channel; later calls do nothing.
func (s *doneSignal) fire() {
	ch := s.channel()
	s.closeOnce.Do(func() { close(ch) })
}

// done returns the channel.
func (s *doneSignal) done() <-chan struct{} {
	return s.channel()
}

// fired reports, without blocking, whether fire was called.
func (s *doneSignal) fired() bool {
	select {
	case <-s.channel():
		return true
	default:
		return false
	}
}
