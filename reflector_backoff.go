package cache

import (
	"context"
	"math"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The default backoff between ListAndWatch rounds and between watch retries starts at 800ms and
// doubles, each step drawn from [d, 2d), up to 30s, so a failing server sees at most ~0.22
// requests per second from each reflector. After 2 minutes it starts over at 800ms.
const (
	defaultBackoffInit   = 800 * time.Millisecond
	defaultBackoffMax    = 30 * time.Second
	defaultBackoffReset  = 2 * time.Minute
	defaultBackoffFactor = 2.0
	defaultBackoffJitter = 1.0
)

// defaultReflectorBackoff returns the default backoff; Steps is enough doublings to reach the
// cap.
func defaultReflectorBackoff() wait.Backoff {
	return wait.Backoff{
		Duration: defaultBackoffInit,
		Cap:      defaultBackoffMax,
		Steps:    int(math.Ceil(float64(defaultBackoffMax) / float64(defaultBackoffInit))),
		Factor:   defaultBackoffFactor,
		Jitter:   defaultBackoffJitter,
	}
}

// backoffUntil runs round at once, then again after each backoff delay, until ctx is cancelled.
// The delay is measured on the reflector's clock (client-go's wait.DelayFunc.Until always uses
// the real clock). A panic in round is logged and re-raised.
func (r *Reflector) backoffUntil(ctx context.Context, round func(context.Context)) {
	for ctx.Err() == nil {
		func() {
			defer utilruntime.HandleCrashWithContext(ctx)
			round(ctx)
		}()
		if !r.nextBackoff(ctx) {
			return
		}
	}
}

// nextBackoff waits the next backoff delay. It returns false, at once, when ctx is cancelled
// first.
func (r *Reflector) nextBackoff(ctx context.Context) bool {
	d := r.delayHandler()
	r.status.backingOff(d)
	return r.sleep(ctx, d)
}

// sleep waits d on the reflector's clock. It returns false, at once, when ctx is cancelled
// first.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// isWatchErrorRetriable reports whether a failed watch should be retried after a backoff rather
// than answered with a relist: the server refused the connection (it is most likely restarting,
// and the watch can resume where it ended) or asked the client to slow down (429).
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}
