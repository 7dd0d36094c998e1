package cache

import (
	"errors"
	"fmt"
)

// relistDiff is what a relist changed in a store.
type relistDiff struct {
	// changes are the listed objects that were not stored as they are, in list order.
	changes []relistChange
	// deletions are the stored objects missing from the list, with their stored state.
	deletions []DeletedFinalStateUnknown
	// allNew says that the store was empty: every listed object is new, and changes and
	// deletions are empty.
	allNew bool
}

// relistChange is a listed object that is not stored as it is.
type relistChange struct {
	pos     int         // position in the list
	key     string      // its key
	old     interface{} // the stored object when existed
	existed bool
	vals    [][]string // its index values, computed before the write lock
	err     error      // its IndexFunc error: it keeps its previous state
}

// relistChunk is how many keys applyRelist computes (without the lock) before it looks them up
// (under one read lock).
const relistChunk = 256

// relistMaxChangedFraction: a relist that changes more than 1/relistMaxChangedFraction of the
// objects is applied by Replace, which builds the new content without the lock and holds it
// only to swap it in, instead of object by object under the lock.
const relistMaxChangedFraction = 4

// applyRelist makes objs the whole content of this package's Store or Indexer, read at
// resourceVersion, like Replace, and returns what changed, holding the write lock only for the
// objects that changed. ok is false when it did nothing and the caller must use Replace: the
// store has a transformer, too much changed for a difference to pay off, or the store was
// written to while the difference was worked out. err is Replace's error: a KeyError (nothing
// applied) or the joined IndexFunc errors (the rest applied).
//
// It works in three steps. First, without the write lock, it computes every listed object's
// key (in chunks, each looked up under a short read lock) and sorts the objects into unchanged
// (the very object the store holds, which a Reflector put there for an object whose
// resourceVersion the store already had, see relistDeduper), changed or new; the stored objects
// the list does not mention are the deletions. Second, still without the lock, it computes the
// index values of the changed and new objects. Third, under the write lock, it applies the
// deletions and changes and records resourceVersion: readers see the store before or after the
// relist, never in between, and the lock is held O(changes), not O(objects). Memory is one bit
// per stored object plus O(changes). An empty store is filled as Replace fills it (fillEmpty).
func (c *cache) applyRelist(objs []interface{}, resourceVersion string) (*relistDiff, bool, error) {
	if c.transformer != nil {
		return nil, false, nil
	}
	s := c.storage
	limit := len(objs) / relistMaxChangedFraction
	s.mu.RLock()
	gen, stored := s.gen, s.state.len()
	set := s.indexers.Load()
	s.mu.RUnlock()
	if s.compact != nil {
		// Replace would have every stored object decoded for its notifications; the
		// difference decodes only the changed ones, whatever their number.
		limit = len(objs) + stored
	}
	if stored == 0 && len(objs) > 0 {
		return c.fillEmpty(objs, resourceVersion, gen)
	}
	// A list encoded as it arrived was meant for an empty store (see encodeListed); this one
	// was written to since, which is rare: compare decoded objects.
	resolveAllListed(objs)

	diff := &relistDiff{}
	seen := make([]uint64, (stored+63)/64)
	var keys [relistChunk]string
	for start := 0; start < len(objs); start += relistChunk {
		chunk := objs[start:min(start+relistChunk, len(objs))]
		for i, obj := range chunk {
			key, err := c.keyFunc(obj)
			if err != nil {
				return nil, true, KeyError{obj, err}
			}
			keys[i] = key
		}
		s.mu.RLock()
		if s.gen != gen {
			s.mu.RUnlock()
			return nil, false, nil
		}
		for i, obj := range chunk {
			slot, exists := s.state.slots[keys[i]]
			if !exists {
				diff.changes = append(diff.changes, relistChange{pos: start + i, key: keys[i]})
				continue
			}
			seen[slot/64] |= 1 << (slot % 64)
			if old := s.state.obj(slot); !sameObject(old, obj) && !sameVersion(old, obj) {
				diff.changes = append(diff.changes, relistChange{pos: start + i, key: keys[i], old: old, existed: true})
			}
		}
		s.mu.RUnlock()
		if len(diff.changes) > limit {
			return nil, false, nil
		}
	}
	s.mu.RLock()
	if s.gen != gen {
		s.mu.RUnlock()
		return nil, false, nil
	}
	for slot := range s.state.len() {
		if seen[slot/64]&(1<<(slot%64)) == 0 {
			diff.deletions = append(diff.deletions, DeletedFinalStateUnknown{Key: s.state.key(slot), Obj: s.state.obj(slot)})
		}
	}
	s.mu.RUnlock()
	if len(diff.changes)+len(diff.deletions) > limit {
		return nil, false, nil
	}

	var entries []interface{} // in a compact store, the entries of the changes
	if s.compact != nil {
		entries = make([]interface{}, len(diff.changes))
		for i := range diff.changes {
			ch := &diff.changes[i]
			if ch.existed {
				ch.old = s.compact.decode(ch.old)
			}
			if entries[i], ch.err = s.compact.encode(objs[ch.pos]); ch.err != nil {
				ch.err = fmt.Errorf("cache: key %q: %w", ch.key, ch.err)
			}
		}
		for i := range diff.deletions {
			diff.deletions[i].Obj = s.compact.decode(diff.deletions[i].Obj)
		}
	}
	if len(set.funcs) > 0 {
		for i := range diff.changes {
			ch := &diff.changes[i]
			if obj := objs[ch.pos]; obj != nil && ch.err == nil {
				ch.vals, ch.err = set.values(ch.key, obj, 0)
			}
		}
	}
	c.afterRelistPlanned()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.indexers.Load() != set {
		return nil, false, nil // written meanwhile (not by the informer): let Replace do it
	}
	var errs []error
	for _, d := range diff.deletions {
		s.state.remove(d.Key)
	}
	for i, ch := range diff.changes {
		if ch.err != nil {
			errs = append(errs, ch.err)
			continue
		}
		obj := objs[ch.pos]
		if entries != nil {
			obj = entries[i]
		}
		s.state.put(ch.key, obj, ch.vals)
	}
	s.gen++
	s.setRVLocked(resourceVersion)
	return diff, true, errors.Join(errs...)
}

