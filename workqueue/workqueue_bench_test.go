package workqueue_test

// These benchmarks use only API that client-go's util/workqueue also has, so the same file
// runs against it by changing the import path.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

// cpuMeter reports the process's CPU time per op as "cpu-ns/op" next to the wall time. On a
// shared machine wall time also counts other processes; CPU time counts only this one.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	t, ok := processCPUTime()
	return cpuMeter{t, ok}
}

func (m cpuMeter) report(b *testing.B) {
	if end, ok := processCPUTime(); ok && m.ok && b.N > 0 {
		b.ReportMetric(float64(end-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkAddGetDone: one op is one Add. p producers share b.N adds and p workers Get and
// Done until the queue is shut down and empty. "unique" cycles through 65536 items, so an add
// finds its item already queued only when the backlog reaches that (and the backlog, hence
// the memory touched, stays bounded); in "duplicates" every producer cycles through the same
// 64 items, each from its own offset, so most adds find the item already queued or being
// processed.
func BenchmarkAddGetDone(b *testing.B) {
	for _, p := range []int{1, 4, 16} {
		for _, dup := range []bool{false, true} {
			name := fmt.Sprintf("producers=%d,workers=%d,unique", p, p)
			if dup {
				name = fmt.Sprintf("producers=%d,workers=%d,duplicates", p, p)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				q := workqueue.NewTyped[int]()
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
							q.Done(item)
						}
					})
				}
				var producers sync.WaitGroup
				b.ResetTimer()
				cpu := startCPU()
				for w := range p {
					producers.Go(func() {
						for k := range producerShare(b.N, p, w) {
							if dup {
								q.Add((k + w*16) % 64)
							} else {
								q.Add((k*p + w) % (1 << 16))
							}
						}
					})
				}
				producers.Wait()
				q.ShutDown()
				workers.Wait()
				cpu.report(b)
				reportItems(b, processed.Load())
			})
		}
	}
}

// reportItems reports how many items the workers processed per Add (below 1 when Adds found
// their item still queued) and the wall time per item processed. With duplicates, ns/op
// depends on how far the producers got ahead of the workers: a queue whose workers keep up
// absorbs fewer Adds, so each costs more, while every item is processed sooner. Read ns/op
// with items/add.
func reportItems(b *testing.B, processed int64) {
	if processed > 0 {
		b.ReportMetric(float64(processed)/float64(b.N), "items/add")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(processed), "ns/item")
	}
}

// producerShare is how many of n adds producer w of p makes. Each producer counts its own:
// a shared counter would cost every add a cache-line transfer of its own, about as much as an
// add that finds its item waiting, and measure the harness instead of the queue.
func producerShare(n, p, w int) int {
	share := n / p
	if w < n%p {
		share++
	}
	return share
}

// BenchmarkAddGetDoneSequential: one goroutine adds, gets and finishes one item per op.
func BenchmarkAddGetDoneSequential(b *testing.B) {
	b.ReportAllocs()
	q := workqueue.NewTyped[int]()
	defer q.ShutDown()
	for i := range b.N {
		q.Add(i)
		item, _ := q.Get()
		q.Done(item)
	}
}

// BenchmarkBacklog: one goroutine adds n different items, then gets and finishes them all, as
// a controller's queue does when it starts over n objects. One op is one item; the cost per
// item grows with n as the queue's sets outgrow the CPU caches.
func BenchmarkBacklog(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 16, 1 << 20} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) { fillAndDrain(b, n, 1) })
	}
}

// BenchmarkQueueMemory: the live heap a queue of 100k items takes per item, while they all
// wait (waiting-B/item) and while workers hold them all, between Get and Done (held-B/item),
// with int and string keys. The keys themselves are made beforehand and not counted.
func BenchmarkQueueMemory(b *testing.B) {
	const n = 100_000
	ints := make([]int, n)
	strs := make([]string, n)
	for i := range n {
		ints[i] = i
		strs[i] = fmt.Sprintf("namespace-%d/object-%d", i%100, i)
	}
	b.Run("int", func(b *testing.B) { queueMemory(b, ints) })
	b.Run("string", func(b *testing.B) { queueMemory(b, strs) })
}

func queueMemory[T comparable](b *testing.B, items []T) {
	live := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc)
	}
	var waiting, held float64
	for range b.N {
		base := live()
		q := workqueue.NewTyped[T]()
		for _, item := range items {
			q.Add(item)
		}
		waiting += live() - base
		for range items {
			if _, shutdown := q.Get(); shutdown {
				b.Fatal("queue shut down")
			}
		}
		held += live() - base
		for _, item := range items {
			q.Done(item)
		}
		q.ShutDown()
	}
	b.ReportMetric(waiting/float64(b.N)/float64(len(items)), "waiting-B/item")
	b.ReportMetric(held/float64(b.N)/float64(len(items)), "held-B/item")
}

