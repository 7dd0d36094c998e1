package cache

import (
	"fmt"
	"iter"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// Replace records a full list read at resourceVersion.
//
// In atomic mode it queues one ReplacedAll delta whose ReplacedAllInfo holds resourceVersion
// and the (transformed) objects; the consumer works out deletions against its own store.
//
// Otherwise it reconciles: first a Deleted delta with a DeletedFinalStateUnknown for every key
// that is not in newItems and is either queued with a last delta other than Deleted (Obj is
// that delta's object) or known to KnownObjects and not queued (Obj is the known object, or nil
// if the lookup fails); then a Replaced delta for every object of newItems, in order.
//
// The first Replace sets the initial population that HasSynced waits for: every delta queued
// by then. Keys and transforms are computed before anything is queued, so a KeyError or a
// transformer error leaves the queue untouched. Replace takes ownership of newItems.
//
// A Reflector hands over the objects of a streaming watch-list, which it transformed while
// buffering them, without a second transform (client-go transforms them twice), so the
// transformer need not be idempotent for that path.
func (f *RealFIFO) Replace(newItems []interface{}, resourceVersion string) error {
	return f.replace(newItems, resourceVersion, true, nil)
}

// replaceTransformed is Replace for objects the transformer already ran on: a Reflector's
// streaming watch-list transforms what it buffers (see transformedReplacer), and client-go
// transforms those objects a second time.
func (f *RealFIFO) replaceTransformed(newItems []interface{}, resourceVersion string) error {
	return f.replace(newItems, resourceVersion, false, nil)
}

// replace implements Replace; transform says whether the transformer still has to run, except
// on the items cached marks (nil, or one flag per item; see relistDeduper).
func (f *RealFIFO) replace(newItems []interface{}, resourceVersion string, transform bool, cached []bool) error {
	var keys []string
	var newKeys sets.Set[string]
	if !f.emitAtomicEvents {
		var err error
		if keys, newKeys, err = replacementKeys(newItems, f.keyOf); err != nil {
			return err
		}
	}
	if transform && f.transformer != nil {
		for i, obj := range newItems {
			if !needsTransform(transform, cached, i) {
				continue
			}
			if _, isTombstone := obj.(DeletedFinalStateUnknown); isTombstone {
				continue
			}
			transformed, err := f.transformer(obj)
			if err != nil {
				return fmt.Errorf("couldn't enqueue object: %w", err)
			}
			newItems[i] = transformed
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.emitAtomicEvents {
		f.pushLocked(Delta{Type: ReplacedAll, Object: ReplacedAllInfo{ResourceVersion: resourceVersion, Objects: newItems}}, "")
	} else {
		reconcileReplacement(f.logger, f.queuedLocked(), f.knownObjects, newKeys,
			func(tombstone DeletedFinalStateUnknown) {
				f.pushLocked(Delta{Type: Deleted, Object: tombstone}, tombstone.Key)
			})
		for i, obj := range newItems {
			f.pushLocked(Delta{Type: Replaced, Object: obj}, keys[i])
		}
	}

	f.populateLocked(f.items.Len())
	return nil
}

// queuedLocked iterates over the queued deltas and their keys, oldest first. The queue must
// not change during the iteration.
func (f *RealFIFO) queuedLocked() iter.Seq2[string, Delta] {
	return func(yield func(string, Delta) bool) {
		for d := range f.items.All() {
			if !yield(d.key, d.Delta) {
				return
			}
		}
	}
}

// replacementKeys returns the key of every object of a new list, in order, and their set, or
// a KeyError for the first object without one.
func replacementKeys(items []interface{}, keyOf KeyFunc) ([]string, sets.Set[string], error) {
	keys := make([]string, len(items))
	set := make(sets.Set[string], len(items))
	for i, obj := range items {
		key, err := keyOf(obj)
		if err != nil {
			return nil, nil, KeyError{obj, err}
		}
		keys[i] = key
		set.Insert(key)
	}
	return keys, set, nil
}

// reconcileReplacement works out which objects a full list with keys newKeys deleted, and
// calls onDelete with a tombstone for each, in this order:
//
//  1. keys of queued (key and delta, oldest first) whose last queued delta is not Deleted (a
//     queued deletion already says so); Obj is the last queued object;
//  2. keys of known (in ListKeys order) that were not queued at all; Obj is the known object,
//     or nil if the lookup fails or finds nothing (which is logged).
//
// queued and known may be nil.
func reconcileReplacement(
	logger klog.Logger,
	queued iter.Seq2[string, Delta],
	known KeyListerGetter,
	newKeys sets.Set[string],
	onDelete func(DeletedFinalStateUnknown),
) {
	var queuedKeys []string
	lastQueued := map[string]Delta{}
	if queued != nil {
		for key, d := range queued {
			if _, seen := lastQueued[key]; !seen {
				queuedKeys = append(queuedKeys, key)
			}
			lastQueued[key] = d
		}
	}
	for _, key := range queuedKeys {
		if newKeys.Has(key) {
			continue
		}
		last := lastQueued[key]
		if last.Type == Deleted {
			continue
		}
		onDelete(DeletedFinalStateUnknown{Key: key, Obj: last.Object})
	}

	if known == nil {
		return
	}
	for _, key := range known.ListKeys() {
		if newKeys.Has(key) {
			continue
		}
		if _, wasQueued := lastQueued[key]; wasQueued {
			continue
		}
		obj, exists, err := known.GetByKey(key)
		switch {
		case err != nil:
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, err, "Error during lookup, placing DeleteFinalStateUnknown marker without object", "key", key)
		case !exists:
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, nil, "Key does not exist in known objects store, placing DeleteFinalStateUnknown marker without object", "key", key)
		}
		onDelete(DeletedFinalStateUnknown{Key: key, Obj: obj})
	}
}

// Resync asks the consumer to re-deliver what it knows. In atomic mode it queues one SyncAll
// delta. Otherwise it queues a Sync delta (not transformed) for every object of KnownObjects
// whose key has no queued delta, since a queued change is newer than the known object.
// Objects that vanish from KnownObjects during the walk, or whose lookup fails, are logged and
// skipped.
func (f *RealFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.emitAtomicEvents {
		f.pushLocked(Delta{Type: SyncAll, Object: SyncAllInfo{}}, "")
		return nil
	}
	if f.knownObjects == nil {
		return nil
	}
	queuedKeys := make(sets.Set[string], f.items.Len())
	for key := range f.queuedLocked() {
		queuedKeys.Insert(key)
	}
	for _, key := range f.knownObjects.ListKeys() {
		if queuedKeys.Has(key) {
			continue
		}
		obj, exists, err := f.knownObjects.GetByKey(key)
		switch {
		case err != nil:
			utilruntime.HandleErrorWithLogger(f.logger, err, "Unable to queue object for sync", "key", key)
			continue
		case !exists:
			utilruntime.HandleErrorWithLogger(f.logger, nil, "Key does not exist in known objects store, unable to queue object for sync", "key", key)
			continue
		}
		id, err := f.keyOf(obj)
		if err != nil {
			return fmt.Errorf("couldn't queue object: %w", KeyError{obj, err})
		}
		f.pushLocked(Delta{Type: Sync, Object: obj}, id)
	}
	return nil
}
