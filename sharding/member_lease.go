package sharding

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/clock"
)

// LeaseTiming is how a member holds its lease: client-go's leader-election timing plus the
// margin by which the holder stops acting before its lease could expire.
type LeaseTiming struct {
	// LeaseDuration is how long a lease lasts without renewal. Defaults to 15s.
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder retries a renewal before giving up. Defaults to 10s.
	RenewDeadline time.Duration
	// RetryPeriod is the interval between renewals. Defaults to 2s.
	RetryPeriod time.Duration
	// SkewMargin is how long before the lease could expire the holder stops acting: its
	// running reconciles are cancelled and must return within this margin, which must also
	// cover the difference in clock rates between holder and observers over a lease duration
	// (see SHARDING.md). Defaults to LeaseDuration/5.
	SkewMargin time.Duration
}

// withDefaults fills in the defaults and validates the timing.
func (t LeaseTiming) withDefaults() (LeaseTiming, error) {
	if t.LeaseDuration == 0 {
		t.LeaseDuration = 15 * time.Second
	}
	if t.RenewDeadline == 0 {
		t.RenewDeadline = 10 * time.Second
	}
	if t.RetryPeriod == 0 {
		t.RetryPeriod = 2 * time.Second
	}
	if t.SkewMargin == 0 {
		t.SkewMargin = t.LeaseDuration / 5
	}
	switch {
	case t.LeaseDuration%time.Second != 0:
		// Leases store whole seconds.
		return t, fmt.Errorf("%w: lease duration %v is not a whole number of seconds", ErrInvalidOptions, t.LeaseDuration)
	case t.SkewMargin < 0 || t.RetryPeriod <= 0 || t.RenewDeadline <= 0:
		return t, fmt.Errorf("%w: negative skew margin or non-positive renew deadline or retry period", ErrInvalidOptions)
	case t.RenewDeadline+t.RetryPeriod > t.LeaseDuration-t.SkewMargin:
		// The elector notices a failed renewal up to RetryPeriod+RenewDeadline after the last
		// good one; the fence closes at LeaseDuration−SkewMargin anyway, but an elector that
		// gives up later than the fence only delays the release.
		return t, fmt.Errorf("%w: renew deadline %v + retry period %v must not exceed lease duration %v − skew margin %v",
			ErrInvalidOptions, t.RenewDeadline, t.RetryPeriod, t.LeaseDuration, t.SkewMargin)
	}
	return t, nil
}

// holdLease runs client-go's leader election on the Lease of inner (its identity and labels)
// through a fencedLock on f. It calls started once the lease is held, and returns when ctx is
// done (after releasing the lease, once the work under f has ended) or when the lease is lost;
// either way f is closed on return. It returns ErrLeaseLost if the lease was lost rather than
// released.
func holdLease(ctx context.Context, inner *leaseLock, timing LeaseTiming, c clock.WithDelayedExecution, f *fence, started func()) error {
	lock := newFencedLock(inner, c, f, timing.LeaseDuration, timing.SkewMargin)
	defer lock.stop()
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   timing.LeaseDuration,
		RenewDeadline:   timing.RenewDeadline,
		RetryPeriod:     timing.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            inner.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { started() },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	// The elector stops on its own when a renewal fails for RenewDeadline; stop it too when
	// the fence closes first.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(f.ctx, cancel)
	defer stop()
	elector.Run(runCtx)
	f.close()
	if ctx.Err() != nil && !lock.wasLost() {
		return nil
	}
	return ErrLeaseLost
}
