package sharding

import (
	"context"
	"sync"
)

// fence counts the work a member does under its lease (reconciles, acknowledgements) and
// stops new work once closed. A member closes it when it may no longer act — its lease could
// expire, or it is about to release it — and waits for the work in flight before releasing.
type fence struct {
	// mu guards opened, closed, inflight and drained.
	mu       sync.Mutex
	opened   bool
	closed   bool
	inflight int
	// drained is closed when the fence is closed and nothing is in flight.
	drained chan struct{}
	// ctx is cancelled when the fence closes; running reconciles are cancelled with it.
	ctx    context.Context
	cancel context.CancelFunc
}

// newFence returns an open fence.
func newFence() *fence {
	ctx, cancel := context.WithCancel(context.Background())
	return &fence{drained: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// open lets work in: a new fence admits nothing until the lease is first held.
func (f *fence) open() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened = true
}

// enter starts one unit of work and reports whether it may run; false before open and once
// closed.
func (f *fence) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.opened || f.closed {
		return false
	}
	f.inflight++
	return true
}

// exit ends a unit of work that enter admitted.
func (f *fence) exit() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflight--
	if f.inflight < 0 {
		panic("sharding: fence exit without enter")
	}
	if f.closed && f.inflight == 0 {
		close(f.drained)
	}
}

// close stops new work. It returns a channel that is closed once the work in flight has
// ended. Closing twice is allowed.
func (f *fence) close() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.cancel()
		if f.inflight == 0 {
			close(f.drained)
		}
	}
	return f.drained
}

// isClosed reports whether the fence is closed.
func (f *fence) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}