// BenchmarkRepeatedAdds: one goroutine adds each of 1000 items k times in a row, then gets and
// finishes them all: an informer delivering an add and updates of the same objects before the
// workers get to them. One op is one item.
func BenchmarkRepeatedAdds(b *testing.B) {
	for _, k := range []int{2, 6, 20} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) { fillAndDrain(b, 1000, k) })
	}
}

// fillAndDrain adds batches of n different items, each k times in a row, and after each batch
// gets and finishes them all, from one goroutine. One op is one item.
func fillAndDrain(b *testing.B, n, k int) {
	b.ReportAllocs()
	q := workqueue.NewTyped[int]()
	defer q.ShutDown()
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

// BenchmarkAbsorbedAdd: one goroutine adds items that are already waiting.
func BenchmarkAbsorbedAdd(b *testing.B) {
	q := workqueue.NewTyped[int]()
	defer q.ShutDown()
	for i := range 64 {
		q.Add(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		q.Add(i & 63)
	}
}

// BenchmarkAddAfterDrain: one op adds 100k items with random delays up to 10 minutes on a fake
// clock, steps the clock past them all and takes every item out.
func BenchmarkAddAfterDrain(b *testing.B) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	delays := make([]time.Duration, n)
	for i := range delays {
		delays[i] = time.Duration(rng.Int64N(int64(10*time.Minute))) + 1
	}
	b.ReportAllocs()
	for range b.N {
		fc := testingclock.NewFakeClock(time.Now())
		q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[int]{Clock: fc})
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

// BenchmarkAddAfterParallel: every op is an AddAfter of a new item from GOMAXPROCS goroutines;
// the items never become due.
func BenchmarkAddAfterParallel(b *testing.B) {
	fc := testingclock.NewFakeClock(time.Now())
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[int]{Clock: fc})
	defer q.ShutDown()
	var ids atomic.Int64
	b.ReportAllocs()
	cpu := startCPU()
	b.RunParallel(func(pb *testing.PB) {
		base := int(ids.Add(1)) << 40
		i := 0
		for pb.Next() {
			i++
			q.AddAfter(base+i, time.Minute+time.Duration(i%1000)*time.Second)
		}
	})
	cpu.report(b)
}

// BenchmarkAddRateLimitedForget: one op is AddRateLimited then Forget of one of 1000 keys on
// a fake clock, the usual failure-then-success cycle minus the processing.
func BenchmarkAddRateLimitedForget(b *testing.B) {
	newQueue := func() workqueue.TypedRateLimitingInterface[int] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, 1000*time.Second),
			workqueue.TypedRateLimitingQueueConfig[int]{Clock: testingclock.NewFakeClock(time.Now())})
	}
	b.Run("serial", func(b *testing.B) {
		q := newQueue()
		defer q.ShutDown()
		b.ReportAllocs()
		for i := range b.N {
			key := i % 1000
			q.AddRateLimited(key)
			q.Forget(key)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		q := newQueue()
		defer q.ShutDown()
		var ids atomic.Int64
		b.ReportAllocs()
		cpu := startCPU()
		b.RunParallel(func(pb *testing.PB) {
			base := int(ids.Add(1)) * 1000
			i := 0
			for pb.Next() {
				key := base + i%1000
				i++
				q.AddRateLimited(key)
				q.Forget(key)
			}
		})
		cpu.report(b)
	})
}

// BenchmarkParallelizeUntil: one op splits a batch of small pieces over 10 workers.
func BenchmarkParallelizeUntil(b *testing.B) {
	cases := []struct{ pieces, workers, chunk int }{
		{1000, 10, 1},
		{1000, 10, 10},
		{1000, 10, 100},
		{999, 10, 13},
	}
	for _, tc := range cases {
		b.Run(fmt.Sprintf("pieces=%d,workers=%d,chunk=%d", tc.pieces, tc.workers, tc.chunk), func(b *testing.B) {
			b.ReportAllocs()
			out := make([]int, tc.pieces)
			for range b.N {
				workqueue.ParallelizeUntil(context.Background(), tc.workers, tc.pieces, func(p int) {
					x := p
					for range 100 {
						x = x*31 + 7
					}
					out[p] = x
				}, workqueue.WithChunkSize(tc.chunk))
			}
		})
	}
}
