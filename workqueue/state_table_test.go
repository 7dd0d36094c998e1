package workqueue

import (
	"math/rand/v2"
	"testing"
)

// tableHash returns a hash for item whose tag (stateTag) is chosen by the test: shape 0 gives
// every item a tag of its own with the same top bits (one home for all in any table of up to
// 2^16 slots), shape 1 gives items the same tag in fours (equal tags, different items), shape 2
// spreads them.
func tableHash(item int, shape int) uint64 {
	var tag uint32
	switch shape {
	case 0:
		tag = 0xabcd0000 | uint32(item)
	case 1:
		tag = uint32(item/4) << 20
	default:
		tag = uint32(item) * 0x9e3779b9
	}
	// The shard bits (the top five) are arbitrary: the table ignores them.
	return uint64(item%32)<<shardShift | uint64(tag)<<(shardShift-32)
}

// checkStateTable compares t with the model and checks that every item is found from its home
// without crossing an empty slot, and that removed items left nothing behind.
func checkStateTable(t *testing.T, step int, tab *stateTable[int], model map[int]itemState, universe, shape int) {
	t.Helper()
	if tab.n != len(model) {
		t.Fatalf("step %d: n = %d, model holds %d", step, tab.n, len(model))
	}
	for item := range universe {
		if got, want := tab.get(item, tableHash(item, shape)), model[item]; got != want {
			t.Fatalf("step %d: item %d in state %d, want %d", step, item, got, want)
		}
	}
	used := 0
	for i := range tab.slots {
		s := &tab.slots[i]
		if s.state == 0 {
			if s.item != 0 || s.tag != 0 {
				t.Fatalf("step %d: empty slot %d keeps item %d", step, i, s.item)
			}
			continue
		}
		used++
		for j := tab.home(s.tag); j != i; j = tab.next(j) {
			if tab.slots[j].state == 0 {
				t.Fatalf("step %d: item %d in slot %d is cut off from its home %d by empty slot %d", step, s.item, i, tab.home(s.tag), j)
			}
		}
	}
	if used != tab.n {
		t.Fatalf("step %d: %d slots in use, n = %d", step, used, tab.n)
	}
	if len(tab.slots) > 0 && 4*tab.n > 3*len(tab.slots) {
		t.Fatalf("step %d: %d items in %d slots, over 3/4", step, tab.n, len(tab.slots))
	}
}

// runStateTableOps applies ops to a table and to a map, checking them against each other after
// every step: each op byte picks an item of the universe and what to do with it.
func runStateTableOps(t *testing.T, ops []byte, universe, shape int) {
	var tab stateTable[int]
	model := map[int]itemState{}
	for step, op := range ops {
		item := int(op>>2) % universe
		h := tableHash(item, shape)
		st := itemState(op&3)%3 + 1
		switch _, ok := model[item]; {
		case !ok:
			tab.insert(item, h, st)
			model[item] = st
		case op&3 == 0:
			tab.remove(item, h)
			delete(model, item)
		default:
			tab.set(item, h, st)
			model[item] = st
		}
		checkStateTable(t, step, &tab, model, universe, shape)
		if tab.n == 0 && step%7 == 0 {
			tab.drop()
		}
	}
}

func TestStateTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for shape := range 3 {
		for _, universe := range []int{5, 40, 200} {
			ops := make([]byte, 4000)
			for i := range ops {
				ops[i] = byte(rng.UintN(256))
			}
			runStateTableOps(t, ops, universe, shape)
		}
	}
}

// TestStateTableWrapsAround: items whose home is the last slot fill the table's end and wrap
// to its start; deleting them one by one must keep the rest reachable.
func TestStateTableWrapsAround(t *testing.T) {
	var tab stateTable[int]
	hash := func(item int) uint64 {
		return uint64(0xffffffff-uint32(item%2)<<29) << (shardShift - 32) // home: the last slot or the one before
	}
	model := map[int]itemState{}
	for item := range 6 {
		tab.insert(item, hash(item), stateWaiting)
		model[item] = stateWaiting
	}
	if len(tab.slots) != stateTableMinSlots {
		t.Fatalf("table has %d slots, want %d", len(tab.slots), stateTableMinSlots)
	}
	for _, item := range []int{1, 4, 0, 5, 2, 3} {
		tab.remove(item, hash(item))
		delete(model, item)
		for other := range 6 {
			if got, want := tab.get(other, hash(other)), model[other]; got != want {
				t.Fatalf("after removing %d: item %d in state %d, want %d", item, other, got, want)
			}
		}
	}
	if tab.n != 0 {
		t.Fatalf("n = %d after removing every item", tab.n)
	}
}

func FuzzStateTable(f *testing.F) {
	f.Add([]byte{0, 4, 8, 12, 1, 2, 3, 0, 4, 8}, uint8(0))
	f.Add([]byte("remove and reinsert, colliding tags"), uint8(1))
	f.Fuzz(func(t *testing.T, ops []byte, shape uint8) {
		runStateTableOps(t, ops, 64, int(shape%3))
	})
}

// TestChosenIntKeysSpread: ints chosen so that their hashes, without the queue's key, share the
// shard and the home slot (Fibonacci hashing is invertible: (c+i)·φ⁻¹ hashes to c+i) still
// spread over the shards and keep probes short, since each queue keys its int hash.
func TestChosenIntKeysSpread(t *testing.T) {
	const phi = 0x9e3779b97f4a7c15
	inv := uint64(phi) // Newton's iteration for the inverse of phi modulo 2^64
	for range 6 {
		inv *= 2 - phi*inv
	}
	const n = 20000
	items := make([]int, n)
	unkeyed := &itemHasher{}
	for i := range items {
		items[i] = int((uint64(0xdeadbeef)<<32 + uint64(i)) * inv)
		if h := itemHash(unkeyed, items[i]); h>>27 != uint64(0xdeadbeef)<<5 {
			t.Fatalf("item %d hashes to %#x without a key, not into the chosen shard and slot", i, h)
		}
	}
	q := NewTyped[int]()
	defer q.ShutDown()
	for _, it := range items {
		q.Add(it)
	}
	used, longest := 0, 0
	for i := range q.shards {
		tab := &q.shards[i].items
		if tab.n > 0 {
			used++
		}
		for j := range tab.slots {
			if s := &tab.slots[j]; s.state != 0 {
				longest = max(longest, (j-tab.home(s.tag)+len(tab.slots))%len(tab.slots))
			}
		}
	}
	if used < itemShardCount/2 || longest > 256 {
		t.Fatalf("%d chosen ints in %d shards, longest probe %d slots: want them spread", n, used, longest)
	}
}
