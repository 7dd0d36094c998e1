package workqueue

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// sameShardInts returns n ints that hash to q's shard 0 (hashing is keyed per queue).
func sameShardInts(q *Typed[int], n int) []int {
	var out []int
	for i := 0; len(out) < n; i++ {
		if itemHash(&q.hasher, i)>>shardShift == 0 {
			out = append(out, i)
		}
	}
	return out
}

// checkHotInvariant fails unless every item of every current hot table is waiting exactly
// when it is dirty and due again exactly when it is being processed and was added again,
// tables are at most half full and hold each item once.
func checkHotInvariant[T comparable](t *testing.T, q *Typed[T], step int) {
	t.Helper()
	for i := range q.hot {
		tab := q.hot[i].Load()
		if tab == nil {
			continue
		}
		sh := &q.shards[i]
		seen := map[T]bool{}
		filled := 0
		for j := range tab.slots {
			s := &tab.slots[j]
			st := s.state.Load()
			if st == slotEmpty {
				continue
			}
			filled++
			if seen[s.item] {
				t.Fatalf("step %d: item %v twice in shard %d's hot table", step, s.item, i)
			}
			seen[s.item] = true
			if got, want := st == slotWaiting, sh.state(s.item, itemHash(&q.hasher, s.item)) == stateWaiting; got != want {
				t.Fatalf("step %d: hot item %v waiting = %v, dirty = %v", step, s.item, got, want)
			}
			if got, want := st == slotAgain, sh.state(s.item, itemHash(&q.hasher, s.item)) == stateAgain; got != want {
				t.Fatalf("step %d: hot item %v due again = %v, processing and added again = %v", step, s.item, got, want)
			}
			if found, _ := tab.lookup(s.item, itemHash(&q.hasher, s.item)); found != s {
				t.Fatalf("step %d: hot item %v not found by lookup", step, s.item)
			}
		}
		if filled != tab.n || 2*filled > len(tab.slots) {
			t.Fatalf("step %d: shard %d table has %d filled slots of %d, n = %d", step, i, filled, len(tab.slots), tab.n)
		}
	}
}

// isWaiting reports, without a lock, whether item is a hot item in slotWaiting.
func (q *Typed[T]) isWaiting(item T, h uint64) bool {
	t := q.hot[h>>shardShift].Load()
	if t == nil {
		return false
	}
	_, st := t.lookup(item, h)
	return st == slotWaiting
}

// warm records, as an Add that found the lock held would, that item's shard is contended.
func warm[T comparable](q *Typed[T], item T) {
	sh, h := q.shard(item)
	sh.mu.Lock()
	q.candidates[h>>shardShift].contended()
	sh.mu.Unlock()
}

// makeHot adds item, which must not be waiting or hot, until it is hot: its shard warmed,
// once, then hotPromoteAfter absorbed Adds.
func makeHot[T comparable](t *testing.T, q *Typed[T], item T) {
	t.Helper()
	_, h := q.shard(item)
	warm(q, item)
	for i := range hotPromoteAfter + 1 {
		if q.isWaiting(item, h) {
			t.Fatalf("item %v hot after %d Adds, want %d", item, i, hotPromoteAfter+1)
		}
		q.Add(item)
	}
	if !q.isWaiting(item, h) {
		t.Fatalf("item %v not hot after %d Adds while it waits", item, hotPromoteAfter+1)
	}
}

// addWithShardLocked adds item, hot and in a state that absorbs an Add, while its shard sh is
// locked: the Add must return without waiting for the lock.
func addWithShardLocked[T comparable](t *testing.T, q *Typed[T], sh *itemShard[T], item T, state string) {
	t.Helper()
	sh.mu.Lock()
	done := make(chan struct{})
	go func() {
		q.Add(item)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // only reached on failure
		sh.mu.Unlock()
		<-done
		t.Fatalf("an Add of a %s hot item waited for the shard lock", state)
	}
	sh.mu.Unlock()
}

// hotCount returns the number of entries in item's shard's hot table.
func hotCount[T comparable](q *Typed[T], item T) int {
	if tab := q.hot[itemHash(&q.hasher, item)>>shardShift].Load(); tab != nil {
		return tab.n
	}
	return 0
}

