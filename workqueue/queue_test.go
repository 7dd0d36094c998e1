package workqueue

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
)

// runScript drives q with a small script: "add x", "done x", "get x" (Get must return x at
// once), "get shutdown" (Get must report shutdown at once), "len n", "shutdown", "down" /
// "up" (ShuttingDown must be true / false).
func runScript(t *testing.T, q *Typed[string], script []string) {
	t.Helper()
	for i, step := range script {
		verb, arg, _ := strings.Cut(step, " ")
		switch verb {
		case "add":
			q.Add(arg)
		case "done":
			q.Done(arg)
		case "get":
			if q.Len() == 0 && !q.ShuttingDown() {
				t.Fatalf("step %d %q: Get would block on an empty queue", i, step)
			}
			item, shutdown := q.Get()
			if arg == "shutdown" {
				if !shutdown || item != "" {
					t.Fatalf("step %d %q: Get = %q, %v; want \"\", true", i, step, item, shutdown)
				}
			} else if shutdown || item != arg {
				t.Fatalf("step %d %q: Get = %q, %v; want %q, false", i, step, item, shutdown, arg)
			}
		case "len":
			want, _ := strconv.Atoi(arg)
			if got := q.Len(); got != want {
				t.Fatalf("step %d %q: Len = %d", i, step, got)
			}
		case "shutdown":
			q.ShutDown()
		case "down", "up":
			if got := q.ShuttingDown(); got != (verb == "down") {
				t.Fatalf("step %d %q: ShuttingDown = %v", i, step, got)
			}
		default:
			t.Fatalf("bad step %q", step)
		}
	}
}

func TestQueueSemantics(t *testing.T) {
	cases := []struct {
		name   string
		script []string
	}{
		{"fifo order", []string{"add a", "add b", "add c", "len 3", "get a", "get b", "get c", "len 0"}},
		{"duplicate adds collapse", []string{"add a", "add b", "add a", "add a", "len 2", "get a", "get b", "len 0"}},
		{"re-add keeps the first position", []string{"add a", "add b", "add a", "get a", "get b"}},
		{"add while processing waits for done", []string{
			"add a", "get a", "add a", "len 0", "add b", "get b", "done a", "len 1", "get a", "done a", "done b", "len 0"}},
		{"add while processing counts once", []string{"add a", "get a", "add a", "add a", "done a", "len 1", "get a", "done a", "len 0"}},
		{"done without re-add forgets", []string{"add a", "get a", "done a", "len 0", "add a", "len 1", "get a"}},
		{"done of an item never taken is ignored", []string{"add a", "done a", "len 1", "done b", "get a", "len 0", "done a", "add a", "len 1"}},
		{"done twice is ignored", []string{"add a", "get a", "done a", "done a", "add a", "get a", "add a", "done a", "len 1", "done a", "len 1"}},
		{"zero value item", []string{"add ", "len 1", "get ", "done ", "len 0"}},
		{"shutdown drains queued items", []string{"add a", "add b", "up", "shutdown", "down", "len 2", "get a", "get b", "get shutdown", "get shutdown"}},
		{"adds after shutdown are dropped", []string{"add a", "shutdown", "add b", "len 1", "get a", "add a", "get shutdown"}},
		{"re-added in processing before shutdown is queued at done", []string{
			"add a", "get a", "add a", "shutdown", "get shutdown", "done a", "len 1", "get a", "done a", "get shutdown"}},
		{"shutdown twice", []string{"shutdown", "shutdown", "get shutdown"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := NewTyped[string]()
			defer q.ShutDown()
			runScript(t, q, tc.script)
		})
	}
}

// getAsync runs Get in a goroutine and delivers its result on the returned channel.
type getResult struct {
	item     string
	shutdown bool
}

func getAsync(q TypedInterface[string]) <-chan getResult {
	ch := make(chan getResult, 1)
	go func() {
		item, shutdown := q.Get()
		ch <- getResult{item, shutdown}
	}()
	return ch
}

func TestGetBlocks(t *testing.T) {
	cases := []struct {
		name    string
		release func(q *Typed[string])
		want    getResult
	}{
		{"until add", func(q *Typed[string]) { q.Add("a") }, getResult{"a", false}},
		{"until shutdown", func(q *Typed[string]) { q.ShutDown() }, getResult{"", true}},
		{"until shutdown with drain", func(q *Typed[string]) {
			go q.ShutDownWithDrain() // waits for "held"
		}, getResult{"", true}},
		{"until done re-queues an item", func(q *Typed[string]) { q.Done("held") }, getResult{"held", false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewTyped[string]()
				defer q.ShutDown()
				// One item is held by a worker and added again: it waits for Done.
				q.Add("held")
				q.Get()
				q.Add("held")
				got := getAsync(q)
				synctest.Wait()
				select {
				case r := <-got:
					t.Fatalf("Get returned %+v on an empty queue", r)
				default:
				}
				tc.release(q)
				if r := <-got; r != tc.want {
					t.Fatalf("Get = %+v, want %+v", r, tc.want)
				}
			})
		})
	}
}

func TestBlockedGettersEachGetOneItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewTyped[string]()
		defer q.ShutDown()
		const n = 5
		results := make([]<-chan getResult, n)
		for i := range results {
			results[i] = getAsync(q)
		}
		synctest.Wait()
		items := []string{"a", "b", "c", "d", "e"}
		for _, it := range items {
			q.Add(it)
		}
		seen := map[string]bool{}
		for _, ch := range results {
			r := <-ch
			if r.shutdown || seen[r.item] {
				t.Fatalf("Get = %+v, seen %v", r, seen)
			}
			seen[r.item] = true
		}
		// "a" is held by a getter whose Get has returned: this add waits for Done. (An Add
		// before that Get returns is absorbed by the processing that Get starts, as in
		// client-go, where the item would still be queued.)
		q.Add("a")
		if len(seen) != n || q.Len() != 0 {
			t.Fatalf("got %v, Len %d", seen, q.Len())
		}
		q.Done("a")
		if item, _ := q.Get(); item != "a" {
			t.Fatalf("Get after Done = %q, want a", item)
		}
	})
}

// TestShutDownWithDrain: the drain waits for exactly the items workers hold, with the default
// FIFO (states kept in the shards) and with a custom Queue (everything under the queue's lock).
func TestShutDownWithDrain(t *testing.T) {
	cases := []struct {
		name string
		// held items are taken by a worker before ShutDownWithDrain; queued are only added.
		held, queued []string
		// finish ends the processing: it runs after ShutDownWithDrain is seen waiting.
		finish func(t *testing.T, q *Typed[string])
	}{
		{"nothing in flight returns at once", nil, nil, nil},
		{"queued items are not waited for", nil, []string{"a", "b"}, nil},
		{"waits for every held item", []string{"a", "b"}, nil, func(t *testing.T, q *Typed[string]) {
			q.Done("a")
			synctest.Wait()
			q.Done("b")
		}},
		{"a later ShutDown ends the wait", []string{"a"}, nil, func(t *testing.T, q *Typed[string]) { q.ShutDown() }},
		{"an add during the drain is dropped", []string{"a"}, nil, func(t *testing.T, q *Typed[string]) {
			q.Add("a") // dropped: shutting down
			q.Done("a")
		}},
		{"a Done of an item not held does not count", []string{"a"}, []string{"b"}, func(t *testing.T, q *Typed[string]) {
			q.Done("b") // queued, not taken
			q.Done("x") // never added
			q.mu.Lock()
			n := q.processing
			q.mu.Unlock()
			if n != 1 {
				t.Errorf("after Dones of items not held, %d items count as being processed, want 1", n)
			}
			q.Done("a")
			q.Done("a") // a second Done: ignored
		}},
	}
	modes := []struct {
		name     string
		newQueue func() *Typed[string]
	}{
		{"default FIFO", NewTyped[string]},
		{"custom Queue", func() *Typed[string] { return NewTypedWithConfig(TypedQueueConfig[string]{Queue: &lifo{}}) }},
	}
	for _, mode := range modes {
		for _, tc := range cases {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					q := mode.newQueue()
					defer q.ShutDown()
					for _, it := range tc.held {
						q.Add(it)
						q.Get()
					}
					for _, it := range tc.queued {
						q.Add(it)
					}
					returned := make(chan struct{})
					go func() {
						q.ShutDownWithDrain()
						close(returned)
					}()
					synctest.Wait()
					select {
					case <-returned:
						if len(tc.held) > 0 {
							t.Fatal("ShutDownWithDrain returned while items were being processed")
						}
					default:
						if len(tc.held) == 0 {
							t.Fatal("ShutDownWithDrain waits with nothing being processed")
						}
						tc.finish(t, q)
						<-returned
					}
					if !q.ShuttingDown() {
						t.Fatal("ShuttingDown = false after ShutDownWithDrain")
					}
					if got := q.Len(); got != len(tc.queued) {
						t.Fatalf("Len = %d, want the %d queued items", got, len(tc.queued))
					}
				})
			})
		}
	}
}

// TestShutDownWithDrainRequeued: an item added again before the drain and queued by its Done
// is not waited for, as in client-go; the worker still gets it afterwards.
func TestShutDownWithDrainRequeued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewTyped[string]()
		q.Add("a")
		q.Get()
		q.Add("a")
		returned := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(returned)
		}()
		synctest.Wait()
		q.Done("a")
		<-returned
		if item, shutdown := q.Get(); item != "a" || shutdown {
			t.Fatalf("Get after the drain = %q, %v; want the re-queued item", item, shutdown)
		}
		q.Done("a")
		if _, shutdown := q.Get(); !shutdown {
			t.Fatal("Get on the drained queue did not report shutdown")
		}
	})
}

