package cache

// storeState is the content of a threadSafeMap. Slot i holds keys[i] and objs[i], and slots
// maps each key to its slot. The object's cached index values are cellsAt(i): one cell per
// index, stored flat in cells with a fixed stride (the number of indices). A cell is nil for no value, points into the index's posting for exactly
// one value (so the objects that share a value — a namespace, a node — share its list and pay
// 8 bytes each), and points to a list of its own for several values. indices[j] is the index at
// position j of the store's indexerSet; it maps values to slots, so remove, which moves the last
// slot into the freed one, moves that object's index entries too. A nil object has no values.
type storeState struct {
	slots   map[string]int
	keys    []string
	objs    []interface{}
	cells   []*[]string
	indices []index
}

func newStoreState(capacity, numIndices int) storeState {
	s := storeState{
		slots:   make(map[string]int, capacity),
		keys:    make([]string, 0, capacity),
		objs:    make([]interface{}, 0, capacity),
		cells:   make([]*[]string, 0, capacity*numIndices),
		indices: make([]index, numIndices),
	}
	for i := range s.indices {
		s.indices[i] = index{}
	}
	return s
}

// cellsAt returns the cached index values of slot, aliasing cells.
func (s *storeState) cellsAt(slot int) []*[]string {
	k := len(s.indices)
	return s.cells[slot*k : (slot+1)*k : (slot+1)*k]
}

// valuesAt returns a fresh list of slot's cached values, one per index.
func (s *storeState) valuesAt(slot int) [][]string {
	cells := s.cellsAt(slot)
	vals := make([][]string, len(cells))
	for i, c := range cells {
		vals[i] = cellValues(c)
	}
	return vals
}

// cellValues returns the values a cell holds.
func cellValues(c *[]string) []string {
	if c == nil {
		return nil
	}
	return *c
}

// put stores obj with its index values under key, moving the key's index entries. vals has
// one list per index, or is nil for an object indexed under nothing. A single-value list may
// become an index's posting list; no list is ever written to. It returns the object key held
// before, if any.
func (s *storeState) put(key string, obj interface{}, vals [][]string) (old interface{}, existed bool) {
	if slot, ok := s.slots[key]; ok {
		old = s.objs[slot]
		cells := s.cellsAt(slot)
		for i, idx := range s.indices {
			n := indexValuesAt(vals, i)
			if sameValues(cellValues(cells[i]), n) {
				continue
			}
			for _, v := range cellValues(cells[i]) {
				idx.remove(v, slot)
			}
			cells[i] = idx.insertAll(n, slot)
		}
		s.objs[slot] = obj
		return old, true
	}
	if len(s.keys) == cap(s.keys) {
		s.grow()
	}
	slot := len(s.keys)
	s.slots[key] = slot
	s.keys = append(s.keys, key)
	s.objs = append(s.objs, obj)
	s.cells = append(s.cells, make([]*[]string, len(s.indices))...)
	s.indexSlot(slot, vals)
	return nil, false
}

// indexSlot records vals, one list per index (or nil), as the values of slot, which has none.
func (s *storeState) indexSlot(slot int, vals [][]string) {
	cells := s.cellsAt(slot)
	for i, idx := range s.indices {
		cells[i] = idx.insertAll(indexValuesAt(vals, i), slot)
	}
}

// storeGrowQuarterAbove is the capacity from which the slot slices grow by a quarter instead of
// doubling.
const storeGrowQuarterAbove = 1 << 16

// grow enlarges the slot slices. Up to storeGrowQuarterAbove slots it doubles them: append
// alone grows by 1.25x from 256 elements on, which, summed over a store filled one object at a
// time, allocates about five times the final size instead of two. Above, it grows them by a
// quarter: a large store is filled by Replace (exactly sized) and then changes by a few objects
// at a time, so the first Add after a 100k-object sync would otherwise keep 100k empty slots
// (40 bytes each with one index) for good.
func (s *storeState) grow() {
	n := max(2*cap(s.keys), 16)
	if c := cap(s.keys); c >= storeGrowQuarterAbove {
		n = c + c/4
	}
	s.keys = append(make([]string, 0, n), s.keys...)
	s.objs = append(make([]interface{}, 0, n), s.objs...)
	s.cells = append(make([]*[]string, 0, n*len(s.indices)), s.cells...)
}

// remove deletes key and its index entries; the last slot moves into the freed one.
func (s *storeState) remove(key string) {
	slot, ok := s.slots[key]
	if !ok {
		return
	}
	for i, c := range s.cellsAt(slot) {
		for _, v := range cellValues(c) {
			s.indices[i].remove(v, slot)
		}
	}
	delete(s.slots, key)
	last := len(s.keys) - 1
	if slot != last {
		moveSlot(s.indices, last, slot, s.cellsAt(last))
		s.slots[s.keys[last]] = slot
		s.keys[slot], s.objs[slot] = s.keys[last], s.objs[last]
		copy(s.cellsAt(slot), s.cellsAt(last))
	}
	// Clear the vacated slot so the backing arrays do not keep the object alive.
	s.keys[last], s.objs[last] = "", nil
	clear(s.cellsAt(last))
	k := len(s.indices)
	s.keys, s.objs, s.cells = s.keys[:last], s.objs[:last], s.cells[:last*k]
	if c := cap(s.keys); c > 1024 && last < c/4 {
		s.keys = append(make([]string, 0, 2*last), s.keys...)
		s.objs = append(make([]interface{}, 0, 2*last), s.objs...)
		s.cells = append(make([]*[]string, 0, 2*last*k), s.cells...)
		// A Go map keeps its size after deletes: rebuild it with the slices.
		slots := make(map[string]int, 2*last)
		for i, key := range s.keys {
			slots[key] = i
		}
		s.slots = slots
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
		slots:   make(map[string]int, len(keys)),
		objs:    make([]interface{}, 0, len(keys)),
		cells:   make([]*[]string, len(keys)*k),
		indices: make([]index, k),
	}
	for i := range s.indices {
		s.indices[i] = index{}
	}
	n := 0
	for i, key := range keys {
		if slot, ok := s.slots[key]; ok {
			s.objs[slot] = objs[i]
			continue
		}
		// keys[:n] holds the keys placed so far; key moves down to slot n before the table
		// can read it there.
		keys[n] = key
		s.slots[key] = n
		s.objs = append(s.objs, objs[i])
		n++
	}
	clear(keys[n:])
	s.keys = keys[:n]
	s.cells = s.cells[:n*k]
	if len(set.funcs) == 0 {
		return s, nil, nil
	}
	vals := make([][]string, k)
	for slot, key := range s.keys {
		if s.objs[slot] == nil {
			continue
		}
		if err := set.valuesInto(key, s.objs[slot], 0, vals); err != nil {
			failed = append(failed, slot)
			errs = append(errs, err)
			continue
		}
		s.indexSlot(slot, vals)
	}
	return s, failed, errs
}
