package cache

import (
	"fmt"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/ring"
)

// DeltaFIFOOptions configures a DeltaFIFO. Every field is optional.
type DeltaFIFOOptions struct {
	// Logger receives the queue's log output, with the queue's name added. Defaults to
	// klog.Background().
	Logger *klog.Logger

	// Name names the queue in logs and in HasSyncedChecker().Name(). Defaults to "DeltaFIFO".
	Name string

	// KeyFunction computes the key of the objects given to the queue. KeyOf wraps it with
	// support for Deltas and DeletedFinalStateUnknown. Defaults to MetaNamespaceKeyFunc.
	KeyFunction KeyFunc

	// KnownObjects is what the consumer already knows, usually the store it fills from the
	// queue. It lets Delete accept deletions of objects that are no longer queued, Replace
	// emit deletions for known objects missing from the new list, and Resync re-deliver known
	// objects. Without it, deletions missed while a watch was down are never reported for
	// objects that are not queued.
	KnownObjects KeyListerGetter

	// EmitDeltaTypeReplaced makes Replace queue Replaced deltas. Defaults to false, which
	// queues Sync deltas instead, as DeltaFIFO did before Replaced existed; consumers then
	// cannot tell a relist from a periodic resync.
	EmitDeltaTypeReplaced bool

	// Transformer, if set, rewrites every object before it is queued (see TransformFunc).
	// It is not applied to tombstones or to objects re-queued by Resync, which come from
	// KnownObjects and were transformed already.
	Transformer TransformFunc
}

// DeltaFIFO is a queue of per-object change lists. Each key is queued once; what it holds is
// the Deltas recorded for that object since it was last popped, oldest first. A producer (the
// Reflector) records Added, Updated, Deleted, Replaced and Sync deltas; a single consumer pops
// one object's Deltas at a time, in the order the keys were first queued.
//
// Use it to process every change of an object at most once while seeing everything that
// happened to it since it was last processed, including deletions and periodic resyncs.
// Informers no longer use it (they use RealFIFO, which keeps the global order of changes).
//
// Deltas are never merged, with one exception: when a Deleted delta follows a Deleted delta,
// only one is kept — the newer one if the older carries a DeletedFinalStateUnknown, otherwise
// the older one. So a hot key's Deltas grow while the consumer is slow.
//
// Pop calls the process function with the queue locked, so a consumer may update the
// KnownObjects store in process without racing Delete, Replace and Resync, and producers wait
// while it runs. HasSynced turns true only after the last item of the first Replace was
// processed (client-go turns it true just before; see HasSynced).
//
// Create it with NewDeltaFIFOWithOptions; the zero value is not usable. All methods are safe
// for concurrent use; Pop must be called by one consumer goroutine at a time.
type DeltaFIFO struct {
	logger       klog.Logger
	keyFunc      KeyFunc
	knownObjects KeyListerGetter
	transformer  TransformFunc
	// relistStore, when set (by newQueueFIFO), is the informer's store: see relistDeduper.
	relistStore KeyGetter
	// emitDeltaTypeReplaced makes Replace queue Replaced rather than Sync deltas.
	emitDeltaTypeReplaced bool
	// clock times process calls for the slow-processing log.
	clock clock.PassiveClock

	// mu guards the fields below it and initialSync's.
	mu sync.Mutex
	initialSync
	// items holds the pending Deltas of every queued key; none is empty.
	items map[string]Deltas
	// itemsPeak is the largest len(items) since items was last reallocated.
	itemsPeak int
	// queue holds each key of items once, in the order it was first queued.
	queue  ring.Ring[string]
	waker  popWaker
	closed bool
}

var (
	_ Queue             = &DeltaFIFO{}
	_ TransformingStore = &DeltaFIFO{}
	_ DoneChecker       = &DeltaFIFO{}
	// A Reflector hands DeltaFIFO an already transformed watch-list without a second
	// transform.
	_ transformedReplacer = &DeltaFIFO{}
)

// deltaFIFOItemsShrinkAt is the peak number of keys above which an emptied DeltaFIFO drops its
// map, so that the memory of a large relist is returned once the queue drains.
const deltaFIFOItemsShrinkAt = 1024

