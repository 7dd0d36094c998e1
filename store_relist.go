package cache

import (
	"errors"
)

// relistApplier is implemented by this package's Store and Indexer: they apply a relist as the
// difference it makes, holding the write lock only for the objects that changed.
type relistApplier interface {
	// applyRelist makes objs the whole content, read at resourceVersion, like Replace, and
	// returns what changed. ok is false when it did nothing and the caller must use Replace:
	// the store has a transformer, too much changed for a difference to pay off, or the store
	// was written to while the difference was worked out. err is Replace's error: a KeyError
	// (nothing applied) or the joined IndexFunc errors (the rest applied).
	applyRelist(objs []interface{}, resourceVersion string) (diff *relistDiff, ok bool, err error)
}

var _ relistApplier = &cache{}

// relistDiff is what a relist changed in a store.
type relistDiff struct {
	// changes are the listed objects that were not stored as they are, in list order.
	changes []relistChange
	// deletions are the stored objects missing from the list, with their stored state.
	deletions []DeletedFinalStateUnknown
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

// applyRelist implements relistApplier.
//
// It works in three steps. First, without the write lock, it computes every listed object's
// key (in chunks, each looked up under a short read lock) and sorts the objects into unchanged
// (the very object the store holds, which a Reflector put there for an object whose
// resourceVersion the store already had, see relistDeduper), changed or new; the stored objects
// the list does not mention are the deletions. Second, still without the lock, it computes the
// index values of the changed and new objects. Third, under the write lock, it applies the
// deletions and changes and records resourceVersion: readers see the store before or after the
// relist, never in between, and the lock is held O(changes), not O(objects). Memory is one bit
// per stored object plus O(changes).
func (c *cache) applyRelist(objs []interface{}, resourceVersion string) (*relistDiff, bool, error) {
	if c.transformer != nil {
		return nil, false, nil
	}
	s := c.storage
	limit := len(objs) / relistMaxChangedFraction
	s.mu.RLock()
	gen, stored := s.gen, len(s.state.keys)
	set := s.indexers.Load()
	s.mu.RUnlock()
	if stored == 0 && len(objs) > 0 {
		return nil, false, nil // everything is new: Replace builds it faster
	}

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
			slot, exists := s.state.slots.get(s.state.keys, keys[i])
			if !exists {
				diff.changes = append(diff.changes, relistChange{pos: start + i, key: keys[i]})
				continue
			}
			seen[slot/64] |= 1 << (slot % 64)
			if old := s.state.objs[slot]; !sameObject(old, obj) {
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
	for slot, key := range s.state.keys {
		if seen[slot/64]&(1<<(slot%64)) == 0 {
			diff.deletions = append(diff.deletions, DeletedFinalStateUnknown{Key: key, Obj: s.state.objs[slot]})
		}
	}
	s.mu.RUnlock()
	if len(diff.changes)+len(diff.deletions) > limit {
		return nil, false, nil
	}

	if len(set.funcs) > 0 {
		for i := range diff.changes {
			ch := &diff.changes[i]
			if obj := objs[ch.pos]; obj != nil {
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
	for _, ch := range diff.changes {
		if ch.err != nil {
			errs = append(errs, ch.err)
			continue
		}
		s.state.put(ch.key, objs[ch.pos], ch.vals)
	}
	s.gen++
	s.setRVLocked(resourceVersion)
	return diff, true, errors.Join(errs...)
}

// afterRelistPlanned runs the storage's test hook, if any, between applyRelist's lock-free
// steps and its write lock.
func (c *cache) afterRelistPlanned() {
	c.storage.afterUnlockedWork()
}
