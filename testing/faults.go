package testing

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// The verbs a Request and a RequestHook see.
const (
	VerbList  = "list"
	VerbWatch = "watch"
)

// Request is one List or Watch call the source received.
type Request struct {
	Verb    string // VerbList or VerbWatch
	Options metav1.ListOptions
}

// RequestHook runs at the start of every List and Watch call, after the call is recorded and
// before anything else, outside the source's lock. It may block — to delay the request, or
// until the test lets it go on — and should return when ctx ends. A non-nil error fails the
// request with that error.
type RequestHook func(ctx context.Context, verb string, options metav1.ListOptions) error

// DelayHook returns a RequestHook that delays every request by d on clk (a FakeClock in
// tests: step it once HasWaiters reports the request waiting), or fails it with ctx's error
// if ctx ends first.
func DelayHook(clk clock.Clock, d time.Duration) RequestHook {
	return func(ctx context.Context, _ string, _ metav1.ListOptions) error {
		t := clk.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ExpiredError returns the 410 Expired error a server gives for a resource version or continue
// token it has compacted (apierrors.IsResourceExpired holds).
func ExpiredError() error {
	return apierrors.NewResourceExpired("testing: injected: the resourceVersion is too old")
}

// TooManyRequestsError returns a 429 error asking the client to retry after the given number
// of seconds (apierrors.IsTooManyRequests holds, SuggestsClientDelay returns the delay).
func TooManyRequestsError(retryAfterSeconds int) error {
	return apierrors.NewTooManyRequests("testing: injected: too many requests", retryAfterSeconds)
}

// InternalError returns a 500 Internal Server Error (apierrors.IsInternalError holds).
func InternalError() error {
	return apierrors.NewInternalError(errors.New("testing: injected internal error"))
}

// ConnectionRefusedError returns the error a client gets when nothing listens at the server's
// address: a *net.OpError wrapping syscall.ECONNREFUSED, so that
// k8s.io/apimachinery/pkg/util/net.IsConnectionRefused holds.
func ConnectionRefusedError() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// FailLists makes the next n List calls fail with err, after any failures already scheduled.
func (f *FakeControllerSource) FailLists(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.listFaults = append(f.listFaults, err)
	}
}

// FailWatches makes the next n Watch calls fail with err, after any failures already scheduled.
func (f *FakeControllerSource) FailWatches(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.watchFaults = append(f.watchFaults, err)
	}
}

// SetListError sets ListError under the source's lock: every List fails with err until it is
// set back to nil.
func (f *FakeControllerSource) SetListError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ListError = err
}

// SetRequestHook installs hook for all later requests; nil removes it.
func (f *FakeControllerSource) SetRequestHook(hook RequestHook) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = hook
}

// SetWatchListSupported switches streaming lists on (the default) or off. Off, the source
// behaves like a server with the WatchList feature disabled: a watch that sets
// SendInitialEvents fails with an Invalid error, which makes a Reflector fall back to LIST.
func (f *FakeControllerSource) SetWatchListSupported(supported bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noWatchList = !supported
}

// CloseWatches closes every open watch at once, dropping the events still queued for it,
// like a connection that breaks mid-stream. History is kept, so a client can resume from the
// last version it saw.
func (f *FakeControllerSource) CloseWatches() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropAllLocked(abort)
}

// InjectError sends a watch.Error event to every open watch, after the events already queued.
// Its object is err's *metav1.Status if err is an API status error, else the status of an
// InternalError wrapping err — what a real server sends before ending a broken stream. The
// watches stay open.
func (f *FakeControllerSource) InjectError(err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	s := status.Status()
	f.Inject(watch.Event{Type: watch.Error, Object: &s})
}

// Inject sends ev to every open watch as it is — not recorded, not filtered, and the same
// object to every watch — after the events already queued. It is meant for bad input: an
// object of the wrong type, without metadata, nil, or an Error event with a non-Status object.
func (f *FakeControllerSource) Inject(ev watch.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers {
		if !w.pushLocked(queued{typ: ev.Type, obj: ev.Object}) {
			f.dropLocked(w, abort)
		}
	}
}

// Requests returns a copy of every List and Watch call received so far, in order.
func (f *FakeControllerSource) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// NumWatchers returns the number of open watches.
func (f *FakeControllerSource) NumWatchers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

// WaitForWatchers blocks until at least n watches are open, or returns ctx's error.
func (f *FakeControllerSource) WaitForWatchers(ctx context.Context, n int) error {
	return f.waitFor(ctx, func() bool { return len(f.watchers) >= n })
}

// WaitForRequests blocks until at least n List and Watch calls have been received (see
// Requests), or returns ctx's error.
func (f *FakeControllerSource) WaitForRequests(ctx context.Context, n int) error {
	return f.waitFor(ctx, func() bool { return len(f.requests) >= n })
}

func (f *FakeControllerSource) waitFor(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		ok, changed := cond(), f.changed
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// beginRequest records a request and runs what comes before serving it: the hook, a
// scheduled failure, ListError and the shutdown check, in that order.
func (f *FakeControllerSource) beginRequest(ctx context.Context, verb string, options metav1.ListOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	f.requests = append(f.requests, Request{Verb: verb, Options: options})
	f.notifyLocked()
	hook := f.hook
	f.mu.Unlock()

	if hook != nil {
		if err := hook(ctx, verb, options); err != nil {
			return err
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	faults := &f.listFaults
	if verb == VerbWatch {
		faults = &f.watchFaults
	}
	if len(*faults) > 0 {
		err := (*faults)[0]
		(*faults)[0] = nil
		*faults = (*faults)[1:]
		return err
	}
	if verb == VerbList && f.ListError != nil {
		return f.ListError
	}
	if f.shutdown {
		return ErrShutdown
	}
	return nil
}
