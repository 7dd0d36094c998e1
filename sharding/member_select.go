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
	// RangeChanges counts the changes of ranges a watch carried out in its stream, and
	// Relists those it could not, which made the informer list again.
	RangeChanges, Relists uint64
}

// selectionCounters is the live form of SelectionStats.
type selectionCounters struct {
	listed, keptItems, events, keptEvents, changes, relists atomic.Uint64
}

// SelectionStats returns what this member's selections of resource (every ListerWatcher and
// SelectClient of it) received and kept so far. With client-side selection every member
// receives every object and event of the resource; with server-side selection only its own.
func (s *Shard) SelectionStats(resource schema.GroupVersionResource) SelectionStats {
	c := s.counters(resource)
	return SelectionStats{ListedItems: c.listed.Load(), KeptItems: c.keptItems.Load(),
		WatchEvents: c.events.Load(), KeptEvents: c.keptEvents.Load(), RangeChanges: c.changes.Load(), Relists: c.relists.Load()}
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
// segments to or from the member), the watch carries the change out in its stream, without a
// relist: it reads the objects of the moved segments at the resource version the stream has
// reached, sends a deletion for each object the member lost and an addition for each one it
// gained, and goes on watching the new ranges (see WatchWithContext); objects the member keeps
// see no event. Only if that read fails does the watch end with a 410 Expired error, so the
// informer lists again. While the member reconciles no range, a List returns no object and the
// watch waits for a change. Streaming watch-lists are not used.
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

	// mu guards reflected and pageSegments.
	mu sync.Mutex
	// reflected are the segments whose objects the informer's store holds: those of the last
	// list, changed by every change of ranges a watch carried out.
	reflected segments
	// pageSegments are the segments of the paged list in progress.
	pageSegments segments
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

// IsWatchListSemanticsUnSupported makes the Reflector list, then watch: the watch's stream
// changes with the ranges, which a watch-list's initial events cannot.
func (sel *rangeSelection) IsWatchListSemanticsUnSupported() bool { return true }

// serverSelector returns the shard selector of segs when the resource is selected on the
// server, else "".
func (sel *rangeSelection) serverSelector(ctx context.Context, segs segments) (string, error) {
	server, err := sel.shard.ServerSelection(ctx, sel.gvr)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Shard selector probe failed; selecting client-side", "resource", sel.gvr, "err", err)
		return "", nil
	}
	if !server {
		return "", nil
	}
	field, _ := sel.shard.serverField(sel.gvr)
	return ShardSelector(field, segs.ranges())
}

