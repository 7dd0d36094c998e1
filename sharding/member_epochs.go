package sharding

import (
	"context"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
)

// followEpochs runs the member's side of the zero-write protocol until ctx is done: it watches
// the ring's Leases, feeds the ring's epoch (the sharder's Lease) and the members'
// acknowledgements (theirs) to the member's rangeMember, and writes the member's own
// acknowledgement on its Lease through lock when one is due. It starts once the member holds
// its Lease.
func (s *Shard) followEpochs(ctx context.Context, lock *leaseLock) {
	logger := klog.FromContext(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace(s.opts.Namespace))
	defer factory.Shutdown()
	leases := informers.For[*leaseType](factory, s.client.CoordinationV1().Leases)
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if _, err := leases.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*leaseType]{
		AddFunc:    func(*leaseType) { poke() },
		UpdateFunc: func(_, _ *leaseType) { poke() },
		DeleteFunc: func(cache.DeletedObject[*leaseType]) { poke() },
	}); err != nil {
		logger.Error(err, "Adding the lease handler")
		return
	}
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return
	}
	sharderLease := s.labels.Ring() + "-sharder"
	var retry clock.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		epoch := Epoch{}
		acks := map[string]uint64{}
		all, _ := leases.Lister().List(labels.Everything())
		for _, l := range all {
			switch {
			case l.Name == sharderLease:
				if e, ok := parseEpoch(l.Annotations[EpochAnnotation]); ok {
					epoch = e
				}
			case l.Labels[RingLabel] == s.labels.Ring():
				acks[l.Name] = parseAcknowledged(l.Annotations[AcknowledgedAnnotation])
			}
		}
		s.ranges.observe(epoch, func(m string) (uint64, bool) { n, ok := acks[m]; return n, ok })
		if n, due := s.ranges.ackDue(); due && retry == nil && s.fence.enter() {
			err := lock.annotate(ctx, AcknowledgedAnnotation, strconv.FormatUint(n, 10))
			s.fence.exit()
			if err == nil {
				s.ranges.acknowledged(n)
				e, owned, active, _ := s.ranges.status()
				logger.V(2).Info("Acknowledged epoch", "epoch", e, "ownedSegments", owned, "activeSegments", active)
			} else if ctx.Err() == nil {
				logger.V(2).Info("Acknowledging the epoch failed; retrying", "epoch", n, "err", err)
				retry = s.opts.Clock.NewTimer(s.timing.RetryPeriod)
			}
		}
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-s.ranges.changed:
		case <-retryC:
			retry = nil
		}
	}
}