// TestHotItemAbsorbedWithoutLock: an item added again while it waits becomes hot, and from
// then on an Add that finds it waiting returns without its shard's lock; once a worker takes
// it, Adds take the lock again and queue it after Done, as for any item.
func TestHotItemAbsorbedWithoutLock(t *testing.T) {
	t.Run("int", func(t *testing.T) { testHotItem(t, 7) })
	t.Run("string", func(t *testing.T) { testHotItem(t, "default/pod-7") })
	t.Run("struct", func(t *testing.T) { testHotItem(t, struct{ ns, name string }{"default", "pod-7"}) })
}

func testHotItem[T comparable](t *testing.T, item T) {
	q := NewTyped[T]()
	defer q.ShutDown()
	sh, h := q.shard(item)

	makeHot(t, q, item)

	// With the shard locked, an Add of the waiting hot item still returns.
	addWithShardLocked(t, q, sh, item, "waiting")
	if n := q.Len(); n != 1 {
		t.Fatalf("Len = %d after Adds of one item, want 1", n)
	}

	got, _ := q.Get()
	if got != item || q.isWaiting(item, h) {
		t.Fatalf("Get = %v; still waiting: %v", got, q.isWaiting(item, h))
	}
	q.Add(item) // being processed: queued again by Done
	if q.Len() != 0 || q.isWaiting(item, h) {
		t.Fatal("an Add during processing queued the item or marked it waiting")
	}
	if _, st := q.hot[h>>shardShift].Load().lookup(item, h); st != slotAgain {
		t.Fatalf("hot item added again during its processing is in state %d, want slotAgain", st)
	}
	// It is due again: a further Add returns without the lock, and changes nothing.
	addWithShardLocked(t, q, sh, item, "due again")
	q.Done(item)
	if q.Len() != 1 || !q.isWaiting(item, h) {
		t.Fatal("Done did not queue the item added during its processing, or it is not waiting")
	}
	got, _ = q.Get()
	q.Done(got)
	if q.Len() != 0 || q.isWaiting(item, h) {
		t.Fatal("a finished item is still waiting")
	}
	q.Add(item) // idle and hot: queued, through the lock
	if q.Len() != 1 || !q.isWaiting(item, h) {
		t.Fatal("an idle hot item added again is not queued and waiting")
	}
	checkHotInvariant(t, q, 0)
}

// TestHotTablePruneAndBound: a shard keeps at most hotMaxEntries hot items; items beyond
// that are absorbed under the lock as before. Once the shard's waiting set empties, the hot
// entries of items that are not being processed are dropped.
func TestHotTablePruneAndBound(t *testing.T) {
	q := NewTyped[int]()
	defer q.ShutDown()
	items := sameShardInts(q, hotMaxEntries+10)
	for round := range 2 {
		warm(q, items[0])
		for _, it := range items {
			for range hotPromoteAfter + 2 { // enough absorbed Adds to promote every item
				q.Add(it)
			}
		}
		checkHotInvariant(t, q, round)
		if n := hotCount(q, items[0]); n != hotMaxEntries {
			t.Fatalf("round %d: %d hot items in a shard, want the bound %d", round, n, hotMaxEntries)
		}
		if n := q.Len(); n != len(items) {
			t.Fatalf("round %d: Len = %d, want %d", round, n, len(items))
		}
		// Take all; hold the first, a hot one.
		for i := range items {
			got, _ := q.Get()
			if got != items[i] {
				t.Fatalf("round %d: Get = %d, want %d", round, got, items[i])
			}
			if i > 0 {
				q.Done(got)
			}
		}
		checkHotInvariant(t, q, round)
		held := items[0]
		tab := q.hot[0].Load()
		if tab == nil {
			t.Fatalf("round %d: after the drain no hot table, want one with the item being processed", round)
		}
		if found, st := tab.lookup(held, itemHash(&q.hasher, held)); tab.n != 1 || found == nil || st != slotIdle {
			t.Fatalf("round %d: after the drain the hot table is %+v, want only the item being processed", round, tab)
		}
		q.Done(held)
	}
}

// TestHotItemsNotInLockedMode: a custom Queue sees every Add again (Touch), so no item ever
// becomes hot.
func TestHotItemsNotInLockedMode(t *testing.T) {
	touched := 0
	q := NewTypedWithConfig(TypedQueueConfig[int]{Queue: &touchCounter{intFIFO: &intFIFO{}, touched: &touched}})
	defer q.ShutDown()
	for range 3 {
		q.Add(1)
	}
	if touched != 2 {
		t.Fatalf("Touch called %d times for two Adds of a waiting item, want 2", touched)
	}
	for i := range q.hot {
		if q.hot[i].Load() != nil {
			t.Fatalf("shard %d has a hot table in locked mode", i)
		}
	}
}

