package workqueue

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentInvariants runs producers and workers on one queue with seeded random choices
// and checks what a controller relies on:
//   - no item is held by two workers at once;
//   - every item is processed after its last Add: some Get of it starts after the Add;
//   - nothing is lost by ShutDownWithDrain: every added item is processed, and the drain only
//     returns when no worker holds an item it took before the drain started.
func TestConcurrentInvariants(t *testing.T) {
	cases := []struct {
		producers, workers, keys, adds int
		reAdd                          int // percent of Gets after which the worker adds the item again
	}{
		{1, 1, 10, 2000, 0},
		{4, 4, 16, 2000, 10},
		{8, 3, 4, 2000, 30},
		{2, 16, 100, 2000, 5},
		{16, 16, 1000, 1000, 50},
	}
	for _, tc := range cases {
		for seed := range uint64(3) {
			for _, mode := range []string{"default", "custom-queue", "metrics"} {
				name := fmt.Sprintf("p%d-w%d-k%d-re%d/seed=%d/%s", tc.producers, tc.workers, tc.keys, tc.reAdd, seed, mode)
				t.Run(name, func(t *testing.T) {
					if mode != "metrics" {
						checkInvariants(t, newModeQueue(mode == "custom-queue"), seed, tc.producers, tc.workers, tc.keys, tc.adds, tc.reAdd)
						return
					}
					// Metric objects are called under the queue's lock: every item that became
					// dirty was taken once and finished once, and the depth is back to 0.
					rec := newRecorder()
					q := NewTypedWithConfig(TypedQueueConfig[int]{Name: "q", MetricsProvider: rec})
					checkInvariants(t, q, seed, tc.producers, tc.workers, tc.keys, tc.adds, tc.reAdd)
					adds := rec.value("adds/q")
					if depth := rec.value("depth/q"); depth != 0 {
						t.Errorf("depth = %v after the drain, want 0", depth)
					}
					if n := len(rec.observations("latency/q")); float64(n) != adds {
						t.Errorf("%d latency observations for %v adds", n, adds)
					}
					if n := len(rec.observations("work/q")); float64(n) != adds {
						t.Errorf("%d work-duration observations for %v adds", n, adds)
					}
				})
			}
		}
	}
}

// newModeQueue returns a default queue (FIFO), or one with a custom Queue when custom is set.
// Neither records metrics.
func newModeQueue(custom bool) *Typed[int] {
	if custom {
		return NewTypedWithConfig(TypedQueueConfig[int]{Queue: &intFIFO{}})
	}
	return NewTyped[int]()
}