// ListWithContext lists the member's objects.
func (sel *rangeSelection) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s := sel.shard
	if s.ranges == nil {
		s.tweakLabels(&o)
		return sel.list(ctx, o)
	}
	segs := s.ranges.active()
	sel.mu.Lock()
	if o.Continue != "" {
		// A later page of a list: the same ranges as its first page.
		segs = sel.pageSegments
	} else {
		sel.reflected, sel.pageSegments = segs, segs
	}
	sel.mu.Unlock()
	if segs.empty() {
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
	var err error
	if o.ShardSelector, err = sel.serverSelector(ctx, segs); err != nil {
		return nil, err
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
		if sel.segmentOf(item, segs) >= 0 {
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

// segmentOf returns the segment of obj's hash if obj is sharded and its segment is in segs,
// else -1.
func (sel *rangeSelection) segmentOf(obj runtime.Object, segs segments) int {
	m, err := meta.Accessor(obj)
	if err != nil {
		return -1
	}
	h, ok := sel.hash(m)
	if !ok || !segs.has(segmentOf(h)) {
		return -1
	}
	return segmentOf(h)
}

// WatchWithContext watches the member's objects. When the member's ranges change, the watch
// carries the change out in its stream: it lists the objects of the segments that changed at
// the resource version the stream has reached (an exact read), sends a deletion for each
// object of a segment the member lost and an addition for each one of a segment it gained,
// then a bookmark at that version, and continues with a watch of the new ranges from there.
// Objects of the segments the member keeps see no event. If that read fails (the version was
// compacted, say), the watch ends with a 410 Expired error and the informer lists again.
func (sel *rangeSelection) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	s := sel.shard
	if s.ranges == nil {
		s.tweakLabels(&o)
		return sel.watch(ctx, o)
	}
	w := &selectedWatch{sel: sel, ctx: ctx, opts: o, rv: o.ResourceVersion,
		out: make(chan watch.Event), done: make(chan struct{}), changed: make(chan struct{}, 1)}
	unwatch := s.ranges.watch(w.signal)
	sel.mu.Lock()
	w.segs = sel.reflected
	sel.mu.Unlock()
	if s.ranges.active() != w.segs {
		w.signal() // the ranges changed since the list this watch continues
	}
	inner, err := w.open(w.segs)
	if err != nil {
		unwatch()
		return nil, err
	}
	go w.run(inner, unwatch)
	return w, nil
}

// selectedWatch is the watch of a rangeSelection (see WatchWithContext).
type selectedWatch struct {
	sel  *rangeSelection
	ctx  context.Context
	opts metav1.ListOptions
	// segs are the segments the stream carries; rv is the resource version it has reached.
	segs segments
	rv   string

	out      chan watch.Event
	done     chan struct{}
	changed  chan struct{}
	stopOnce sync.Once
}

// Stop ends the watch.
func (w *selectedWatch) Stop() { w.stopOnce.Do(func() { close(w.done) }) }

// ResultChan returns the events.
func (w *selectedWatch) ResultChan() <-chan watch.Event { return w.out }

// signal notes that the member's ranges changed.
func (w *selectedWatch) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// open starts the inner watch of segs from w.rv; nil (and no error) when segs is empty.
func (w *selectedWatch) open(segs segments) (watch.Interface, error) {
	if segs.empty() {
		return nil, nil
	}
	o := w.opts
	o.ResourceVersion = w.rv
	var err error
	if o.ShardSelector, err = w.sel.serverSelector(w.ctx, segs); err != nil {
		return nil, err
	}
	return w.sel.watch(w.ctx, o)
}

// rangesChanged is the error event that ends a watch that could not carry a change of ranges
// out: the informer lists again.
func rangesChanged() watch.Event {
	status := apierrors.NewResourceExpired("sharding: the member's hash ranges changed; list again").ErrStatus
	return watch.Event{Type: watch.Error, Object: &status}
}

// send passes ev on; false once the watch is stopped.
func (w *selectedWatch) send(ev watch.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.done:
		return false
	}
}

// run forwards inner's events in w.segs (inner is nil while there are none) and carries out
// every change of ranges, until inner ends or the watch is stopped.
func (w *selectedWatch) run(inner watch.Interface, unwatch func()) {
	defer close(w.out)
	defer unwatch()
	defer func() {
		if inner != nil {
			inner.Stop()
		}
	}()
	stats := w.sel.stats
	for {
		var events <-chan watch.Event
		if inner != nil {
			events = inner.ResultChan()
		}
		select {
		case <-w.done:
			return
		case <-w.changed:
			next := w.sel.shard.ranges.active()
			if next == w.segs {
				continue
			}
			replaced, ok := w.change(next)
			if !ok {
				stats.relists.Add(1)
				w.send(rangesChanged())
				return
			}
			if inner != nil {
				inner.Stop()
			}
			inner = replaced
			stats.changes.Add(1)
		case ev, ok := <-events:
			if !ok {
				return
			}
			if m, err := meta.Accessor(ev.Object); err == nil && ev.Type != watch.Error {
				w.rv = m.GetResourceVersion()
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				stats.events.Add(1)
				if w.sel.segmentOf(ev.Object, w.segs) < 0 {
					continue
				}
				stats.keptEvents.Add(1)
			}
			if !w.send(ev) {
				return
			}
		}
	}
}

// change carries a change of ranges from w.segs to next out in the stream, and returns the
// watch of next; false if it could not (the caller ends the watch).
func (w *selectedWatch) change(next segments) (watch.Interface, bool) {
	sel := w.sel
	if w.rv == "" || w.rv == "0" {
		return nil, false
	}
	lost, gained := w.segs.without(next), next.without(w.segs)
	moved := lost
	for i := range moved {
		moved[i] |= gained[i]
	}
	o := metav1.ListOptions{LabelSelector: w.opts.LabelSelector, FieldSelector: w.opts.FieldSelector,
		ResourceVersion: w.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	var err error
	if o.ShardSelector, err = sel.serverSelector(w.ctx, moved); err != nil {
		return nil, false
	}
	list, err := sel.list(w.ctx, o)
	if err != nil {
		klog.FromContext(w.ctx).V(2).Info("Reading the objects of changed hash ranges failed; listing again", "resource", sel.gvr, "err", err)
		return nil, false
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, false
	}
	inner, err := w.open(next)
	if err != nil {
		return nil, false
	}
	sel.stats.listed.Add(uint64(len(items)))
	var last runtime.Object
	for _, item := range items {
		var ev watch.Event
		switch seg := sel.segmentOf(item, moved); {
		case seg < 0:
			continue
		case lost.has(seg):
			ev = watch.Event{Type: watch.Deleted, Object: item}
		default:
			ev = watch.Event{Type: watch.Added, Object: item}
			sel.stats.keptItems.Add(1)
		}
		if !w.send(ev) {
			if inner != nil {
				inner.Stop()
			}
			return nil, false
		}
		last = item
	}
	if last != nil {
		// The objects carry their own, older versions: a bookmark brings the informer's
		// resource version back to where the stream is.
		bookmark := last.DeepCopyObject()
		if m, err := meta.Accessor(bookmark); err == nil {
			m.SetResourceVersion(w.rv)
			if !w.send(watch.Event{Type: watch.Bookmark, Object: bookmark}) {
				if inner != nil {
					inner.Stop()
				}
				return nil, false
			}
		}
	}
	w.segs = next
	sel.mu.Lock()
	sel.reflected = next
	sel.mu.Unlock()
	return inner, true
}

// tweakLabels is TweakListOptions with SelectByLabels.
func (s *Shard) tweakLabels(o *metav1.ListOptions) { s.TweakListOptions(o) }