// NewDeltaFIFO returns a DeltaFIFO with the given key function and known objects.
//
// Deprecated: it makes Replace queue Sync deltas, which a consumer cannot tell from a periodic
// resync. Use NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: keyFunc, KnownObjects:
// knownObjects, EmitDeltaTypeReplaced: true}).
func NewDeltaFIFO(keyFunc KeyFunc, knownObjects KeyListerGetter) *DeltaFIFO {
	return NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KeyFunction:  keyFunc,
		KnownObjects: knownObjects,
	})
}

// NewDeltaFIFOWithOptions returns an empty DeltaFIFO configured by opts.
func NewDeltaFIFOWithOptions(opts DeltaFIFOOptions) *DeltaFIFO {
	f := &DeltaFIFO{
		logger:                klog.Background(),
		initialSync:           newInitialSync("DeltaFIFO"),
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		transformer:           opts.Transformer,
		emitDeltaTypeReplaced: opts.EmitDeltaTypeReplaced,
		clock:                 clock.RealClock{},
		items:                 map[string]Deltas{},
		queue:                 *ring.New[string](queueRingMin),
	}
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKeyFunc
	}
	if opts.Logger != nil {
		f.logger = *opts.Logger
	}
	if opts.Name != "" {
		f.name = opts.Name
	}
	f.logger = klog.LoggerWithName(f.logger, f.name)
	return f
}

