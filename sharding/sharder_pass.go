package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// passPageSize is the page size of a pass's lists.
const passPageSize = 500

// pass is the sharder's sweep over every object of the ring's resources: it lists them
// (metadata only, in pages), decides each against one snapshot of the ring and carries out
// the decisions with bounded concurrency. Reconciled resources go first, so that controlled
// objects can follow their owner's current shard.
type pass struct {
	s     *sharder
	view  *ringView
	kinds []kind

	// mu serializes confirmations (rare: one per departed member) and guards confirmed.
	mu sync.Mutex
	// confirmed caches, across passes, the members the server confirmed gone.
	confirmed map[string]bool
}

// run runs one pass. pending reports work the pass could not finish and a later pass must
// pick up: objects waiting for an acknowledgement, objects whose owner is neither live nor
// gone, controlled objects whose owner is still moving, failed patches.
func (p *pass) run(ctx context.Context) (pending bool, err error) {
	snap := p.view.snapshot()
	if len(snap.Members()) == 0 {
		return false, nil
	}
	owners := make([]map[string]State, len(p.s.resources))
	var errs []error
	for i, k := range p.kinds {
		if k.controlled {
			continue
		}
		owners[i] = map[string]State{}
		pend, err := p.sweep(ctx, k, snap, func(m metav1.Object, st State) Action {
			owners[i][KeyByName(m)] = st
			return Decide(p.s.resources[i].key(m), st, snap)
		})
		pending = pending || pend
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range p.kinds {
		if !k.controlled {
			continue
		}
		r := p.s.resources[k.owner]
		pend, err := p.sweep(ctx, k, snap, func(m metav1.Object, st State) Action {
			owner, _ := r.ownerOf(m) // sweep passes only objects the ring shards
			var ownerState *State
			if o, found := owners[k.owner][KeyByName(owner)]; found {
				ownerState = &o
			}
			return decideFollower(st, ownerState, r.controlledKey(owner), snap)
		})
		pending = pending || pend
		if err != nil {
			errs = append(errs, err)
		}
	}
	return pending, errors.Join(errs...)
}

// sweep lists every object of k and carries out decide's actions.
func (p *pass) sweep(ctx context.Context, k kind, snap *Snapshot, decide func(metav1.Object, State) Action) (pending bool, err error) {
	logger := klog.FromContext(ctx)
	client := p.s.meta.Resource(k.gvr).Namespace(p.s.resources[k.owner].Namespace)
	type job struct {
		obj    metav1.Object
		action Action
	}
	jobs := make(chan job)
	var mu sync.Mutex
	var failed int
	var wg sync.WaitGroup
	for range p.s.concurrency {
		wg.Go(func() {
			for j := range jobs {
				if err := p.carryOut(ctx, k, j.obj, j.action); err != nil {
					if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
						logger.V(2).Info("Sharder patch failed", "resource", k.gvr, "object", KeyByName(j.obj), "action", j.action.Kind, "err", err)
					}
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		})
	}
	// ResourceVersion "0": served from the API server's watch cache, not read from etcd — a
	// pass may run every second during a hand-over. A stale page only makes some patches fail
	// their resourceVersion condition; the next pass decides again.
	opts := metav1.ListOptions{Limit: passPageSize, LabelSelector: p.s.listSelector(k, false), ResourceVersion: "0"}
	var listErr error
	for {
		list, err := client.List(ctx, opts)
		if err != nil {
			listErr = fmt.Errorf("sharding: listing %s: %w", k.gvr, err)
			break
		}
		for i := range list.Items {
			m := &list.Items[i]
			if !p.s.shards(k, m) {
				continue
			}
			shard, draining := p.s.labels.stateOf(m.Labels)
			a := decide(m, State{Shard: shard, Draining: draining})
			switch a.Kind {
			case None:
			case Wait:
				pending = true
			default:
				if a.Kind == DrainFrom {
					pending = true // the acknowledgement comes later
				}
				select {
				case jobs <- job{obj: m, action: a}:
				case <-ctx.Done():
				}
			}
		}
		if list.Continue == "" || ctx.Err() != nil {
			break
		}
		opts.Continue, opts.ResourceVersion = list.Continue, "" // a continue token carries its version

	}
	close(jobs)
	wg.Wait()
	if failed > 0 {
		pending = true
	}
	if listErr != nil {
		return true, listErr
	}
	return pending, ctx.Err()
}

// carryOut patches one object; a reassignment first confirms its owner gone on the server.
func (p *pass) carryOut(ctx context.Context, k kind, m metav1.Object, a Action) error {
	if a.Kind == Reassign && !k.controlled {
		gone, err := p.confirmGone(ctx, a.From)
		if err != nil {
			return err
		}
		if !gone {
			return errNotConfirmed
		}
	}
	return p.s.patch(ctx, k.gvr, m.GetNamespace(), m.GetName(), m.GetResourceVersion(), a)
}

// isConfirmed reports whether the server confirmed member gone during this sharder's term.
func (p *pass) isConfirmed(member string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.confirmed[member]
}

// errNotConfirmed is returned for a reassignment whose owner the server showed alive.
var errNotConfirmed = errors.New("sharding: owner not confirmed gone")

// confirmGone confirms on the server that member is gone (see Ring): its lease is absent,
// released, or still at the version the view saw expire — then it is deleted on that
// condition, so the member cannot renew it. A lease that changed is observed instead.
func (p *pass) confirmGone(ctx context.Context, member string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.confirmed[member] {
		return true, nil
	}
	leases := p.s.leases.Leases(p.s.namespace)
	lease, err := leases.Get(ctx, member, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, err
	default:
		rec, seen := p.view.record(member)
		cur := recordOf(lease)
		if cur.Holder != "" && (!seen || rec != cur || !p.view.snapshot().Gone(member)) {
			p.view.observe(lease)
			return false, nil
		}
		rv := lease.ResourceVersion
		err := leases.Delete(ctx, member, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	klog.FromContext(ctx).Info("Member confirmed gone", "member", member)
	p.confirmed[member] = true
	p.view.confirm(member)
	return true, nil
}
