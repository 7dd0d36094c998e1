package cache

// storeState is the content of a threadSafeMap. Slot i holds key(i) and obj(i), and slots
// maps each key to its slot. The slots live in chunks of slotChunkSize (see slotChunk), so that
// a store filled one object at a time never copies what it holds to grow: slot i is at offset
// i%slotChunkSize of chunks[i/slotChunkSize]. The object's cached index values are cellsAt(i):
// one cell per index, stored flat in its chunk's cells with a fixed stride (the number of
// indices). A cell is nil for no value, points into the index's posting for exactly one value
// (so the objects that share a value — a namespace, a node — share its list and pay 8 bytes
// each), and points to a list of its own for several values. indices[j] is the index at
// position j of the store's indexerSet; it maps values to slots, so remove, which moves the last
// slot into the freed one, moves that object's index entries too. A nil object has no values.
type storeState struct {
	slots   map[string]int
	chunks  []slotChunk
	n       int // slots in use: every chunk before the last in use is full
	indices []index
	// mapPeak is the most keys slots has held since it was made: a Go map keeps its size after
	// deletes, so remove rebuilds it when the store has shrunk to a quarter of that.
	mapPeak int
}

// slotChunkBits sets slotChunkSize, the slots per chunk: 1024 keeps a chunk's arrays within
// the allocator's small size classes (16 KiB for keys and for objects) and its unused tail,
// the only room a store keeps, small next to the content.
const (
	slotChunkBits = 10
	slotChunkSize = 1 << slotChunkBits
	slotChunkMask = slotChunkSize - 1
)

// slotChunk holds up to slotChunkSize consecutive slots: len(keys) of them are in use, and
// objs and cells (len(keys) times the number of indices) line up with keys. Only the first
// chunk grows by reallocation, doubling from 16 slots as a small store fills; later chunks are
// made at full size.
type slotChunk struct {
	keys  []string
	objs  []interface{}
	cells []*[]string
}

func newStoreState(capacity, numIndices int) storeState {
	s := storeState{
		slots:   make(map[string]int, capacity),
		indices: make([]index, numIndices),
	}
	for i := range s.indices {
		s.indices[i] = index{}
	}
	return s
}

// len returns the number of slots in use.
func (s *storeState) len() int { return s.n }

// key returns the key in slot.
func (s *storeState) key(slot int) string {
	return s.chunks[slot>>slotChunkBits].keys[slot&slotChunkMask]
}

// obj returns the object in slot.
func (s *storeState) obj(slot int) interface{} {
	return s.chunks[slot>>slotChunkBits].objs[slot&slotChunkMask]
}

// setObj replaces the object in slot, leaving its index values as they are.
func (s *storeState) setObj(slot int, obj interface{}) {
	s.chunks[slot>>slotChunkBits].objs[slot&slotChunkMask] = obj
}

// appendObjs appends every stored object to dst, in slot order.
func (s *storeState) appendObjs(dst []interface{}) []interface{} {
	for i := range s.chunks {
		dst = append(dst, s.chunks[i].objs...)
	}
	return dst
}

// appendKeys appends every key to dst, in slot order.
func (s *storeState) appendKeys(dst []string) []string {
	for i := range s.chunks {
		dst = append(dst, s.chunks[i].keys...)
	}
	return dst
}

// cellsAt returns the cached index values of slot, aliasing its chunk's cells.
func (s *storeState) cellsAt(slot int) []*[]string {
	k := len(s.indices)
	o := (slot & slotChunkMask) * k
	return s.chunks[slot>>slotChunkBits].cells[o : o+k : o+k]
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
		c, o := &s.chunks[slot>>slotChunkBits], slot&slotChunkMask
		old = c.objs[o]
		k := len(s.indices)
		cells := c.cells[o*k : (o+1)*k : (o+1)*k]
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
		c.objs[o] = obj
		return old, true
	}
	slot := s.n
	c := s.chunkFor(slot)
	c.keys = append(c.keys, key)
	c.objs = append(c.objs, obj)
	c.cells = c.cells[:len(c.cells)+len(s.indices)]
	s.n++
	s.slots[key] = slot
	s.mapPeak = max(s.mapPeak, s.n)
	s.indexSlot(slot, vals)
	return nil, false
}

// chunkFor returns the chunk of slot s.n, the next one, with room for it.
func (s *storeState) chunkFor(slot int) *slotChunk {
	ci := slot >> slotChunkBits
	if ci == len(s.chunks) {
		// A first chunk starts small; a later one is only needed by a store that holds
		// slotChunkSize objects already, so it is made at full size.
		capacity := slotChunkSize
		if ci == 0 {
			capacity = 16
		}
		s.chunks = append(s.chunks, s.newChunk(capacity))
	}
	c := &s.chunks[ci]
	if len(c.keys) == cap(c.keys) {
		grown := s.newChunk(min(max(2*cap(c.keys), 16), slotChunkSize))
		grown.keys = append(grown.keys, c.keys...)
		grown.objs = append(grown.objs, c.objs...)
		grown.cells = append(grown.cells, c.cells...)
		*c = grown
	}
	return c
}

