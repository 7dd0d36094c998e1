package sharding

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/informers"
)

// leadEpochs is the elected sharder's work with SelectByHash, until ctx (the sharder lease's
// fence) is done: it keeps the ring view and, whenever the live members differ from the
// published epoch's, confirms the departed ones gone on the server and publishes the next
// epoch on its own Lease through lock (NextEpoch). It reads and writes no sharded object.
func (s *sharder) leadEpochs(ctx context.Context, lock *leaseLock) {
	logger := s.logger.WithValues("ring", s.labels.Ring())
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Became the sharder", "selection", SelectByHash)
	defer logger.Info("Stopped being the sharder")

	view := newRingView(s.clock, s.timing.LeaseDuration)
	defer view.stop()
	leaseFactory := informers.NewSharedInformerFactoryWithOptions(0,
		informers.WithNamespace(s.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s.labels.LeaseSelector().String() }))
	defer leaseFactory.Shutdown()
	leaseInformer := informers.For[*leaseType](leaseFactory, s.leases.Leases)
	if _, err := leaseInformer.TypedInformer().AddTypedEventHandler(view.handler()); err != nil {
		logger.Error(err, "Adding the lease handler")
		return
	}
	leaseFactory.StartWithContext(ctx)
	if err := leaseFactory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		if ctx.Err() == nil {
			logger.Error(err, "Syncing the lease informer")
		}
		return
	}

	// The epoch the last sharder published, as this one read its Lease when it took it over.
	value, _ := lock.annotation(EpochAnnotation)
	cur, _ := parseEpoch(value)
	p := &pass{s: s, view: view, confirmed: map[string]bool{}}
	var retry clock.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		if retry == nil {
			snap := view.snapshot()
			live := snap.Members()
			for _, m := range departing(cur, live) {
				if snap.Gone(m) {
					if _, err := p.confirmGone(ctx, m); err != nil && ctx.Err() == nil {
						logger.Error(err, "Confirming a member gone", "member", m)
					}
				}
			}
			if next, changed := NextEpoch(cur, live, p.isConfirmed); changed {
				switch err := lock.annotate(ctx, EpochAnnotation, encodeEpoch(next)); {
				case err == nil:
					cur = next
					logger.Info("Published epoch", "epoch", next.Number, "members", next.Members)
				case ctx.Err() != nil:
					logger.V(2).Info("Publishing the epoch ended with the sharder's lease", "epoch", next.Number, "err", err)
					return
				default:
					logger.Error(err, "Publishing the epoch", "epoch", next.Number)
					retry = s.clock.NewTimer(s.followUp)
				}
			}
			view.prune(s.timing.LeaseDuration)
		}
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			return
		case <-view.wake:
			view.tick()
		case <-view.changed:
		case <-retryC:
			retry = nil
		}
	}
}