// lifo is a custom Queue that hands out the newest item first and records Touch calls.
type lifo struct {
	items   []string
	touched []string
}

func (l *lifo) Touch(item string) { l.touched = append(l.touched, item) }
func (l *lifo) Push(item string)  { l.items = append(l.items, item) }
func (l *lifo) Len() int          { return len(l.items) }
func (l *lifo) Pop() string {
	item := l.items[len(l.items)-1]
	l.items = l.items[:len(l.items)-1]
	return item
}

func TestCustomQueue(t *testing.T) {
	cases := []struct {
		name        string
		script      []string
		wantTouched []string
	}{
		{"order comes from the queue", []string{"add a", "add b", "add c", "get c", "get b", "get a"}, nil},
		{"re-adding a waiting item touches it", []string{"add a", "add b", "add a", "get b"}, []string{"a"}},
		{"re-adding a held item does not touch", []string{"add a", "get a", "add a", "add a", "done a", "get a"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &lifo{}
			q := NewTypedWithConfig(TypedQueueConfig[string]{Queue: l})
			defer q.ShutDown()
			runScript(t, q, tc.script)
			if strings.Join(l.touched, ",") != strings.Join(tc.wantTouched, ",") {
				t.Fatalf("touched %v, want %v", l.touched, tc.wantTouched)
			}
		})
	}
}

func TestDefaultQueueRing(t *testing.T) {
	cases := []struct {
		name string
		// rounds of pushes then pops; the queue must come out in order each time.
		rounds [][2]int
	}{
		{"empty", nil},
		{"wraps around", [][2]int{{10, 7}, {10, 10}, {5, 8}}},
		{"grows past the first buffer", [][2]int{{100, 50}, {100, 150}}},
		{"shrinks after a burst", [][2]int{{10000, 9990}, {5, 15}}},
		{"shrinks while draining", [][2]int{{100000, 99000}, {0, 990}, {3, 13}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := DefaultQueue[int]().(*fifo[int])
			next, want := 0, 0
			for _, r := range tc.rounds {
				for range r[0] {
					f.Push(next)
					next++
				}
				for range r[1] {
					if got := f.Pop(); got != want {
						t.Fatalf("Pop = %d, want %d", got, want)
					}
					want++
				}
				if f.Len() != next-want {
					t.Fatalf("Len = %d, want %d", f.Len(), next-want)
				}
				// Beyond its items, the ring holds the unused parts of its first and last
				// chunks and one spare chunk, of at most 8 KiB each.
				if c := f.ring.Cap(); r[1] > 0 && c > f.Len()+3*1024 {
					t.Fatalf("%d slots kept for %d items", c, f.Len())
				}
			}
			if c := f.ring.Cap(); f.Len() == 0 && c > 2*1024 {
				t.Fatalf("buffer of %d slots kept after draining", c)
			}
		})
	}
}

// TestItemsMapShrinksAfterBurst: the map of item states that a burst made large is kept while
// bursts of that size recur, and reallocated at the end of the first burst that needs less than
// a quarter of it, so that neither memory nor the map's regrowth is paid for nothing.
func TestItemsMapShrinksAfterBurst(t *testing.T) {
	for _, custom := range []bool{false, true} {
		t.Run(fmt.Sprintf("custom-queue=%v", custom), func(t *testing.T) {
			q := newModeQueue(custom)
			defer q.ShutDown()
			// burst adds n items and takes every one before any is done, so that the map holds
			// the whole burst; it reports whether the map was reallocated when it emptied.
			burst := func(n int) (reallocated bool) {
				for i := range n {
					q.Add(i)
				}
				items := make([]int, 0, n)
				for range n {
					item, _ := q.Get()
					items = append(items, item)
				}
				q.mu.Lock()
				before := reflect.ValueOf(q.items).UnsafePointer()
				q.mu.Unlock()
				for _, item := range items {
					q.Done(item)
				}
				q.mu.Lock()
				defer q.mu.Unlock()
				if len(q.items) != 0 {
					t.Fatalf("%d item states left after the burst", len(q.items))
				}
				return reflect.ValueOf(q.items).UnsafePointer() != before
			}
			big := 8 * shrinkThreshold
			for round := range 2 {
				if burst(big) {
					t.Fatalf("round %d: the map was reallocated after a burst like the last", round)
				}
			}
			if !burst(big / 16) {
				t.Fatal("the map was kept after a burst under a quarter of its peak")
			}
			if burst(shrinkThreshold / 2) {
				t.Fatal("a map that never held more than shrinkThreshold items was reallocated")
			}
		})
	}
}

// intFIFO is a custom Queue.
type intFIFO struct{ items []int }

func (f *intFIFO) Touch(int)       {}
func (f *intFIFO) Push(item int)   { f.items = append(f.items, item) }
func (f *intFIFO) Len() int        { return len(f.items) }
func (f *intFIFO) Pop() (item int) { item, f.items = f.items[0], f.items[1:]; return item }
