package sharding

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
)

// ServerSelection reports whether this member's lists and watches of resource are selected on
// the API server: with SelectByHash, for a resource whose objects are keyed by a ShardField (or
// a Controlled resource of one keyed by FieldNamespace; controlled objects following an owner's
// UID are always selected client-side), unless ClientSideSelection is set, when
// the server applies shard selectors (ServerShardSelection, asked once per resource and
// remembered). Otherwise members select client-side: they receive every object and event of
// the resource and drop those outside their ranges. With SelectByLabels it returns false (the
// server selects by label). An error is the probe's; the member then selects client-side.
func (s *Shard) ServerSelection(ctx context.Context, resource schema.GroupVersionResource) (bool, error) {
	field, namespace := s.serverField(resource)
	if field == "" {
		return false, nil
	}
	s.mu.Lock()
	server, known := s.serverSide[resource]
	s.mu.Unlock()
	if known {
		return server, nil
	}
	server, err := ServerShardSelection(ctx, s.dyn, resource, namespace)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	s.serverSide[resource] = server
	s.mu.Unlock()
	return server, nil
}

// serverField returns the field a server-side shard selector of resource would hash, "" if
// the resource cannot be selected on the server, and the namespace its objects are in.
func (s *Shard) serverField(gvr schema.GroupVersionResource) (field, namespace string) {
	if s.opts.Selection != SelectByHash || s.opts.ClientSideSelection {
		return "", ""
	}
	for _, r := range s.opts.Resources {
		if r.Resource == gvr {
			return r.ShardField, r.Namespace
		}
		for _, c := range r.Controlled {
			if c == gvr && r.ShardField == FieldNamespace {
				return FieldNamespace, r.Namespace
			}
		}
	}
	return "", ""
}

// selectedHash returns the function that gives the hash an object of gvr is selected by, and
// false if the object is not sharded: an object of a ring resource by its shard key, one of a
// Controlled resource by its owner's. A resource that is not the ring's keys by KeyByName.
func (s *Shard) selectedHash(gvr schema.GroupVersionResource) func(metav1.Object) (uint64, bool) {
	for _, r := range s.opts.Resources {
		if r.Resource == gvr {
			return func(m metav1.Object) (uint64, bool) { return r.hashOf(m), true }
		}
	}
	for _, r := range s.opts.Resources {
		for _, c := range r.Controlled {
			if c == gvr {
				return r.controlledHashOf
			}
		}
	}
	r := Resource{Resource: gvr}
	return func(m metav1.Object) (uint64, bool) { return r.hashOf(m), true }
}

// SelectionStats counts what one member's selection of one resource received and kept.
type SelectionStats struct {
	// ListedItems and KeptItems count the objects of every list the member received, and those
	// it kept (in its ranges).
	ListedItems, KeptItems uint64
	// WatchEvents and KeptEvents count the added, modified and deleted events the member
	// received, and those it passed on.
	WatchEvents, KeptEvents uint64
	// Relists counts the watches ended because the member's ranges changed.
	Relists uint64
}

// selectionCounters is the live form of SelectionStats.
type selectionCounters struct {
	listed, keptItems, events, keptEvents, relists atomic.Uint64
}

// SelectionStats returns what this member's selections of resource (every ListerWatcher and
// SelectClient of it) received and kept so far. With client-side selection every member
// receives every object and event of the resource; with server-side selection only its own.
func (s *Shard) SelectionStats(resource schema.GroupVersionResource) SelectionStats {
	c := s.counters(resource)
	return SelectionStats{ListedItems: c.listed.Load(), KeptItems: c.keptItems.Load(),
		WatchEvents: c.events.Load(), KeptEvents: c.keptEvents.Load(), Relists: c.relists.Load()}
}

// counters returns the selection counters of resource.
func (s *Shard) counters(gvr schema.GroupVersionResource) *selectionCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selectionStats == nil {
		s.selectionStats = map[schema.GroupVersionResource]*selectionCounters{}
	}
	c := s.selectionStats[gvr]
	if c == nil {
		c = &selectionCounters{}
		s.selectionStats[gvr] = c
	}
	return c
}

