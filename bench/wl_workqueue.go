package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func init() {
	for _, p := range []int{1, 4, 16} {
		for _, dup := range []bool{false, true} {
			kind := "unique"
			if dup {
				kind = "duplicates"
			}
			register(workload{
				group: "workqueue",
				name:  fmt.Sprintf("AddGetDone/workers=%d/%s", p, kind),
				doc:   "p producers Add b.N items, p workers Get and Done them; unique items are all different (every Add queues one); with duplicates every producer cycles through the same 64 items from its own offset",
				run:   func(b *testing.B, impl *Impl) { benchAddGetDone(b, impl.NewQueue(), p, dup, 0) },
			})
			if dup && p <= 4 {
				register(workload{
					group: "workqueue",
					name:  fmt.Sprintf("AddGetDone/workers=%d/duplicates/work=2µs", p),
					doc:   "the same, with workers that spend 2µs on each item, as a cheap reconcile would: the workers fall behind and nearly every Add finds its item waiting",
					run:   func(b *testing.B, impl *Impl) { benchAddGetDone(b, impl.NewQueue(), p, dup, 2*time.Microsecond) },
				})
			}
			if p == 4 {
				register(workload{
					group: "workqueue",
					name:  fmt.Sprintf("AddGetDone/workers=%d/%s/metrics", p, kind),
					doc:   "the same with a named queue whose metrics go to a provider of atomic metrics",
					run:   func(b *testing.B, impl *Impl) { benchAddGetDone(b, impl.NewMeteredQueue(), p, dup, 0) },
				})
			}
		}
	}
	register(workload{
		group: "workqueue",
		name:  "AddGetDone/sequential",
		doc:   "one goroutine: Add, Get, Done of one item per op",
		run: func(b *testing.B, impl *Impl) {
			q := impl.NewQueue()
			defer q.ShutDown()
			b.ReportAllocs()
			for i := range b.N {
				q.Add(i)
				item, _ := q.Get()
				q.Done(item)
			}
		},
	})
	for _, k := range []int{2, 6, 20} {
		register(workload{
			group: "workqueue",
			name:  fmt.Sprintf("RepeatedAdds/k=%d", k),
			doc:   "one goroutine adds each of 1000 items k times in a row, then Gets and Dones them all; one op is one item",
			run:   func(b *testing.B, impl *Impl) { benchRepeatedAdds(b, impl.NewQueue(), k) },
		})
	}
	register(workload{
		group: "workqueue",
		name:  "DelayingAddAfter/drain100k",
		doc:   "AddAfter of 100k items with spread delays on a fake clock, step past them, Get+Done all",
		heavy: true,
		run:   benchAddAfterDrain,
	})
	register(workload{
		group: "workqueue",
		name:  "DelayingAddAfter/parallel",
		doc:   "AddAfter of new items from 4 goroutines; nothing becomes due",
		run:   benchAddAfterParallel,
	})
	register(workload{
		group: "workqueue",
		name:  "RateLimited/AddRateLimited+Forget",
		doc:   "AddRateLimited then Forget of one of 1000 keys per op, on a fake clock",
		run: func(b *testing.B, impl *Impl) {
			q := impl.NewRateLimitingQueue(testingclock.NewFakeClock(time.Now()))
			defer q.ShutDown()
			b.ReportAllocs()
			for i := range b.N {
				key := i % 1000
				q.AddRateLimited(key)
				q.Forget(key)
			}
		},
	})
}

// benchAddGetDone: one op is one Add. p producers share b.N adds; p workers Get, spend work
// on each item (spinning: a sleep would hand the CPU to the producers) and Done it, until the
// queue is shut down and empty.
func benchAddGetDone(b *testing.B, q Queue, p int, dup bool, work time.Duration) {
	var workers sync.WaitGroup
	var processed atomic.Int64
	for range p {
		workers.Go(func() {
			n := int64(0)
			defer func() { processed.Add(n) }()
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				n++
				if work > 0 {
					for start := time.Now(); time.Since(start) < work; {
					}
				}
				q.Done(item)
			}
		})
	}
	var producers sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for w := range p {
		producers.Go(func() {
			// Each producer counts its own adds: a shared counter would cost every add a
			// cache-line transfer, as much as an add that finds its item waiting, and the row
			// would time the counter more than the queue.
			share, first := b.N/p, w*(b.N/p)+min(w, b.N%p)
			if w < b.N%p {
				share++
			}
			for k := range share {
				if dup {
					q.Add((k + w*16) % 64)
				} else {
					q.Add(first + k + 1)
				}
			}
		})
	}
	producers.Wait()
	q.ShutDown()
	workers.Wait()
	cpu.report(b)
	// An Add that finds its item still queued is absorbed, so ns/op depends on how far the
	// producers got ahead of the workers, which scheduling decides from run to run. items/add
	// says how many Adds led to a Get; ns/item is the wall time per item processed.
	if n := processed.Load(); n > 0 {
		b.ReportMetric(float64(n)/float64(b.N), "items/add")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/item")
	}
}

// benchRepeatedAdds: an informer delivering an add and updates of the same objects before the
// workers get to them, from one goroutine.
func benchRepeatedAdds(b *testing.B, q Queue, k int) {
	defer q.ShutDown()
	const n = 1000
	b.ReportAllocs()
	for done := 0; done < b.N; done += n {
		batch := min(n, b.N-done)
		for i := range batch {
			for range k {
				q.Add(done + i)
			}
		}
		for range batch {
			item, _ := q.Get()
			q.Done(item)
		}
	}
}

func benchAddAfterDrain(b *testing.B, impl *Impl) {
	const n = 100_000
	delays := make([]time.Duration, n)
	x := uint64(1)
	for i := range delays {
		x = x*6364136223846793005 + 1442695040888963407
		delays[i] = time.Duration(x>>33)%(10*time.Minute) + 1
	}
	b.ReportAllocs()
	for range b.N {
		fc := testingclock.NewFakeClock(time.Now())
		q := impl.NewDelayingQueue(fc)
		for i, d := range delays {
			q.AddAfter(i, d)
		}
		fc.Step(11 * time.Minute)
		for range n {
			item, _ := q.Get()
			q.Done(item)
		}
		q.ShutDown()
	}
}

func benchAddAfterParallel(b *testing.B, impl *Impl) {
	fc := testingclock.NewFakeClock(time.Now())
	q := impl.NewDelayingQueue(fc)
	defer q.ShutDown()
	const producers = 4
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for range producers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				q.AddAfter(int(i), time.Minute+time.Duration(i%1000)*time.Second)
			}
		})
	}
	wg.Wait()
	cpu.report(b)
}