// newChunk returns an empty chunk with room for capacity slots.
func (s *storeState) newChunk(capacity int) slotChunk {
	return slotChunk{
		keys:  make([]string, 0, capacity),
		objs:  make([]interface{}, 0, capacity),
		cells: make([]*[]string, 0, capacity*len(s.indices)),
	}
}

// indexSlot records vals, one list per index (or nil), as the values of slot, which has none.
func (s *storeState) indexSlot(slot int, vals [][]string) {
	cells := s.cellsAt(slot)
	for i, idx := range s.indices {
		cells[i] = idx.insertAll(indexValuesAt(vals, i), slot)
	}
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
	last := s.n - 1
	if slot != last {
		moveSlot(s.indices, last, slot, s.cellsAt(last))
		lastKey := s.key(last)
		s.slots[lastKey] = slot
		s.chunks[slot>>slotChunkBits].keys[slot&slotChunkMask] = lastKey
		s.setObj(slot, s.obj(last))
		copy(s.cellsAt(slot), s.cellsAt(last))
	}
	// Clear the vacated slot so the chunk does not keep the object alive.
	clear(s.cellsAt(last))
	ci := last >> slotChunkBits
	c := &s.chunks[ci]
	c.keys[len(c.keys)-1], c.objs[len(c.objs)-1] = "", nil
	c.keys, c.objs, c.cells = c.keys[:len(c.keys)-1], c.objs[:len(c.objs)-1], c.cells[:len(c.cells)-len(s.indices)]
	s.n = last
	if len(c.keys) == 0 && ci+1 < len(s.chunks) {
		// Keep one empty chunk, so that a store going back and forth across a chunk boundary
		// does not make one each time; free the others.
		clear(s.chunks[ci+1:])
		s.chunks = s.chunks[:ci+1]
	}
	if s.mapPeak > 1024 && s.n < s.mapPeak/4 {
		// A Go map keeps its size after deletes: rebuild it and, when all that is left fits
		// in a first chunk, make that chunk twice its content.
		slots := make(map[string]int, 2*s.n)
		for k, v := range s.slots {
			slots[k] = v
		}
		s.slots, s.mapPeak = slots, s.n
		if len(s.chunks) > 0 && s.n <= slotChunkSize/2 {
			first := s.newChunk(max(2*s.n, 16))
			first.keys = append(first.keys, s.chunks[0].keys...)
			first.objs = append(first.objs, s.chunks[0].objs...)
			first.cells = append(first.cells, s.chunks[0].cells...)
			s.chunks = append(s.chunks[:0:0], first)
		}
	}
}

// buildStoreState builds the content for keys and objs (a repeated key keeps its last object)
// with set's indices. It takes ownership of keys, whose array becomes the new content's keys
// (compacted in place when keys repeat); objs is only read. It runs index functions and takes
// no lock. The slots of objects whose index values could not be computed are returned in
// increasing order, with one error each; such slots hold the new object but no index values
// and no index entries.
func buildStoreState(set *indexerSet, keys []string, objs []interface{}) (s storeState, failed []int, errs []error) {
	k := len(set.funcs)
	s = storeState{
		slots:   make(map[string]int, len(keys)),
		indices: make([]index, k),
	}
	for i := range s.indices {
		s.indices[i] = index{}
	}
	all := make([]interface{}, 0, len(keys))
	n := 0
	for i, key := range keys {
		if slot, ok := s.slots[key]; ok {
			all[slot] = objs[i]
			continue
		}
		// keys[:n] holds the keys placed so far; key moves down to slot n before the table
		// can read it there.
		keys[n] = key
		s.slots[key] = n
		all = append(all, objs[i])
		n++
	}
	clear(keys[n:])
	s.n, s.mapPeak = n, n
	cells := make([]*[]string, n*k)
	// The chunks cut the three arrays; each has exactly its slots, so the first slot added
	// later gives the last chunk an array of its own.
	for start := 0; start < n; start += slotChunkSize {
		end := min(start+slotChunkSize, n)
		s.chunks = append(s.chunks, slotChunk{
			keys:  keys[start:end:end],
			objs:  all[start:end:end],
			cells: cells[start*k : end*k : end*k],
		})
	}
	if len(set.funcs) == 0 {
		return s, nil, nil
	}
	vals := make([][]string, k)
	for slot := range n {
		obj := s.obj(slot)
		if obj == nil {
			continue
		}
		if err := valuesOf(set, keys[slot], obj, vals); err != nil {
			failed = append(failed, slot)
			errs = append(errs, err)
			continue
		}
		s.indexSlot(slot, vals)
	}
	return s, failed, errs
}
