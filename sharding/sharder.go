package sharding

import (
	"context"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/workqueue"
)

// sharder is the elected replica's work: it keeps the ring view, labels unassigned objects as
// they appear (a watch of objects without a shard label), and on every membership change runs
// a pass over all objects of the ring's resources that drains, reassigns and assigns them.
// Objects are read and written through the metadata API only.
type sharder struct {
	labels      Labels
	resources   []Resource
	meta        metadata.Interface
	leases      coordinationv1client.LeasesGetter
	namespace   string
	timing      LeaseTiming
	clock       clock.WithTickerAndDelayedExecution
	concurrency int
	resync      time.Duration
	followUp    time.Duration
	logger      klog.Logger
}

// item is one unassigned object the sharder's queue holds.
type item struct {
	resource int // index into resources; controlled resources follow at offsets (see kinds)
	key      string
}

// kind is one resource the sharder watches: a reconciled resource, or a controlled resource
// of one.
type kind struct {
	gvr        schema.GroupVersionResource
	owner      int  // index of the reconciled resource
	controlled bool // follows its controlling owner
}

// kinds lists the reconciled resources, then every controlled resource.
func (s *sharder) kinds() []kind {
	var out []kind
	for i, r := range s.resources {
		out = append(out, kind{gvr: r.Resource, owner: i})
	}
	for i, r := range s.resources {
		for _, c := range r.Controlled {
			out = append(out, kind{gvr: c, owner: i, controlled: true})
		}
	}
	return out
}

// lead runs until ctx is done: ctx is the sharder lease's fence.
func (s *sharder) lead(ctx context.Context) {
	logger := s.logger.WithValues("ring", s.labels.Ring())
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Became the sharder")
	defer logger.Info("Stopped being the sharder")

	view := newRingView(s.clock, s.timing.LeaseDuration)
	defer view.stop()
	leaseFactory := informers.NewSharedInformerFactoryWithOptions(0,
		informers.WithNamespace(s.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s.labels.LeaseSelector().String() }))
	leaseInformer := informers.For[*leaseType](leaseFactory, s.leases.Leases)
	if _, err := leaseInformer.TypedInformer().AddTypedEventHandler(view.handler()); err != nil {
		logger.Error(err, "Adding the lease handler")
		return
	}

	kinds := s.kinds()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[item](),
		workqueue.TypedRateLimitingQueueConfig[item]{Clock: s.clock})
	stores := make([]cache.Store, len(kinds))
	var factories []informers.SharedInformerFactory
	defer func() {
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	for i, k := range kinds {
		// One factory per resource: each has its own namespace and selector.
		f := informers.NewSharedInformerFactoryWithOptions(0,
			informers.WithNamespace(s.resources[k.owner].Namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s.listSelector(k, true) }),
			informers.WithTransform(cache.TransformStripManagedFields()))
		factories = append(factories, f)
		inf := informers.ForResource(f, k.gvr, s.meta.Resource(k.gvr).Namespace).Informer()
		stores[i] = inf.GetStore()
		enqueue := func(obj interface{}) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(item{resource: i, key: key})
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
		}); err != nil {
			logger.Error(err, "Adding the object handler")
			return
		}
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	defer leaseFactory.Shutdown()
	defer queue.ShutDown()
	leaseFactory.StartWithContext(ctx)
	for _, f := range factories {
		f.StartWithContext(ctx)
	}
	if err := leaseFactory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return
	}
	for _, f := range factories {
		if err := f.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			return
		}
	}

	p := &pass{s: s, view: view, kinds: kinds, confirmed: map[string]bool{}}
	for range s.concurrency {
		wg.Go(func() {
			for s.assignNext(ctx, queue, kinds, stores, view) {
			}
		})
	}
	s.passLoop(ctx, view, p)
}

// assignNext labels one unassigned object from the queue; false once the queue shut down.
func (s *sharder) assignNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[item], kinds []kind,
	stores []cache.Store, view *ringView) bool {
	it, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(it)
	obj, exists, err := stores[it.resource].GetByKey(it.key)
	if err != nil || !exists {
		queue.Forget(it)
		return true
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		queue.Forget(it)
		return true
	}
	k := kinds[it.resource]
	if !s.shards(k, m) {
		queue.Forget(it)
		return true
	}
	snap := view.snapshot()
	var a Action
	if k.controlled {
		owner, _ := s.resources[k.owner].ownerOf(m) // shards checked it
		a = decideFollower(State{}, nil, s.resources[k.owner].controlledKey(owner), snap)
	} else {
		a = Decide(s.resources[k.owner].key(m), State{}, snap)
	}
	if a.Kind != AssignTo {
		queue.Forget(it)
		return true
	}
	if err := s.patch(ctx, k.gvr, m.GetNamespace(), m.GetName(), m.GetResourceVersion(), a); err != nil && !apierrors.IsNotFound(err) {
		if ctx.Err() == nil {
			queue.AddRateLimited(it)
		}
		return true
	}
	// A new owner's controlled objects are labelled by the same hash as it is; an owner that
	// was handed over had its controlled objects left where they were, and the follow-up
	// passes that the drain scheduled move them once it is settled here.
	queue.Forget(it)
	return true
}

// passLoop runs passes on membership changes, when a pass left work pending, and every
// resync period.
func (s *sharder) passLoop(ctx context.Context, view *ringView, p *pass) {
	logger := klog.FromContext(ctx)
	resync := s.clock.NewTicker(s.resync)
	defer resync.Stop()
	var followUp clock.Timer
	defer func() {
		if followUp != nil {
			followUp.Stop()
		}
	}()
	followUpC := func() <-chan time.Time {
		if followUp == nil {
			return nil
		}
		return followUp.C()
	}
	trigger := true
	for {
		if trigger {
			start := s.clock.Now()
			pending, err := p.run(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				logger.Error(err, "Sharding pass failed")
			}
			logger.V(4).Info("Sharding pass", "duration", s.clock.Since(start), "pending", pending, "members", view.snapshot().Members())
			view.prune(s.timing.LeaseDuration)
			if followUp != nil {
				followUp.Stop()
				followUp = nil
			}
			if pending || err != nil {
				followUp = s.clock.NewTimer(s.followUp)
			}
			trigger = false
		}
		select {
		case <-ctx.Done():
			return
		case <-view.wake:
			view.tick() // signals changed if a lease expired
			continue
		case <-view.changed:
		case <-resync.C():
		case <-followUpC():
			followUp = nil
		}
		trigger = true
	}
}

// listSelector is the label selector of k's sharded objects, of only the unassigned ones if
// unassigned.
func (s *sharder) listSelector(k kind, unassigned bool) string {
	var parts []string
	if sel := s.resources[k.owner].Selector; sel != nil && !sel.Empty() && !k.controlled {
		parts = append(parts, sel.String())
	}
	if unassigned {
		parts = append(parts, s.labels.UnassignedSelector().String())
	}
	return strings.Join(parts, ",")
}

// shards reports whether m is an object the ring shards: for a reconciled resource, one its
// selector matches; for a controlled resource, one with a controller reference (of the owner
// resource's Kind, if set).
func (s *sharder) shards(k kind, m metav1.Object) bool {
	r := s.resources[k.owner]
	if !k.controlled {
		return r.selects(m.GetLabels())
	}
	_, ok := r.ownerOf(m)
	return ok
}

// patch carries out a, conditioned on the object's resourceVersion still being rv.
func (s *sharder) patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, rv string, a Action) error {
	body, ok, err := s.labels.actionPatch(a, rv)
	if err != nil || !ok {
		return err
	}
	_, err = s.meta.Resource(gvr).Namespace(namespace).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}