// KeyOf returns the key of obj: for Deltas the key of the newest delta's object, for a
// DeletedFinalStateUnknown its Key, otherwise what the key function says. An empty Deltas
// yields a KeyError wrapping ErrZeroLengthDeltasObject.
func (f *DeltaFIFO) KeyOf(obj interface{}) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{obj, ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// Transformer returns the queue's TransformFunc, or nil. It makes DeltaFIFO a
// TransformingStore, so a Reflector can transform the objects it buffers the same way.
func (f *DeltaFIFO) Transformer() TransformFunc {
	return f.transformer
}

// HasSynced reports whether the first Replace has been fully processed: every key it queued
// (including its tombstones) was popped and its process call returned. It is also true once
// an Add, Update or Delete came before any Replace.
//
// Unlike client-go, which reports synced just before the last initial item is processed,
// DeltaFIFO reports it just after, like RealFIFO: a caller that waits for HasSynced and then
// reads the consumer's store sees every initial object in it. It does not take the queue's
// lock, so it does not wait for a running process call.
func (f *DeltaFIFO) HasSynced() bool {
	return IsDone(f)
}

// Add queues an Added delta for obj. It fails with a KeyError if obj has no key, or with the
// transformer's error.
func (f *DeltaFIFO) Add(obj interface{}) error {
	return f.record(Added, obj)
}

// Update queues an Updated delta for obj. It fails like Add.
func (f *DeltaFIFO) Update(obj interface{}) error {
	return f.record(Updated, obj)
}

// record queues a watch event for obj. The key and the transform are computed before taking
// the lock, so user code does not hold up Pop.
func (f *DeltaFIFO) record(action DeltaType, obj interface{}) error {
	id, obj, err := f.prepare(action, obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populateLocked(0)
	if err != nil {
		return err
	}
	f.appendLocked(id, Delta{Type: action, Object: obj})
	return nil
}

// prepare computes obj's key and applies the transformer, except to tombstones and to Sync
// deltas (whose objects come from KnownObjects, already transformed).
func (f *DeltaFIFO) prepare(action DeltaType, obj interface{}) (string, interface{}, error) {
	id, err := f.KeyOf(obj)
	if err != nil {
		return "", nil, KeyError{obj, err}
	}
	if f.transformer == nil || action == Sync {
		return id, obj, nil
	}
	if _, isTombstone := obj.(DeletedFinalStateUnknown); isTombstone {
		return id, obj, nil
	}
	obj, err = f.transformer(obj)
	if err != nil {
		return "", nil, err
	}
	return id, obj, nil
}

// Delete queues a Deleted delta for obj, unless obj is unknown: neither queued nor in
// KnownObjects (then it was most likely reported deleted by a Replace already, and Delete
// does nothing). An error from KnownObjects' lookup counts as known. It fails like Add. The
// transformer runs before the check, so it also sees deletions that are then ignored.
func (f *DeltaFIFO) Delete(obj interface{}) error {
	id, obj, err := f.prepare(Deleted, obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populateLocked(0)
	if err != nil {
		return err
	}
	if _, queued := f.items[id]; !queued {
		if f.knownObjects == nil {
			return nil
		}
		if _, known, err := f.knownObjects.GetByKey(id); err == nil && !known {
			return nil
		}
	}
	f.appendLocked(id, Delta{Type: Deleted, Object: obj})
	return nil
}

// appendLocked appends d to the Deltas of id, queueing id if it is new, and collapses two
// trailing deletions into one.
func (f *DeltaFIFO) appendLocked(id string, d Delta) {
	deltas, queued := f.items[id]
	if n := len(deltas); n > 0 && d.Type == Deleted && deltas[n-1].Type == Deleted {
		// Keep the deletion that knows more: a tombstone yields to a real deletion.
		if _, tombstone := deltas[n-1].Object.(DeletedFinalStateUnknown); tombstone {
			deltas[n-1] = d
		}
		return
	}
	f.items[id] = append(deltas, d)
	if !queued {
		f.queue.Push(id)
		f.itemsPeak = max(f.itemsPeak, len(f.items))
		f.waker.wakeLocked()
	}
}

// Close marks the queue closed and wakes every Pop. Pop keeps handing out what is queued and
// returns ErrFIFOClosed once the queue is empty. Writes are still accepted after Close.
func (f *DeltaFIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.waker.wakeLocked()
}

// IsClosed reports whether Close was called.
func (f *DeltaFIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Pop blocks until a key is queued or the queue is closed and empty (then it returns
// ErrFIFOClosed). It removes the oldest key and calls process with its Deltas and whether they
// belong to the first Replace's population; it returns the Deltas and process's error. The
// Deltas are the caller's: the queue keeps no reference.
//
// process runs with the queue locked: producers wait until it returns, so it should be quick.
// It must not call the queue's methods. A Pop whose processing takes over 100ms while more
// than 10 keys wait is logged as "DeltaFIFO Pop Process".
func (f *DeltaFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		for f.queue.Len() == 0 {
			if f.closed {
				f.waker.wakeLocked() // let any other waiting Pop return too
				return nil, ErrFIFOClosed
			}
			f.waker.waitLocked(&f.mu)
		}
		isInInitialList := !f.syncedClosed
		id, _ := f.queue.Pop()
		depth := f.queue.Len()
		if depth > 0 {
			f.waker.wakeLocked()
		}
		item, ok := f.items[id]
		delete(f.items, id)
		if len(f.items) == 0 && f.itemsPeak > deltaFIFOItemsShrinkAt {
			f.items = map[string]Deltas{}
			f.itemsPeak = 0
		}
		if !ok {
			// Impossible while queue and items are kept in step; skip the key rather than
			// hand out nothing.
			utilruntime.HandleErrorWithLogger(f.logger, nil, "Key was queued without deltas; skipping it", "id", id)
			f.countInitialProcessedLocked(1)
			continue
		}
		if f.initialPopulationCount > 0 {
			// Count the item only once process has returned (or panicked), so that Done and
			// HasSynced never run ahead of the consumer.
			defer f.countInitialProcessedLocked(1)
		}
		var obj interface{} = item // boxed once, for process and the result
		if depth <= fifoTraceMinDepth {
			return obj, process(obj, isInInitialList)
		}
		start := f.clock.Now()
		err := process(obj, isInInitialList)
		if elapsed := f.clock.Since(start); elapsed >= fifoSlowProcessThreshold {
			// Only a slow call builds the log's arguments.
			logSlowProcessing(f.logger, "DeltaFIFO Pop Process", elapsed, fifoSlowProcessThreshold,
				"ID", id, "Depth", depth)
		}
		return obj, err
	}
}

// Replace records a full list: a Replaced delta (Sync unless EmitDeltaTypeReplaced) for every
// object of list, in order, then a Deleted delta with a DeletedFinalStateUnknown for every key
// that is not in list but is queued (Obj is its newest queued object) or in KnownObjects and
// not queued (Obj is the known object, or nil if the lookup fails). The resource version is
// ignored.
//
// The first Replace sets the initial population that HasSynced waits for: the keys of list
// plus the tombstones it queued. Keys and transforms are computed before anything is queued,
// so a KeyError or transformer error leaves the queue untouched (client-go may queue part of
// the list first). Replace takes ownership of list: with a transformer, it stores the
// transformed objects in it. A Reflector hands over the objects of a streaming watch-list,
// which it transformed while buffering them, without a second transform (client-go transforms
// them twice).
func (f *DeltaFIFO) Replace(list []interface{}, _ string) error {
	return f.replace(list, true, nil)
}

// replaceTransformed is Replace for objects the transformer already ran on: a Reflector's
// streaming watch-list transforms what it buffers (see transformedReplacer), and client-go
// transforms those objects a second time.
func (f *DeltaFIFO) replaceTransformed(list []interface{}, _ string) error {
	return f.replace(list, false, nil)
}

// replace implements Replace; transform says whether the transformer still has to run, except
// on the items cached marks (nil, or one flag per item; see relistDeduper).
func (f *DeltaFIFO) replace(list []interface{}, transform bool, cached []bool) error {
	action := Sync
	if f.emitDeltaTypeReplaced {
		action = Replaced
	}
	ids := make([]string, len(list))
	keys := make(sets.Set[string], len(list))
	for i, item := range list {
		// Replace transforms even when it emits Sync: these objects are new. Preparing them
		// as a Sync skips the transformer.
		prepareAs := Replaced
		if !needsTransform(transform, cached, i) {
			prepareAs = Sync
		}
		id, obj, err := f.prepare(prepareAs, item)
		if err != nil {
			if _, isKeyErr := err.(KeyError); isKeyErr {
				return err
			}
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
		ids[i], list[i] = id, obj
		keys.Insert(id)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	for i, obj := range list {
		f.appendLocked(ids[i], Delta{Type: action, Object: obj})
	}

	// Queued keys missing from the list were deleted while the watch was down. Walk the queue
	// rather than the map so that the tombstones come in a stable order.
	var missing []string
	for k := range f.queue.All() {
		if !keys.Has(k) {
			missing = append(missing, k)
		}
	}
	queuedDeletions := 0
	for _, k := range missing {
		var last interface{}
		if newest := f.items[k].Newest(); newest != nil {
			last = newest.Object
			if tombstone, ok := last.(DeletedFinalStateUnknown); ok {
				last = tombstone.Obj
			}
		}
		queuedDeletions++
		f.appendLocked(k, Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: k, Obj: last}})
	}

	// So were known keys that are missing from the list and not queued.
	if f.knownObjects != nil {
		for _, k := range f.knownObjects.ListKeys() {
			if keys.Has(k) || len(f.items[k]) > 0 {
				continue
			}
			known, exists, err := f.knownObjects.GetByKey(k)
			switch {
			case err != nil:
				known = nil
				utilruntime.HandleErrorWithLogger(f.logger, err, "Unexpected error during lookup, placing DeleteFinalStateUnknown marker without object", "key", k)
			case !exists:
				known = nil
				f.logger.Info("Key does not exist in known objects store, placing DeleteFinalStateUnknown marker without object", "key", k)
			}
			queuedDeletions++
			f.appendLocked(k, Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: k, Obj: known}})
		}
	}

	f.populateLocked(keys.Len() + queuedDeletions)
	return nil
}

// Resync queues a Sync delta for every object of KnownObjects whose key has no pending deltas
// (a queued change is newer than the known object, so re-delivering the known object would
// step back in time). Without KnownObjects it does nothing. Objects that vanish from
// KnownObjects during the walk, or whose lookup fails, are logged and skipped.
func (f *DeltaFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.knownObjects == nil {
		return nil
	}
	for _, k := range f.knownObjects.ListKeys() {
		if err := f.syncKeyLocked(k); err != nil {
			return err
		}
	}
	return nil
}

func (f *DeltaFIFO) syncKeyLocked(key string) error {
	obj, exists, err := f.knownObjects.GetByKey(key)
	if err != nil {
		utilruntime.HandleErrorWithLogger(f.logger, err, "Unexpected error during lookup, unable to queue object for sync", "key", key)
		return nil
	}
	if !exists {
		f.logger.Info("Key does not exist in known objects store, unable to queue object for sync", "key", key)
		return nil
	}
	id, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	if len(f.items[id]) > 0 {
		return nil
	}
	f.appendLocked(id, Delta{Type: Sync, Object: obj})
	return nil
}
