package cache

import "k8s.io/klog/v2"

// processReplacedAllInfo applies a relist to clientState and tells handler what it changed:
// it works out which stored objects are missing from the list (with their stored state) and
// which listed objects were already stored, replaces the store's content (and resource
// version) in one step, and only then calls OnDelete with a DeletedFinalStateUnknown for every
// missing object, followed by OnUpdate(old, new) or OnAdd(new, isInInitialList) for every
// listed object, in list order. Handlers thus never see an event the store does not reflect
// yet.
//
// When clientState is this package's Store or Indexer, the relist is applied as the
// difference it makes (see cache.applyRelist): the store's write lock is held only for the
// objects that changed, and a listed object that is the very object already stored (an
// informer's Reflector puts the cached object in the list when the resourceVersion is
// unchanged, see relistDeduper) is not written at all. Its notification is then OnUpdate(obj,
// obj): old and new are the same object — the state the handler saw before, at the same
// resourceVersion, just as client-go's old and new copies would be equal.
func processReplacedAllInfo(logger klog.Logger, handler ResourceEventHandler, info ReplacedAllInfo, clientState Store, isInInitialList bool, keyFunc KeyFunc) error {
	if c, ok := clientState.(*cache); ok {
		diff, applied, err := c.applyRelist(info.Objects, info.ResourceVersion)
		if err != nil {
			return err
		}
		if applied {
			notifyRelist(handler, info.Objects, diff, isInInitialList)
			return nil
		}
	}
	resolveAllListed(info.Objects) // the store takes objects here
	keys, newKeys, err := replacementKeys(info.Objects, keyFunc)
	if err != nil {
		return err
	}
	var deletions []DeletedFinalStateUnknown
	reconcileReplacement(logger, nil, clientState, newKeys, func(tombstone DeletedFinalStateUnknown) {
		deletions = append(deletions, tombstone)
	})
	// olds[i] is the stored state of info.Objects[i], or nil if it is new. Looking it up by
	// the key computed above saves computing every key a second time (client-go calls Get).
	// olds stays nil while no key is stored, as on an initial sync, which then holds no
	// second slice as long as the list until every handler has been notified.
	var olds []interface{}
	for i, key := range keys {
		if old, exists, err := clientState.GetByKey(key); err == nil && exists {
			if olds == nil {
				olds = make([]interface{}, len(info.Objects))
			}
			olds[i] = old
		}
	}
	if err := clientState.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, tombstone := range deletions {
		handler.OnDelete(tombstone)
	}
	for i, obj := range info.Objects {
		if olds != nil && olds[i] != nil {
			handler.OnUpdate(olds[i], obj)
		} else {
			handler.OnAdd(obj, isInInitialList)
		}
	}
	return nil
}

// notifyRelist tells handler about a relist of objs that clientState applied as diff: the
// deletions first, then every listed object in list order. A shared informer takes the adds
// of a relist into an empty store as one run (sharedIndexInformer.onAddRun), so that each of
// its handlers queues them as one element that points into the list.
func notifyRelist(handler ResourceEventHandler, objs []interface{}, diff *relistDiff, isInInitialList bool) {
	if diff.allNew {
		if inf, ok := handler.(*sharedIndexInformer); ok {
			inf.onAddRun(objs, isInInitialList)
			return
		}
		for _, obj := range objs {
			handler.OnAdd(resolveListed(obj), isInInitialList)
		}
		return
	}
	for _, tombstone := range diff.deletions {
		handler.OnDelete(tombstone)
	}
	changes := diff.changes
	for i, obj := range objs {
		if len(changes) == 0 || changes[0].pos != i {
			handler.OnUpdate(obj, obj) // unchanged: the stored object itself
			continue
		}
		ch := changes[0]
		changes = changes[1:]
		if ch.existed {
			handler.OnUpdate(ch.old, obj)
		} else {
			handler.OnAdd(obj, isInInitialList)
		}
	}
}
