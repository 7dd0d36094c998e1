package workqueue

// stateTable maps a shard's items to their states (itemState). It is a hash table with open
// addressing: an array of slots, linear probing, at most 3/4 full, and deletion by shifting the
// following slots back (no tombstones, so probes stay short however many items pass through). It
// grows by half, not by doubling, so that it stays between 1/2 and 3/4 full: a slot is as large as
// a Go map's (the item, its state, padding), and a table that doubled would hold 3/8 of an item per
// slot after each growth. Its header (the slice and the count) lives in the shard's own cache line,
// next to the lock.
//
// It replaces a Go map, for the cache lines an operation touches: an insert or delete in a Go map
// writes the map's header and its table's header (counts, growth budget), two more lines besides
// the slot's, and with the producer on one CPU and the worker on another every Add, Get and Done
// moved them between the CPUs. Here an operation touches the shard's line, which its lock brought
// along, and the line of the item's slot. It also hashes the item once: the queue already has the
// hash (itemHash) that chose the shard.
//
// A slot's index is taken from the 32 bits of the item's hash right below the shard's bits, scaled
// to the table's size, and each slot keeps those bits (tag): a probe compares items only where the
// tags are equal, and a deletion finds where a slot's item belongs without hashing it again.
type stateTable[T comparable] struct {
	slots []stateSlot[T] // nil, or at least stateTableMinSlots
	n     int            // slots in use
}

// stateSlot is one slot of a stateTable; state 0 marks it empty.
type stateSlot[T comparable] struct {
	item  T
	tag   uint32
	state itemState
}

// stateTableMinSlots is the size of a table when it is first needed.
const stateTableMinSlots = 8

// stateTag returns the bits of hash h that place an item in its shard's table: the 32 below
// the shard's.
func stateTag(h uint64) uint32 { return uint32(h << (64 - shardShift) >> 32) }

// home returns the slot a probe for tag starts at: the tag scaled to the table's size.
func (t *stateTable[T]) home(tag uint32) int {
	return int(uint64(tag) * uint64(len(t.slots)) >> 32)
}

// next returns the slot after slot i, wrapping around.
func (t *stateTable[T]) next(i int) int {
	if i++; i == len(t.slots) {
		return 0
	}
	return i
}

// find returns the index of item's slot and true, or the index of the empty slot that ends
// item's probe and false. The table must have slots.
func (t *stateTable[T]) find(item T, tag uint32) (int, bool) {
	for i := t.home(tag); ; i = t.next(i) {
		s := &t.slots[i]
		if s.state == 0 {
			return i, false
		}
		if s.tag == tag && s.item == item {
			return i, true
		}
	}
}

// get returns item's state, or 0 if the table does not hold it. h is the item's hash.
func (t *stateTable[T]) get(item T, h uint64) itemState {
	if t.n == 0 {
		return 0
	}
	if i, ok := t.find(item, stateTag(h)); ok {
		return t.slots[i].state
	}
	return 0
}

// insert adds item, which the table does not hold, in state st (not 0).
func (t *stateTable[T]) insert(item T, h uint64, st itemState) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(max(len(t.slots)+len(t.slots)/2, stateTableMinSlots))
	}
	tag := stateTag(h)
	i, _ := t.find(item, tag)
	t.slots[i] = stateSlot[T]{item: item, tag: tag, state: st}
	t.n++
}

// set changes the state of item, which the table holds, to st (not 0).
func (t *stateTable[T]) set(item T, h uint64, st itemState) {
	if t.n == 0 {
		return
	}
	if i, ok := t.find(item, stateTag(h)); ok {
		t.slots[i].state = st
	}
}

// remove deletes item, which the table holds, and clears its slot, so that the table keeps no
// reference to it.
func (t *stateTable[T]) remove(item T, h uint64) {
	if t.n == 0 {
		return
	}
	i, ok := t.find(item, stateTag(h))
	if !ok {
		return
	}
	size := len(t.slots)
	// Move back every following slot of the run whose home is not between the hole and it, so
	// that every probe still reaches its item before an empty slot.
	for j := t.next(i); t.slots[j].state != 0; j = t.next(j) {
		k := t.home(t.slots[j].tag)
		if (j-k+size)%size >= (j-i+size)%size {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = stateSlot[T]{}
	t.n--
}

// resize moves the items to a new array of size slots, over 4/3 of them.
func (t *stateTable[T]) resize(size int) {
	old := t.slots
	t.slots = make([]stateSlot[T], size)
	for k := range old {
		s := &old[k]
		if s.state == 0 {
			continue
		}
		i := t.home(s.tag)
		for t.slots[i].state != 0 {
			i = t.next(i)
		}
		t.slots[i] = *s
	}
}

// drop releases the slots of an empty table.
func (t *stateTable[T]) drop() {
	t.slots = nil
}
