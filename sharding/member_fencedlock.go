package sharding

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// ErrLeaseLost is returned by Shard.Run (and wrapped by the lock's refusals) once the member's
// lease could have expired before it was renewed: the member fenced itself and will not act
// again. Start a new Shard (a new member) to rejoin.
var ErrLeaseLost = errors.New("sharding: lease lost")

// fencedLock wraps the lease lock client-go's leader election drives, so that the holder stops
// acting before any observer can consider its lease expired, whatever the elector's loop does.
//
// Every successful Create or Update that renews the lease moves the fence deadline to the
// instant the request was sent plus leaseDuration − margin (measured on the holder's clock).
// An observer measures expiry from the moment it saw that renewal, which is later, plus
// leaseDuration on its own clock; so with clock rates within margin/leaseDuration of each
// other, the holder has stopped before anyone acts on the expiry. When the deadline passes
// the fence closes for good: work in flight is cancelled and the lock refuses to renew or
// recreate the lease, so a member that lost its lease never comes back under its name.
//
// A release (an Update with an empty holder, which the elector sends on a clean shutdown)
// first closes the fence and waits for the work in flight to end, so once the lease reads as
// released the member does nothing more.
type fencedLock struct {
	inner  resourcelock.Interface
	clock  clock.WithDelayedExecution
	fence  *fence
	window time.Duration // leaseDuration − margin

	// mu guards held, lost and timer.
	mu sync.Mutex
	// lost is set when the fence closed because the deadline passed.
	lost bool
	// held is set by the first successful renewal: from then on a Create means the lease was
	// deleted (by a sharder that confirmed this member gone) and is refused.
	held  bool
	timer clock.Timer
}

var _ resourcelock.Interface = (*fencedLock)(nil)

func newFencedLock(inner resourcelock.Interface, c clock.WithDelayedExecution, f *fence, leaseDuration, margin time.Duration) *fencedLock {
	return &fencedLock{inner: inner, clock: c, fence: f, window: leaseDuration - margin}
}

// Get reads the lease.
func (l *fencedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return l.inner.Get(ctx)
}

// Create creates the lease: only once, and never after the fence closed.
func (l *fencedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	if held || l.fence.isClosed() {
		return ErrLeaseLost
	}
	sent := l.clock.Now()
	if err := l.inner.Create(ctx, ler); err != nil {
		return err
	}
	l.renewed(sent)
	return nil
}

// Update renews the lease, or releases it once the work in flight has ended.
func (l *fencedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if ler.HolderIdentity == "" {
		l.stop()
		select {
		case <-l.fence.close():
		case <-ctx.Done():
			return ctx.Err()
		}
		return l.inner.Update(ctx, ler)
	}
	if l.fence.isClosed() {
		return ErrLeaseLost
	}
	sent := l.clock.Now()
	if err := l.inner.Update(ctx, ler); err != nil {
		return err
	}
	l.renewed(sent)
	return nil
}

// renewed moves the fence deadline to sent + window, unless the fence has closed meanwhile
// (a renewal that lands late does not reopen it). The elector renews from one goroutine at a
// time. Clock calls happen outside mu: a fake clock runs timer functions under its own lock.
func (l *fencedLock) renewed(sent time.Time) {
	remaining := sent.Add(l.window).Sub(l.clock.Now())
	l.mu.Lock()
	l.held = true
	l.mu.Unlock()
	l.stop()
	if remaining <= 0 {
		l.expire()
		return
	}
	timer := l.clock.AfterFunc(remaining, l.expire)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = timer
}

// expire closes the fence when the deadline passes.
func (l *fencedLock) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.fence.isClosed() {
		l.lost = true
		l.fence.close()
	}
}

// wasLost reports whether the fence closed because a renewal came too late.
func (l *fencedLock) wasLost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// stop stops the deadline timer.
func (l *fencedLock) stop() {
	l.mu.Lock()
	timer := l.timer
	l.timer = nil
	l.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
}

// RecordEvent passes the event to the wrapped lock.
func (l *fencedLock) RecordEvent(s string) { l.inner.RecordEvent(s) }

// Identity returns the wrapped lock's identity.
func (l *fencedLock) Identity() string { return l.inner.Identity() }

// Describe returns the wrapped lock's description.
func (l *fencedLock) Describe() string { return l.inner.Describe() }