// fillEmpty is applyRelist for a store that was empty at generation gen, as before an
// informer's initial sync: every listed object is new, so it builds the content as Replace
// does, from one key per object. The caller then needs no list of keys, set of keys or stored
// states of its own, which at 100k objects would otherwise be ~9 MB live next to the new
// content while it is built.
func (c *cache) fillEmpty(objs []interface{}, resourceVersion string, gen uint64) (*relistDiff, bool, error) {
	keys := make([]string, len(objs))
	for i, obj := range objs {
		if e, ok := obj.(*encodedItem); ok {
			keys[i] = e.key
			continue
		}
		key, err := c.keyFunc(obj)
		if err != nil {
			return nil, true, KeyError{obj, err}
		}
		keys[i] = key
	}
	ok, err := c.storage.replaceAt(keys, objs, resourceVersion, gen)
	if !ok {
		return nil, false, nil // written meanwhile (not by the informer): let Replace do it
	}
	return &relistDiff{allNew: true}, true, err
}

// sameVersion reports whether stored, an entry of a compact store, holds obj's state: both
// have the same non-empty resource version. (A plain store compares identities instead, see
// sameObject, as its Reflector puts the stored object itself in the list.)
func sameVersion(stored, obj interface{}) bool {
	rv, ok := storedRV(stored)
	if !ok || rv == "" {
		return false
	}
	objRV, ok := rvFromObject(obj)
	return ok && objRV == rv
}

// afterRelistPlanned runs the storage's test hook, if any, between applyRelist's lock-free
// steps and its write lock.
func (c *cache) afterRelistPlanned() {
	c.storage.afterUnlockedWork()
}