// ListerWatcher returns lw restricted to this member's objects of resource, one of the ring's
// resources or their Controlled resources. Build the member's informers of those resources on
// it (cache.NewSharedIndexInformer, or a controller-runtime cache's NewInformer).
//
// With SelectByLabels it adds the member's label selector (TweakListOptions) to every List and
// Watch. With SelectByHash it applies the hash ranges the member reconciles now: as a shard
// selector when ServerSelection says the server applies them, and always by dropping the
// listed objects and watch events outside the ranges before they reach the informer, so the
// member's store and handlers see only its objects. When the ranges change (an epoch moved
// segments to or from the member), the current watch ends with a 410 Expired error, and the
// informer's Reflector lists again with the new ranges after its usual backoff: objects the
// member keeps stay in its store (handlers see them as updates without change, as on a
// resync), objects it lost are deleted, objects it gained are added. While the member
// reconciles no range, a List returns no object and the watch waits for a change.
// Streaming watch-lists are not used.
//
// kcache extension.
func (s *Shard) ListerWatcher(resource schema.GroupVersionResource, lw cache.ListerWatcher) cache.ListerWatcher {
	lwc := cache.ToListerWatcherWithContext(lw)
	return s.newSelection(resource, lwc.ListWithContext, lwc.WatchWithContext)
}

// SelectClient wraps newClient, a function that returns the list-and-watch client of one
// namespace (the form informers.For and informers.ForResource take, such as
// dynamicClient.Resource(gvr).Namespace), so that the informer a factory builds on it lists
// and watches only this member's objects of resource, as Shard.ListerWatcher describes.
//
// kcache extension.
func SelectClient[C cache.ListWatchClient[L], L runtime.Object](s *Shard, resource schema.GroupVersionResource, newClient func(namespace string) C) func(namespace string) cache.ListWatchClient[L] {
	return func(namespace string) cache.ListWatchClient[L] {
		client := newClient(namespace)
		sel := s.newSelection(resource,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return client.List(ctx, o) },
			client.Watch)
		return &selectedClient[L]{sel: sel}
	}
}

// selectedClient is a cache.ListWatchClient over a selection.
type selectedClient[L runtime.Object] struct{ sel *rangeSelection }

// List lists the member's objects.
func (c *selectedClient[L]) List(ctx context.Context, o metav1.ListOptions) (L, error) {
	var zero L
	obj, err := c.sel.ListWithContext(ctx, o)
	if err != nil {
		return zero, err
	}
	l, ok := obj.(L)
	if !ok {
		return zero, fmt.Errorf("sharding: list of %s is a %T", c.sel.gvr, obj)
	}
	return l, nil
}

// Watch watches the member's objects.
func (c *selectedClient[L]) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return c.sel.WatchWithContext(ctx, o)
}

// IsWatchListSemanticsUnSupported makes the Reflector list, then watch.
func (c *selectedClient[L]) IsWatchListSemanticsUnSupported() bool { return true }

// rangeSelection is the ListerWatcher of one member's objects of one resource.
type rangeSelection struct {
	shard *Shard
	gvr   schema.GroupVersionResource
	hash  func(metav1.Object) (uint64, bool)
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
	stats *selectionCounters

	// mu guards listed and pageRanges.
	mu sync.Mutex
	// listed is the generation of the ranges the last list applied.
	listed uint64
	// pageRanges are the ranges of the paged list in progress.
	pageRanges []HashRange
}

func (s *Shard) newSelection(gvr schema.GroupVersionResource, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	w func(context.Context, metav1.ListOptions) (watch.Interface, error)) *rangeSelection {
	return &rangeSelection{shard: s, gvr: gvr, hash: s.selectedHash(gvr), list: list, watch: w, stats: s.counters(gvr)}
}

// List lists the member's objects.
func (sel *rangeSelection) List(o metav1.ListOptions) (runtime.Object, error) {
	return sel.ListWithContext(context.Background(), o)
}

// Watch watches the member's objects.
func (sel *rangeSelection) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return sel.WatchWithContext(context.Background(), o)
}

// IsWatchListSemanticsUnSupported makes the Reflector list, then watch: a watch that ends
// when the ranges change must not be the stream of a watch-list.
func (sel *rangeSelection) IsWatchListSemanticsUnSupported() bool { return true }

