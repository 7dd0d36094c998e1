package cache

import "hash/maphash"

// keyTableSeed seeds the hash of every keyTable; one seed for the process, so that a table can
// be rebuilt without rehashing against a different seed.
var keyTableSeed = maphash.MakeSeed()

// keyTable maps the keys of a storeState to their slots. It is an open-addressing hash table
// with linear probing that stores only a 32-bit hash and the slot of each key (8 bytes an
// entry) and reads the key itself from the state's key slice. A map[string]int costs 24 bytes
// a slot plus a control byte (29-57 bytes a key, depending on how full it is); this table costs
// 11-21, so a cache of a million objects keeps 18-36 MB less.
//
// An entry is 0 when empty, otherwise the key's hash tag in the high 32 bits and slot+1 in the
// low 32 bits. The tag's low bits choose the key's home position. Deletion shifts the
// following entries back (no tombstones), so a lookup stops at the first empty entry.
type keyTable struct {
	entries []uint64
	n       int
}

// keyTableMinSize is the size of the smallest non-empty table.
const keyTableMinSize = 8

// newKeyTable returns a table sized to hold capacity keys without growing.
func newKeyTable(capacity int) keyTable {
	if capacity == 0 {
		return keyTable{}
	}
	return keyTable{entries: make([]uint64, keyTableSizeFor(capacity))}
}

// keyTableSizeFor returns the table size (a power of two) that holds n keys at a load of at
// most 3/4.
func keyTableSizeFor(n int) int {
	size := keyTableMinSize
	for size*3 < n*4 {
		size *= 2
	}
	return size
}

// keyTableTag returns key's hash tag, never used as an entry on its own.
func keyTableTag(key string) uint32 {
	h := maphash.String(keyTableSeed, key)
	return uint32(h) ^ uint32(h>>32)
}

// len returns the number of keys.
func (t *keyTable) len() int { return t.n }

// find returns the position of key's entry, or -1. keys holds the key of every slot.
func (t *keyTable) find(keys []string, key string) int {
	if t.n == 0 {
		return -1
	}
	tag := keyTableTag(key)
	mask := uint32(len(t.entries) - 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		e := t.entries[i]
		if e == 0 {
			return -1
		}
		if uint32(e>>32) == tag && keys[uint32(e)-1] == key {
			return int(i)
		}
	}
}

// get returns key's slot.
func (t *keyTable) get(keys []string, key string) (int, bool) {
	if i := t.find(keys, key); i >= 0 {
		return t.slotAt(i), true
	}
	return 0, false
}

// slotAt returns the slot of the entry at position i.
func (t *keyTable) slotAt(i int) int { return int(uint32(t.entries[i])) - 1 }

// setSlotAt records that the key of the entry at position i moved to slot.
func (t *keyTable) setSlotAt(i, slot int) {
	t.entries[i] = t.entries[i]&^0xffffffff | uint64(uint32(slot+1))
}

// insert adds key, which must be absent, at slot. The table doubles when it would pass 3/4
// full.
func (t *keyTable) insert(key string, slot int) {
	if (t.n+1)*4 > len(t.entries)*3 {
		t.resize(keyTableSizeFor(t.n + 1))
	}
	t.put(keyTableTag(key), slot)
	t.n++
}

// put places an entry for tag and slot at the first free position from its home.
func (t *keyTable) put(tag uint32, slot int) {
	mask := uint32(len(t.entries) - 1)
	i := tag & mask
	for t.entries[i] != 0 {
		i = (i + 1) & mask
	}
	t.entries[i] = uint64(tag)<<32 | uint64(uint32(slot+1))
}

// removeAt deletes the entry at position i and shifts the entries that follow it back so
// that no probe sequence is broken. The table shrinks when it falls below an eighth full.
func (t *keyTable) removeAt(pos int) {
	i := uint32(pos)
	mask := uint32(len(t.entries) - 1)
	for j := (i + 1) & mask; t.entries[j] != 0; j = (j + 1) & mask {
		// The entry at j may move into the hole at i unless its home lies cyclically in (i, j].
		home := uint32(t.entries[j]>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.entries[i] = t.entries[j]
			i = j
		}
	}
	t.entries[i] = 0
	t.n--
	if len(t.entries) > 1024 && t.n*8 < len(t.entries) {
		t.resize(keyTableSizeFor(t.n) * 2)
	}
}

// resize rebuilds the table with size entries. The stored tags give every entry's home, so no
// key is hashed again.
func (t *keyTable) resize(size int) {
	old := t.entries
	t.entries = make([]uint64, size)
	for _, e := range old {
		if e != 0 {
			t.put(uint32(e>>32), int(uint32(e))-1)
		}
	}
}
