package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	// ErrNotAssigned is returned by Gate.Begin and Gate.Do for a key this member must not
	// reconcile: the object is not in the member's cache (never assigned here, moved away, or
	// deleted), or it is assigned to another member, or the member has handed it over. The
	// caller forgets the key (workqueue Forget + Done); an object assigned here later comes back
	// through the informer.
	ErrNotAssigned = errors.New("sharding: object not assigned to this member")
	// ErrHandedOver is returned when the call acknowledged a drain: the in-flight reconciles of
	// the key had ended, the member cleared the object's shard and drain labels, and will not
	// reconcile it again unless it is assigned here anew (or drained again: a later drain
	// mark is acknowledged anew). The caller forgets the key.
	ErrHandedOver = errors.New("sharding: object handed over")
	// ErrBusy is returned when the object is draining but a reconcile of the key is still in
	// flight in another worker or controller sharing the gate; the caller requeues the key
	// (AddRateLimited) and the acknowledgement happens on a later call.
	ErrBusy = errors.New("sharding: draining object still being reconciled")
	// ErrFenced is returned once the member may no longer act: its lease could have expired
	// or it is being released. Reconciles that are running see their context cancelled.
	ErrFenced = errors.New("sharding: member fenced")
)

// Skipped reports whether err, from Gate.Do or Gate.Begin, means the key must not be retried:
// ErrNotAssigned, ErrHandedOver or ErrFenced (forget the key). ErrBusy and every other error
// mean retry later (AddRateLimited).
func Skipped(err error) bool {
	return errors.Is(err, ErrNotAssigned) || errors.Is(err, ErrHandedOver) || errors.Is(err, ErrFenced)
}

// Lookup returns the cached object of key, like cache.Indexer's GetByKey (pass
// informer.GetIndexer().GetByKey).
type Lookup func(key string) (obj interface{}, exists bool, err error)

// Acknowledger clears the shard and drain labels of one object, but only if its shard label
// is member, its drain label is set and its resourceVersion is resourceVersion, the version of
// the draining copy the member saw (a conditional patch; an empty resourceVersion is not
// tested). It returns nil when it cleared them, and an error wrapping errStateChanged when the
// object was not as expected or is gone.
type Acknowledger func(ctx context.Context, namespace, name, member, resourceVersion string) error

// errStateChanged is wrapped by an Acknowledger's error when the object's labels were not the
// ones the acknowledgement was conditioned on, or its resourceVersion changed (or it no longer
// exists).
var errStateChanged = errors.New("sharding: object's shard labels changed")

// Gate stands between a workqueue and a reconcile for one sharded resource of one member: it
// lets a reconcile run only for objects the member owns, and acknowledges a drain only once no
// reconcile of the key is in flight. Because a workqueue never hands a key to two workers at
// once, a drain mark that arrives during a reconcile is acknowledged when the key is next
// processed, after that reconcile ended — never during it — and the member never reconciles
// the key afterwards unless the object is assigned to it again. The acknowledgement is
// conditioned on the resourceVersion of the draining copy the gate saw, so it never applies to
// a later drain than the one seen, and the gate remembers which copy it acknowledged, not
// merely that it did: a later drain mark on a newer copy is acknowledged in its turn even when
// the cache never showed the gate the assignment in between.
//
// With SelectByHash the gate lets a reconcile run only while the object's shard key hashes
// into a range the member reconciles (its ranges in the ring's current epoch, once every
// previous owner acknowledged it), and counts the running reconciles of each range, so that
// the member acknowledges an epoch that takes a range away only after they returned. No
// object is written to.
//
// One Gate is shared by every controller of the member that reconciles keys of the resource.
// All methods are safe for concurrent use.
type Gate struct {
	labels Labels
	member string
	lookup Lookup
	ack    Acknowledger
	fence  *fence
	// ranges and hash are set with SelectByHash: the member's ranges, and the hash of an
	// object's shard key.
	ranges *rangeMember
	hash   func(metav1.Object) uint64

	// mu guards inflight and handedOver.
	mu sync.Mutex
	// inflight counts the running reconciles of each key.
	inflight map[string]int
	// handedOver holds, for each key acknowledged (or being acknowledged) whose draining copy
	// may still be in the cache, that copy's resourceVersion.
	handedOver map[string]string
}

// newGate returns a gate of member for the resource whose cache lookup reads.
func newGate(l Labels, member string, lookup Lookup, ack Acknowledger, f *fence) *Gate {
	return &Gate{labels: l, member: member, lookup: lookup, ack: ack, fence: f,
		inflight: map[string]int{}, handedOver: map[string]string{}}
}