type touchCounter struct {
	*intFIFO
	touched *int
}

func (c touchCounter) Touch(int) { *c.touched++ }

// TestHotTableLookup: lookup finds every inserted entry across wrap-around and collisions,
// and nil for others; newHotTable always leaves room for one more at half load.
func TestHotTableLookup(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 31, 63} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			tab := newHotTable[int](n)
			if 2*(n+1) > len(tab.slots) || len(tab.slots)&(len(tab.slots)-1) != 0 {
				t.Fatalf("%d slots for %d entries and one more", len(tab.slots), n)
			}
			// Hashes that all start at the last slot, to wrap around and collide.
			h := uint64(len(tab.slots) - 1)
			for i := range n + 1 {
				tab.insert(i, h, []uint32{slotIdle, slotWaiting}[1-i%2])
			}
			for i := range n + 1 {
				if s, st := tab.lookup(i, h); s == nil || s.item != i || st != []uint32{slotIdle, slotWaiting}[1-i%2] {
					t.Fatalf("item %d: lookup = %v, state %d", i, s, st)
				}
			}
			if s, st := tab.lookup(-1, h); s != nil || st != slotEmpty {
				t.Fatalf("lookup of an absent item = %v, state %d", s, st)
			}
		})
	}
}

// TestHotItemAbandonedAtShutDown: an Add that marks an idle hot item waiting and then finds
// the queue shut down before it could queue the item leaves it not waiting.
func TestHotItemAbandonedAtShutDown(t *testing.T) {
	q := NewTyped[int]()
	defer q.ShutDown()
	const item = 3
	_, h := q.shard(item)
	makeHot(t, q, item)
	got, _ := q.Get()
	q.Done(got) // idle, still in the shard's small table
	if hotCount(q, item) != 1 {
		t.Fatal("the idle hot item left its shard's small table")
	}

	q.mu.Lock()
	added := make(chan struct{})
	go func() {
		q.Add(item) // marks the item waiting, then waits for mu
		close(added)
	}()
	for !q.isWaiting(item, h) {
		runtime.Gosched()
	}
	q.shutDownLocked(false)
	q.mu.Unlock()
	<-added
	if q.isWaiting(item, h) || q.Len() != 0 {
		t.Fatalf("after an Add abandoned by shutdown: waiting %v, Len %d", q.isWaiting(item, h), q.Len())
	}
	checkHotInvariant(t, q, 0)
}

// TestHotPromotionIsRationed: no item becomes hot while Adds never find its shard's lock
// held (one goroutine adds), however often it is added; in a warm shard, items that are each
// added two or three times while they wait (an add and an update or two before a worker gets
// to them) do not either, nor do items added many times in all but far apart; an item added
// again and again does.
func TestHotPromotionIsRationed(t *testing.T) {
	q := NewTyped[int]()
	defer q.ShutDown()
	items := sameShardInts(q, 201)
	for range 10 * hotPromoteAfter {
		q.Add(items[0])
	}
	if n := hotCount(q, items[0]); n != 0 {
		t.Fatalf("%d items hot in a shard never contended, want none", n)
	}
	warm(q, items[0])
	for _, it := range items[1:101] {
		q.Add(it)
		q.Add(it)
		q.Add(it)
	}
	for range hotPromoteAfter + 1 { // round after round, each item absorbed once a round
		for _, it := range items[101:200] {
			q.Add(it)
		}
	}
	if n := hotCount(q, items[0]); n != 0 {
		t.Fatalf("%d items hot, want none", n)
	}
	makeHot(t, q, items[200])
	if n := hotCount(q, items[0]); n != 1 {
		t.Fatalf("%d items hot, want 1", n)
	}
	checkHotInvariant(t, q, 0)
}

