package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// errRunTwice is returned by a second call of Run.
var errRunTwice = errors.New("sharding: Shard.Run called twice")

// Run holds the member's lease and takes part in the sharder election until ctx is done or
// the lease is lost. On ctx's end it fences the member, waits for the reconciles in flight
// (their contexts are cancelled) and releases the lease, so the sharder moves the member's
// objects at once; it then returns nil. If the lease is lost (the member could not renew it
// in time) it returns ErrLeaseLost, and the member never acts again: exit, or build a new
// Shard to rejoin as a new member. Run may be called once.
func (s *Shard) Run(ctx context.Context) error {
	first := false
	s.running.Do(func() { first = true })
	if !first {
		return errRunTwice
	}
	ctx = klog.NewContext(ctx, s.opts.Logger.WithValues("ring", s.labels.Ring(), "member", s.name))
	var wg sync.WaitGroup
	campaignCtx, stopCampaign := context.WithCancel(ctx)
	if !s.opts.DisableSharder {
		wg.Go(func() { s.campaign(campaignCtx) })
	}
	lock := newLeaseLock(s.client.CoordinationV1(), s.opts.Namespace, s.name, s.name, map[string]string{RingLabel: s.labels.Ring()})
	followCtx, stopFollowing := context.WithCancel(ctx)
	err := holdLease(ctx, lock, s.timing, s.opts.Clock, s.fence, func() {
		s.fence.open()
		close(s.ready)
		if s.ranges != nil {
			wg.Go(func() { s.followEpochs(followCtx, lock) })
		}
	})
	stopFollowing()
	stopCampaign()
	wg.Wait()
	return err
}

// campaign runs for the sharder lease until ctx is done, and leads while it holds it.
func (s *Shard) campaign(ctx context.Context) {
	sh := &sharder{labels: s.labels, resources: s.opts.Resources, meta: s.meta, leases: s.client.CoordinationV1(),
		namespace: s.opts.Namespace, timing: s.timing, clock: s.opts.Clock, concurrency: s.opts.Concurrency,
		resync: s.opts.ResyncPeriod, followUp: s.opts.FollowUpDelay, logger: klog.FromContext(ctx)}
	for ctx.Err() == nil {
		f := newFence()
		var wg sync.WaitGroup
		lock := newLeaseLock(s.client.CoordinationV1(), s.opts.Namespace, s.labels.Ring()+"-sharder", s.name, nil)
		_ = holdLease(ctx, lock, s.timing, s.opts.Clock, f, func() {
			f.open()
			if f.enter() {
				wg.Go(func() {
					defer f.exit()
					if s.ranges != nil {
						sh.leadEpochs(f.ctx, lock)
					} else {
						sh.lead(f.ctx)
					}
					// Leading also ends while the lease is held (its informers could not
					// sync, say): give the lease up, so that a sharder leads again.
					f.close()
				})
			}
		})
		wg.Wait()
	}
}

// resource returns the ring's Resource of gvr; a resource that is not one of Options.Resources
// gets the defaults (keyed by KeyByName).
func (s *Shard) resource(gvr schema.GroupVersionResource) Resource {
	for _, r := range s.opts.Resources {
		if r.Resource == gvr {
			return r
		}
	}
	return Resource{Resource: gvr}
}

// Gate returns the member's gate for resource, whose objects lookup reads from the member's
// cache (pass informer.GetIndexer().GetByKey). Every controller of the member that reconciles
// keys of resource must use the same gate, so the first call builds it and later calls return
// it (their lookup is not used).
func (s *Shard) Gate(resource schema.GroupVersionResource, lookup Lookup) *Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.gates[resource]; ok {
		return g
	}
	g := newGate(s.labels, s.name, lookup, s.acknowledger(resource), s.fence)
	if s.ranges != nil {
		g.ranges, g.hash = s.ranges, s.resource(resource).hashOf
	}
	s.gates[resource] = g
	return g
}

// acknowledger clears an object's shard and drain labels with a JSON patch that first tests
// them and the resourceVersion, so it applies only while the object is still the draining copy
// the member saw.
func (s *Shard) acknowledger(resource schema.GroupVersionResource) Acknowledger {
	return func(ctx context.Context, namespace, name, member, rv string) error {
		patch, err := s.labels.acknowledgePatch(member, rv)
		if err != nil {
			return err
		}
		_, err = s.meta.Resource(resource).Namespace(namespace).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err), apierrors.IsInvalid(err), apierrors.IsConflict(err):
			// A failed test is answered 422 Unprocessable Entity.
			return fmt.Errorf("%w: %w", errStateChanged, err)
		}
		return err
	}
}