func checkInvariants(t *testing.T, q *Typed[int], seed uint64, producers, workers, keys, adds, reAdd int) {
	var (
		clock     atomic.Int64 // orders events across goroutines
		held      = make([]atomic.Bool, keys)
		lastStart = make([]atomic.Int64, keys)
		holding   atomic.Int32
		errs      = make(chan error, producers+workers)
		logMu     sync.Mutex
		addLog    []addEvent
	)
	// add logs when the Add began and ended: a processing that starts after "began" must
	// follow, provided the Add ended before the shutdown began (later ones may be dropped).
	add := func(k int) {
		began := clock.Add(1)
		q.Add(k)
		ended := clock.Add(1)
		logMu.Lock()
		addLog = append(addLog, addEvent{k, began, ended})
		logMu.Unlock()
	}

	var workersWG sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(seed, uint64(1000+w)))
		workersWG.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				holding.Add(1)
				if !held[k].CompareAndSwap(false, true) {
					// Keep going, so that the drain below still ends.
					select {
					case errs <- fmt.Errorf("item %d handed to two workers", k):
					default:
					}
					holding.Add(-1)
					q.Done(k)
					continue
				}
				lastStart[k].Store(clock.Add(1))
				if rng.IntN(4) == 0 {
					runtime.Gosched()
				}
				if rng.IntN(100) < reAdd {
					add(k)
				}
				held[k].Store(false)
				holding.Add(-1)
				q.Done(k)
			}
		})
	}

	var producersWG sync.WaitGroup
	for p := range producers {
		rng := rand.New(rand.NewPCG(seed, uint64(p)))
		producersWG.Go(func() {
			for range adds {
				add(rng.IntN(keys))
				if rng.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	producersWG.Wait()
	// Workers still add items back; the drain waits for the ones being processed, and Get
	// hands out whatever is still queued until the queue is empty.
	select {
	case err := <-errs: // a broken queue may never drain: report what broke instead
		t.Fatal(err)
	default:
	}
	shutAt := clock.Add(1)
	q.ShutDownWithDrain()
	workersWG.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := holding.Load(); n != 0 {
		t.Fatalf("%d items still held after the workers stopped", n)
	}
	if n := q.Len(); n != 0 {
		t.Fatalf("%d items left in the queue", n)
	}
	lastAdd := make([]int64, keys)
	for _, e := range addLog {
		if e.ended < shutAt {
			lastAdd[e.key] = max(lastAdd[e.key], e.began)
		}
	}
	for k := range keys {
		if a, s := lastAdd[k], lastStart[k].Load(); a != 0 && s < a {
			t.Fatalf("item %d: last Add at %d, last processing started at %d", k, a, s)
		}
	}
}

type addEvent struct {
	key          int
	began, ended int64
}

// FuzzQueueModel runs a sequence of operations on one goroutine against a model of the
// queue's sets: an ordered list of waiting items, the dirty set and the processing set.
func FuzzQueueModel(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0, 0, 0, 16, 32, 48, 1, 17, 33})
	f.Add([]byte{0, 64, 16, 16, 32, 48, 80, 96, 5, 21})
	f.Fuzz(func(t *testing.T, ops []byte) {
		for _, locked := range []bool{false, true} {
			fuzzQueueModel(t, ops, locked)
		}
	})
}

func fuzzQueueModel(t *testing.T, ops []byte, locked bool) {
	q := newModeQueue(locked)
	defer q.ShutDown()
	var (
		waiting    []int
		dirty      = map[int]bool{}
		processing = map[int]bool{}
		down       bool
	)
	for i, op := range ops {
		item := int(op & 7)
		switch op >> 4 % 4 {
		case 0: // Add
			q.Add(item)
			if down || dirty[item] {
				break
			}
			dirty[item] = true
			if !processing[item] {
				waiting = append(waiting, item)
			}
		case 1: // Get, when it would not block
			if len(waiting) == 0 {
				if !down {
					break
				}
				if _, shutdown := q.Get(); !shutdown {
					t.Fatalf("op %d: Get on a drained, shut down queue returned an item", i)
				}
				break
			}
			got, shutdown := q.Get()
			want := waiting[0]
			waiting = waiting[1:]
			if shutdown || got != want {
				t.Fatalf("op %d: Get = %d, %v; want %d", i, got, shutdown, want)
			}
			delete(dirty, want)
			processing[want] = true
		case 2: // Done
			q.Done(item)
			if !processing[item] {
				break
			}
			delete(processing, item)
			if dirty[item] {
				waiting = append(waiting, item)
			}
		case 3:
			if op&8 != 0 {
				q.ShutDown()
				down = true
			}
		}
		if got := q.Len(); got != len(waiting) {
			t.Fatalf("op %d: Len = %d, want %d", i, got, len(waiting))
		}
		if q.ShuttingDown() != down {
			t.Fatalf("op %d: ShuttingDown = %v", i, !down)
		}
	}
}

// TestAddRacingShutDown: Adds that race with ShutDown either queue their item, which Get then
// hands out, or drop it, leaving nothing marked dirty that is not queued.
func TestAddRacingShutDown(t *testing.T) {
	for _, locked := range []bool{false, true} {
		t.Run(fmt.Sprintf("locked=%v", locked), func(t *testing.T) {
			for round := range 20 {
				q := newModeQueue(locked)
				var producers sync.WaitGroup
				for p := range 4 {
					producers.Go(func() {
						for i := range 500 {
							q.Add(p*1000 + i)
						}
					})
				}
				if round%2 == 0 {
					runtime.Gosched()
				}
				q.ShutDown()
				producers.Wait()
				got := 0
				for {
					item, shutdown := q.Get()
					if shutdown {
						break
					}
					got++
					q.Done(item)
				}
				q.mu.Lock()
				if n := len(q.items); n != 0 {
					t.Fatalf("round %d: %d item states still held after %d items were handed out and done", round, n, got)
				}
				q.mu.Unlock()
			}
		})
	}
}
