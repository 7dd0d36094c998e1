package cache

// storeState is the content of a threadSafeMap. Slot i holds keys[i] and objs[i], and slots
// maps each key to its slot (a compact hash table, see keyTable). The object's cached index values are valsAt(i): one list per index,
// stored flat in vals with a fixed stride (the number of indices), so they cost no allocation
// of their own and an update overwrites them in place. indices[j] is the index at position j of
// the store's indexerSet; it maps values to slots, so remove, which moves the last slot into the
// freed one, moves that object's index entries too. A nil object has no values (all its lists
// are nil).
type storeState struct {
	slots   keyTable
	keys    []string
	objs    []interface{}
	vals    [][]string
	indices []index
}

func newStoreState(capacity, numIndices int) storeState {
	s := storeState{
		slots:   newKeyTable(capacity),
		keys:    make([]string, 0, capacity),
		objs:    make([]interface{}, 0, capacity),
		vals:    make([][]string, 0, capacity*numIndices),
		indices: make([]index, numIndices),
	}
	for i := range s.indices {
		s.indices[i] = index{}
	}
	return s
}

// valsAt returns the cached index values of slot, aliasing vals.
func (s *storeState) valsAt(slot int) [][]string {
	k := len(s.indices)
	return s.vals[slot*k : (slot+1)*k : (slot+1)*k]
}

// put stores obj with its index values under key, moving the key's index entries. vals has
// one list per index, or is nil for an object indexed under nothing; its elements may be
// replaced by shared lists (see intern), and it is copied, never kept.
func (s *storeState) put(key string, obj interface{}, vals [][]string) {
	s.intern(vals)
	if slot, ok := s.slots.get(s.keys, key); ok {
		old := s.valsAt(slot)
		moveIndexEntries(s.indices, slot, old, vals)
		s.objs[slot] = obj
		if vals == nil {
			clear(old)
		} else {
			copy(old, vals)
		}
		return
	}
	if len(s.keys) == cap(s.keys) {
		s.grow()
	}
	slot := len(s.keys)
	s.slots.insert(key, slot)
	s.keys = append(s.keys, key)
	s.objs = append(s.objs, obj)
	if vals == nil {
		s.vals = append(s.vals, make([][]string, len(s.indices))...)
	} else {
		s.vals = append(s.vals, vals...)
	}
	moveIndexEntries(s.indices, slot, nil, vals)
}

// intern replaces every single-value list of vals whose value some stored object already has
// by that object's cached list, so that objects sharing a value (a namespace, a node) share
// one list instead of keeping a 16-byte array each — the common case, as most index functions
// return one value. Cached lists are never written to, so sharing them is safe.
func (s *storeState) intern(vals [][]string) {
	k := len(s.indices)
	for i, vs := range vals {
		if len(vs) != 1 {
			continue
		}
		for slot := range s.indices[i][vs[0]] {
			if shared := s.vals[int(slot)*k+i]; len(shared) == 1 && shared[0] == vs[0] {
				vals[i] = shared
			}
			break
		}
	}
}

// grow doubles the capacity of the slot slices. append alone grows large slices by only 1.25x,
// which, summed over a store filled one object at a time, allocates about five times the final
// size instead of two.
func (s *storeState) grow() {
	n := max(2*cap(s.keys), 16)
	s.keys = append(make([]string, 0, n), s.keys...)
	s.objs = append(make([]interface{}, 0, n), s.objs...)
	s.vals = append(make([][]string, 0, n*len(s.indices)), s.vals...)
}

// remove deletes key and its index entries; the last slot moves into the freed one.
func (s *storeState) remove(key string) {
	pos := s.slots.find(s.keys, key)
	if pos < 0 {
		return
	}
	slot := s.slots.slotAt(pos)
	moveIndexEntries(s.indices, slot, s.valsAt(slot), nil)
	s.slots.removeAt(pos)
	last := len(s.keys) - 1
	if slot != last {
		moveSlot(s.indices, last, slot, s.valsAt(last))
		s.slots.setSlotAt(s.slots.find(s.keys, s.keys[last]), slot)
		s.keys[slot], s.objs[slot] = s.keys[last], s.objs[last]
		copy(s.valsAt(slot), s.valsAt(last))
	}
	// Clear the vacated slot so the backing arrays do not keep the object alive.
	s.keys[last], s.objs[last] = "", nil
	clear(s.valsAt(last))
	k := len(s.indices)
	s.keys, s.objs, s.vals = s.keys[:last], s.objs[:last], s.vals[:last*k]
	if c := cap(s.keys); c > 1024 && last < c/4 {
		s.keys = append(make([]string, 0, 2*last), s.keys...)
		s.objs = append(make([]interface{}, 0, 2*last), s.objs...)
		s.vals = append(make([][]string, 0, 2*last*k), s.vals...)
	}
}

// buildStoreState builds the content for keys and objs (a repeated key keeps its last object)
// with set's indices. It takes ownership of keys, which becomes the new content's key slice
// (compacted in place when keys repeat); objs is only read. It runs index functions and takes
// no lock. The slots of objects whose index values could not be computed are returned in
// increasing order, with one error each; such slots hold the new object but no index values
// and no index entries.
func buildStoreState(set *indexerSet, keys []string, objs []interface{}) (s storeState, failed []int, errs []error) {
	k := len(set.funcs)
	s = storeState{
		slots:   newKeyTable(len(keys)),
		objs:    make([]interface{}, 0, len(keys)),
		vals:    make([][]string, len(keys)*k),
		indices: make([]index, k),
	}
	for i := range s.indices {
		s.indices[i] = index{}
	}
	n := 0
	for i, key := range keys {
		if slot, ok := s.slots.get(keys, key); ok {
			s.objs[slot] = objs[i]
			continue
		}
		// keys[:n] holds the keys placed so far; key moves down to slot n before the table
		// can read it there.
		keys[n] = key
		s.slots.insert(key, n)
		s.objs = append(s.objs, objs[i])
		n++
	}
	clear(keys[n:])
	s.keys = keys[:n]
	s.vals = s.vals[:n*k]
	if len(set.funcs) == 0 {
		return s, nil, nil
	}
	for slot, key := range s.keys {
		if s.objs[slot] == nil {
			continue
		}
		vals := s.valsAt(slot)
		if err := set.valuesInto(key, s.objs[slot], 0, vals); err != nil {
			clear(vals)
			failed = append(failed, slot)
			errs = append(errs, err)
			continue
		}
		s.intern(vals)
		for i, vs := range vals {
			for _, v := range vs {
				s.indices[i].insert(v, slot)
			}
		}
	}
	return s, failed, errs
}