// ListWithContext lists the member's objects.
func (sel *rangeSelection) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s := sel.shard
	if s.ranges == nil {
		s.tweakLabels(&o)
		return sel.list(ctx, o)
	}
	gen, ranges := s.ranges.active()
	sel.mu.Lock()
	if o.Continue != "" {
		// A later page of a list: the same ranges as its first page.
		ranges = sel.pageRanges
	} else {
		sel.listed, sel.pageRanges = gen, ranges
	}
	sel.mu.Unlock()
	if len(ranges) == 0 {
		// Nothing to select: one object's list, for a resource version to watch from.
		o.Limit, o.Continue = 1, ""
		obj, err := sel.list(ctx, o)
		if err != nil {
			return nil, err
		}
		if err := meta.SetList(obj, nil); err != nil {
			return nil, err
		}
		if lm, err := meta.ListAccessor(obj); err == nil {
			lm.SetContinue("")
			lm.SetRemainingItemCount(nil)
		}
		return obj, nil
	}
	if server, err := s.ServerSelection(ctx, sel.gvr); err != nil {
		klog.FromContext(ctx).V(2).Info("Shard selector probe failed; selecting client-side", "resource", sel.gvr, "err", err)
	} else if server {
		field, _ := s.serverField(sel.gvr)
		if o.ShardSelector, err = ShardSelector(field, ranges); err != nil {
			return nil, err
		}
	}
	obj, err := sel.list(ctx, o)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, item := range items {
		if sel.keep(item, ranges) {
			kept = append(kept, item)
		}
	}
	sel.stats.listed.Add(uint64(len(items)))
	sel.stats.keptItems.Add(uint64(len(kept)))
	if len(kept) < len(items) {
		if err := meta.SetList(obj, kept); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// keep reports whether obj is one of the member's objects: sharded, and its hash in ranges.
func (sel *rangeSelection) keep(obj runtime.Object, ranges []HashRange) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	h, ok := sel.hash(m)
	return ok && InRanges(h, ranges)
}

// WatchWithContext watches the member's objects until the member's ranges change.
func (sel *rangeSelection) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	s := sel.shard
	if s.ranges == nil {
		s.tweakLabels(&o)
		return sel.watch(ctx, o)
	}
	w := &selectedWatch{out: make(chan watch.Event), done: make(chan struct{}), changed: make(chan struct{}, 1)}
	unwatch := s.ranges.watch(func() {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	})
	gen, ranges := s.ranges.active()
	sel.mu.Lock()
	stale := gen != sel.listed
	sel.mu.Unlock()
	var inner watch.Interface
	switch {
	case stale:
		// The ranges changed since the list this watch continues: list again at once.
		w.changed <- struct{}{}
	case len(ranges) > 0:
		if server, err := s.ServerSelection(ctx, sel.gvr); err == nil && server {
			field, _ := s.serverField(sel.gvr)
			if o.ShardSelector, err = ShardSelector(field, ranges); err != nil {
				unwatch()
				return nil, err
			}
		}
		var err error
		if inner, err = sel.watch(ctx, o); err != nil {
			unwatch()
			return nil, err
		}
	}
	go w.run(sel, inner, ranges, unwatch)
	return w, nil
}

// selectedWatch is the watch of a selection: the inner watch's events in the member's ranges,
// until the ranges change (then a 410 Expired error ends it) or it is stopped.
type selectedWatch struct {
	out      chan watch.Event
	done     chan struct{}
	changed  chan struct{}
	stopOnce sync.Once
}

// Stop ends the watch.
func (w *selectedWatch) Stop() { w.stopOnce.Do(func() { close(w.done) }) }

// ResultChan returns the events.
func (w *selectedWatch) ResultChan() <-chan watch.Event { return w.out }

// rangesChanged is the error event that ends a watch when the member's ranges changed.
func rangesChanged() watch.Event {
	status := apierrors.NewResourceExpired("sharding: the member's hash ranges changed; list again").ErrStatus
	return watch.Event{Type: watch.Error, Object: &status}
}

// run forwards inner's events (inner may be nil: no ranges, nothing to watch) until the ranges
// change, inner ends, or the watch is stopped.
func (w *selectedWatch) run(sel *rangeSelection, inner watch.Interface, ranges []HashRange, unwatch func()) {
	defer close(w.out)
	defer unwatch()
	var events <-chan watch.Event
	if inner != nil {
		defer inner.Stop()
		events = inner.ResultChan()
	}
	send := func(ev watch.Event) bool {
		select {
		case w.out <- ev:
			return true
		case <-w.done:
			return false
		}
	}
	for {
		select {
		case <-w.done:
			return
		case <-w.changed:
			sel.stats.relists.Add(1)
			send(rangesChanged())
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				sel.stats.events.Add(1)
				if !sel.keep(ev.Object, ranges) {
					continue
				}
				sel.stats.keptEvents.Add(1)
			}
			if !send(ev) {
				return
			}
		}
	}
}

// tweakLabels is TweakListOptions with SelectByLabels.
func (s *Shard) tweakLabels(o *metav1.ListOptions) { s.TweakListOptions(o) }
