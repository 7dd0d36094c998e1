// Package priorityqueue_test runs the same workloads against kcache's priority queue and
// controller-runtime's, sub-benchmark by sub-benchmark, so that one `go test -bench` run
// interleaves them (see README.md for the command and how the ratios are computed).
package priorityqueue_test

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	crpq "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/kcache/cache/workqueue/priorityqueue"
)

// pq is what the workloads use of a priority queue; both implementations are adapted to it.
type pq[K comparable] interface {
	add(key K, priority int)
	addAll(keys []K, priority int)
	addAfter(key K, after time.Duration)
	get() (K, bool)
	done(key K)
	len() int
	shutDown()
}

type kcacheQueue[K comparable] struct {
	q priorityqueue.PriorityQueue[K]
}

func (k kcacheQueue[K]) add(key K, p int) {
	k.q.AddWithOpts(priorityqueue.AddOpts{Priority: priorityPtr(p)}, key)
}
func (k kcacheQueue[K]) addAll(keys []K, p int) {
	k.q.AddWithOpts(priorityqueue.AddOpts{Priority: priorityPtr(p)}, keys...)
}
func (k kcacheQueue[K]) addAfter(key K, d time.Duration) { k.q.AddAfter(key, d) }
func (k kcacheQueue[K]) get() (K, bool)                  { return k.q.Get() }
func (k kcacheQueue[K]) done(key K)                      { k.q.Done(key) }
func (k kcacheQueue[K]) len() int                        { return k.q.Len() }
func (k kcacheQueue[K]) shutDown()                       { k.q.ShutDown() }

type crQueue[K comparable] struct{ q crpq.PriorityQueue[K] }

func (c crQueue[K]) add(key K, p int) {
	c.q.AddWithOpts(crpq.AddOpts{Priority: priorityPtr(p)}, key)
}
func (c crQueue[K]) addAll(keys []K, p int) {
	c.q.AddWithOpts(crpq.AddOpts{Priority: priorityPtr(p)}, keys...)
}
func (c crQueue[K]) addAfter(key K, d time.Duration) { c.q.AddAfter(key, d) }
func (c crQueue[K]) get() (K, bool)                  { return c.q.Get() }
func (c crQueue[K]) done(key K)                      { c.q.Done(key) }
func (c crQueue[K]) len() int                        { return c.q.Len() }
func (c crQueue[K]) shutDown()                       { c.q.ShutDown() }

type impl[K comparable] struct {
	name string
	new  func() pq[K]
}

// implsOf lists both queues for key type K. Both are unnamed, so neither records metrics:
// the comparison is of the queues.
func implsOf[K comparable]() []impl[K] {
	return []impl[K]{
		{"kcache", func() pq[K] { return kcacheQueue[K]{priorityqueue.New[K]("")} }},
		{"controller-runtime", func() pq[K] { return crQueue[K]{crpq.New[K]("")} }},
	}
}

var impls = implsOf[string]()

// priorities mixes three levels, as a controller with low-priority resyncs, normal changes
// and a few urgent items sees.
var priorities = [...]int{0, crpqLow, 0, 10, 0, crpqLow, 0}

const crpqLow = -100

// priorityPtrs holds one pointer per priority the workloads use, so that the adapters pass
// AddOpts.Priority without allocating for the benchmark's own sake.
var priorityPtrs = map[int]*int{}

func init() {
	for p := crpqLow; p <= 10; p++ {
		priorityPtrs[p] = &p
	}
}

func priorityPtr(p int) *int {
	pp := priorityPtrs[p]
	if pp == nil {
		panic("priorityPtr: no pointer for priority " + strconv.Itoa(p))
	}
	return pp
}

var keys = func() []string {
	k := make([]string, 1<<16)
	for i := range k {
		k[i] = "ns/item-" + strconv.Itoa(i)
	}
	return k
}()

// BenchmarkAddGetDone: each of W workers adds a key with a mixed priority, gets an item and
// marks it done, b.N times in all. One op = one add + get + done. Keys are distinct ints (a
// string key per op would make the run allocate for the benchmark's own sake, and repeated
// keys would deduplicate, leaving a worker's Get with nothing to take).
func BenchmarkAddGetDone(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		for _, impl := range implsOf[int]() {
			b.Run(fmt.Sprintf("workers=%d/impl=%s", workers, impl.name), func(b *testing.B) {
				q := impl.new()
				defer q.shutDown()
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N / workers
				for w := range workers {
					n := per
					if w == 0 {
						n += b.N % workers
					}
					wg.Go(func() {
						for i := range n {
							q.add(w*(per+workers)+i, priorities[i%len(priorities)])
							item, shutdown := q.get()
							if shutdown {
								panic("shutdown")
							}
							q.done(item)
						}
					})
				}
				wg.Wait()
			})
		}
	}
}

// BenchmarkAdd10kMixed: a new queue receives 10,000 distinct keys with mixed priorities,
// then one worker drains it. One op = 10k adds + 10k get/done.
func BenchmarkAdd10kMixed(b *testing.B) {
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.new()
				for i := range 10000 {
					q.add(keys[i], priorities[i%len(priorities)])
				}
				for range 10000 {
					item, _ := q.get()
					q.done(item)
				}
				q.shutDown()
			}
		})
	}
}

// BenchmarkBatch10kReused: one long-lived queue receives batches of 10,000 distinct keys,
// added 100 at a time with mixed priorities, each batch drained by one worker before the
// next, as a controller sees after every relist. One op = one batch (10k adds + 10k
// get/done). allocs/item is the heap allocations per item over the timed batches, after one
// batch that warms the queue up; adding slices keeps the caller's variadic argument out of it.
func BenchmarkBatch10kReused(b *testing.B) {
	const batch = 10000
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			q := impl.new()
			defer q.shutDown()
			run := func() {
				for i := 0; i < batch; i += 100 {
					q.addAll(keys[i:i+100], priorities[i/100%len(priorities)])
				}
				for range batch {
					item, _ := q.get()
					q.done(item)
				}
			}
			run()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run()
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.Mallocs-before)/float64(b.N*batch), "allocs/item")
		})
	}
}

// BenchmarkAdd10kDuplicates: 10,000 adds of 1,000 keys already queued, with rising
// priorities (dedup and priority raise), then a drain. One op = 10k adds + 1k get/done.
func BenchmarkAdd10kDuplicates(b *testing.B) {
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.new()
				for i := range 10000 {
					q.add(keys[i%1000], i/1000)
				}
				for q.len() > 0 {
					item, _ := q.get()
					q.done(item)
				}
				q.shutDown()
			}
		})
	}
}

// BenchmarkDelayedAdd10k: a new queue receives 10,000 distinct keys with delays spread over
// an hour (none becomes ready), then shuts down. One op = 10k delayed adds.
func BenchmarkDelayedAdd10k(b *testing.B) {
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.new()
				for i := range 10000 {
					q.addAfter(keys[i], time.Minute+time.Duration(i*7919%3600)*time.Second)
				}
				_ = q.len() // controller-runtime buffers adds; Len makes it take them in
				q.shutDown()
			}
		})
	}
}

// BenchmarkDelayedReady: 1,000 keys added with delays of 0–1ms, then taken as they become
// ready. One op = 1k delayed adds + 1k get/done; it includes up to 1ms of waiting.
func BenchmarkDelayedReady(b *testing.B) {
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.new()
				for i := range 1000 {
					q.addAfter(keys[i], time.Duration(i)*time.Microsecond)
				}
				for range 1000 {
					item, _ := q.get()
					q.done(item)
				}
				q.shutDown()
			}
		})
	}
}