// TestHotCandidates: in a warm shard, hotPromoteAfter absorbed Adds of one tag promote it,
// once; an item pushed out by others starts over; hotHeat absorbed Adds after the last
// contention, the shard is cold: its Adds are not counted (the caller checks heat).
func TestHotCandidates(t *testing.T) {
	var c hotCandidates
	c.contended()
	h := func(i int) uint64 { return uint64(i) << 27 } // tag i
	for n := 1; n < hotPromoteAfter; n++ {
		if c.absorbed(h(1)) {
			t.Fatalf("promoted after %d absorbed Adds", n)
		}
	}
	if !c.absorbed(h(1)) {
		t.Fatalf("not promoted after %d absorbed Adds", hotPromoteAfter)
	}
	if c.absorbed(h(1)) {
		t.Fatal("promoted again at once")
	}
	for i := 2; i < 2+len(c.tags); i++ { // push item 1 out
		c.absorbed(h(i))
	}
	for n := 1; n < hotPromoteAfter; n++ {
		if c.absorbed(h(1)) {
			t.Fatalf("promoted after %d absorbed Adds since it was pushed out", n)
		}
	}
	if calls := 2*hotPromoteAfter + len(c.tags); int(c.heat) != hotHeat-calls {
		t.Fatalf("heat %d after %d absorbed Adds, want %d", c.heat, calls, hotHeat-calls)
	}
	c.contended()
	if c.heat != hotHeat {
		t.Fatalf("heat %d after contention, want %d", c.heat, hotHeat)
	}
}

// TestHotTableRebuildRetiresOld: a rebuild leaves no slot of the replaced table waiting, so an
// Add that still reads it takes the locked path; the new table carries the states over.
func TestHotTableRebuildRetiresOld(t *testing.T) {
	q := NewTyped[int]()
	defer q.ShutDown()
	items := sameShardInts(q, hotSmallEntries+2) // more than the smallest table holds
	for _, it := range items {
		makeHot(t, q, it)
	}
	old := q.hot[0].Load()
	if old == nil || old.n != len(items) {
		t.Fatalf("hot table %+v, want %d items", old, len(items))
	}
	got, _ := q.Get() // items[0]: processing, kept by a prune
	for range items[1:] {
		it, _ := q.Get()
		q.Done(it)
	}
	// The shard's waiting set emptied at the last Get: the table was pruned to the two items
	// being processed then, the first and the last.
	cur := q.hot[0].Load()
	if cur == old || cur == nil || cur.n != 2 {
		t.Fatalf("after the prune the table is %+v (old %p)", cur, old)
	}
	for j := range old.slots {
		if st := old.slots[j].state.Load(); st == slotWaiting {
			t.Fatalf("slot %d of the replaced table still waiting", j)
		}
	}
	q.Done(got)
	q.Add(got) // idle and hot: queued through the lock, waiting in the new table only
	h := itemHash(&q.hasher, got)
	if _, st := old.lookup(got, h); st == slotWaiting {
		t.Fatal("the replaced table reports the item waiting")
	}
	if !q.isWaiting(got, h) {
		t.Fatal("the current table does not report the item waiting")
	}
	checkHotInvariant(t, q, 0)
}

// TestHotPromotedWhileProcessing: an item added again and again while a worker holds it is
// promoted as due again, so that producers stop taking the shard lock the worker's Done
// needs; its Done queues it once, and it is then waiting.
func TestHotPromotedWhileProcessing(t *testing.T) {
	q := NewTyped[int]()
	defer q.ShutDown()
	item := 7
	sh, h := q.shard(item)
	q.Add(item)
	if got, _ := q.Get(); got != item {
		t.Fatalf("Get = %d, want %d", got, item)
	}
	warm(q, item)
	q.Add(item) // marks it added again
	for i := range hotPromoteAfter {
		if hotCount(q, item) != 0 {
			t.Fatalf("item hot after %d absorbed Adds, want %d", i, hotPromoteAfter)
		}
		q.Add(item)
	}
	tab := q.hot[h>>shardShift].Load()
	if tab == nil {
		t.Fatal("no hot table after the absorbed Adds")
	}
	if _, st := tab.lookup(item, h); st != slotAgain {
		t.Fatalf("promoted item in state %d, want slotAgain", st)
	}
	addWithShardLocked(t, q, sh, item, "due again")
	checkHotInvariant(t, q, 0)
	q.Done(item)
	if q.Len() != 1 || !q.isWaiting(item, h) {
		t.Fatalf("after Done: Len %d, waiting %v; want the item queued once", q.Len(), q.isWaiting(item, h))
	}
	checkHotInvariant(t, q, 1)
}