// Do runs reconcile for key if the member owns the object, and returns its error; otherwise it
// returns ErrNotAssigned, ErrHandedOver, ErrBusy or ErrFenced without calling reconcile (see
// Begin). The context reconcile gets is cancelled when the member is fenced.
func (g *Gate) Do(ctx context.Context, key string, reconcile func(ctx context.Context) error) error {
	ctx, done, err := g.Begin(ctx, key)
	if err != nil {
		return err
	}
	defer done()
	return reconcile(ctx)
}

// Begin decides whether key may be reconciled now. When it may, Begin returns a context that
// is cancelled when the member is fenced and a done func the caller must call when the
// reconcile ends; until then the gate will not acknowledge a drain of key. Otherwise it
// returns an error:
//
//   - the object is not cached, or assigned elsewhere, or handed over, or (SelectByHash) its
//     key's hash is outside the ranges the member reconciles now: ErrNotAssigned;
//   - it is draining and no reconcile of key is in flight: Begin acknowledges (clears the
//     labels) and returns ErrHandedOver, or the acknowledgement's error to retry later — also
//     when the object changed since the cached copy, which is acknowledged once it is cached;
//     a draining copy already acknowledged gives ErrNotAssigned;
//   - it is draining and a reconcile is in flight: ErrBusy;
//   - the member is fenced: ErrFenced.
func (g *Gate) Begin(ctx context.Context, key string) (context.Context, func(), error) {
	obj, exists, err := g.lookup(key)
	if err != nil {
		return nil, nil, fmt.Errorf("sharding: looking up %q: %w", key, err)
	}
	if !exists {
		g.mu.Lock()
		delete(g.handedOver, key)
		g.mu.Unlock()
		return nil, nil, ErrNotAssigned
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("sharding: cached object of %q: %w", key, err)
	}
	if g.ranges != nil {
		return g.beginHashed(ctx, m)
	}
	shard, draining := g.labels.stateOf(m.GetLabels())
	if shard != g.member {
		return nil, nil, ErrNotAssigned
	}
	if draining {
		return nil, nil, g.acknowledge(ctx, key, m.GetNamespace(), m.GetName(), m.GetResourceVersion())
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	// The cache moves forward only, and this member acknowledged only the very copy it saw
	// draining, so an undrained copy assigned here is a new assignment.
	delete(g.handedOver, key)
	if !g.fence.enter() {
		return nil, nil, ErrFenced
	}
	g.inflight[key]++
	rctx, cancel := context.WithCancel(ctx)
	stopFence := context.AfterFunc(g.fence.ctx, cancel)
	var once sync.Once
	done := func() {
		once.Do(func() {
			stopFence()
			cancel()
			g.mu.Lock()
			if g.inflight[key]--; g.inflight[key] == 0 {
				delete(g.inflight, key)
			}
			g.mu.Unlock()
			g.fence.exit()
		})
	}
	return rctx, done, nil
}

// beginHashed is Begin with SelectByHash.
func (g *Gate) beginHashed(ctx context.Context, m metav1.Object) (context.Context, func(), error) {
	exit, err := g.ranges.begin(g.hash(m))
	if err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	stopFence := context.AfterFunc(g.fence.ctx, cancel)
	var once sync.Once
	return rctx, func() {
		once.Do(func() {
			stopFence()
			cancel()
			exit()
		})
	}, nil
}

// acknowledge hands key over if no reconcile of it is in flight; rv is the resourceVersion of
// the draining copy in the cache.
func (g *Gate) acknowledge(ctx context.Context, key, namespace, name, rv string) error {
	g.mu.Lock()
	if acked, ok := g.handedOver[key]; ok && acked == rv {
		// This copy's drain is acknowledged, or being acknowledged by another worker. A
		// different copy is a later one (the cache moves forward): the object was assigned
		// here and drained again, and that drain is acknowledged below.
		g.mu.Unlock()
		return ErrNotAssigned
	}
	if g.inflight[key] > 0 {
		g.mu.Unlock()
		return ErrBusy
	}
	if !g.fence.enter() {
		g.mu.Unlock()
		return ErrFenced
	}
	// Marked before the patch is sent, so no reconcile of key starts while it is in flight.
	g.handedOver[key] = rv
	g.mu.Unlock()
	defer g.fence.exit()

	err := g.ack(ctx, namespace, name, g.member, rv)
	if err == nil {
		return ErrHandedOver
	}
	// Not acknowledged. If the object changed since the cached copy (someone else moved it
	// because this member was gone, an earlier attempt of ours landed, or it was written to
	// while draining), the cache brings the newer copy and a retry decides on it.
	g.mu.Lock()
	if g.handedOver[key] == rv {
		delete(g.handedOver, key)
	}
	g.mu.Unlock()
	return fmt.Errorf("sharding: acknowledging the drain of %q: %w", key, err)
}
