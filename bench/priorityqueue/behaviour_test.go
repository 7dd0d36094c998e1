package priorityqueue_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	crpq "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/kcache/cache/workqueue"
	"github.com/kcache/cache/workqueue/priorityqueue"
)

// The behaviour runs put both queues through the same scenario inside a synctest bubble
// (fake time, so minutes of load take milliseconds) and log what each does. They assert
// kcache's documented guarantees only; controller-runtime's results are for the record.

// TestStarvationRun: 4 workers take items for 10 minutes of steady load in which a producer
// adds a higher-priority item for every one handed out, a quarter of them keys being
// processed (re-adds while held). 100 low-priority items wait from the start.
func TestStarvationRun(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := impl.new()
				start := time.Now()
				for i := range 100 {
					q.add(fmt.Sprintf("low-%d", i), crpqLow)
				}
				var mu sync.Mutex
				lowDone, handouts := 0, 0
				var lastLow time.Duration
				next := 0
				var wg sync.WaitGroup
				for w := range 4 {
					wg.Go(func() {
						for time.Since(start) < 10*time.Minute {
							mu.Lock()
							next++
							n := next
							mu.Unlock()
							if n%4 == 0 {
								q.add(fmt.Sprintf("w%d", w), 10) // the key this worker handles
							} else {
								q.add(fmt.Sprintf("hi-%d", n), []int{0, 10}[n%2])
							}
							item, shutdown := q.get()
							if shutdown {
								return
							}
							time.Sleep(10 * time.Millisecond)
							mu.Lock()
							handouts++
							if len(item) > 4 && item[:4] == "low-" {
								lowDone++
								lastLow = time.Since(start)
							}
							mu.Unlock()
							q.done(item)
						}
					})
				}
				wg.Wait()
				q.shutDown()
				t.Logf("%d of 100 low-priority items handed out in %d handouts (the last at %v)", lowDone, handouts, lastLow)
				if impl.name == "kcache" && lowDone != 100 {
					t.Errorf("kcache handed out %d of 100 low-priority items", lowDone)
				}
			})
		})
	}
}

// TestDrainRun: 100 ready items, 4 workers, ShutDownWithDrain once the workers are busy.
// Counts the items processed and whether ShutDownWithDrain waited for the workers.
func TestDrainRun(t *testing.T) {
	type drainer interface{ ShutDownWithDrain() }
	queues := []struct {
		name string
		new  func() (pq[string], drainer)
	}{
		{"kcache", func() (pq[string], drainer) {
			q := priorityqueue.New[string]("")
			return kcacheQueue[string]{q}, q
		}},
		{"controller-runtime", func() (pq[string], drainer) {
			q := crpq.New[string]("")
			return crQueue[string]{q}, q
		}},
	}
	for _, impl := range queues {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q, d := impl.new()
				for i := range 100 {
					q.add(fmt.Sprintf("item-%d", i), 0)
				}
				var mu sync.Mutex
				processed, inFlight := 0, 0
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for {
							item, shutdown := q.get()
							if shutdown {
								return
							}
							mu.Lock()
							inFlight++
							mu.Unlock()
							time.Sleep(10 * time.Millisecond)
							mu.Lock()
							inFlight--
							processed++
							mu.Unlock()
							q.done(item)
						}
					})
				}
				time.Sleep(time.Millisecond) // the workers hold their first items
				d.ShutDownWithDrain()
				mu.Lock()
				atReturn := inFlight
				mu.Unlock()
				wg.Wait() // no ShutDown after: controller-runtime's panics when called twice
				t.Logf("%d of 100 items processed; %d still in flight when ShutDownWithDrain returned", processed, atReturn)
				if impl.name == "kcache" && (processed != 100 || atReturn != 0) {
					t.Errorf("kcache: %d processed, %d in flight at return; want 100, 0", processed, atReturn)
				}
			})
		})
	}
}

// TestIdleGoroutines counts the goroutines a queue with metrics runs: new, while a worker
// holds an item, and idle again after items were delayed, processed and done.
func TestIdleGoroutines(t *testing.T) {
	for _, impl := range []struct {
		name string
		new  func() pq[string]
	}{
		{"kcache", func() pq[string] {
			return kcacheQueue[string]{priorityqueue.New("idle", priorityqueue.WithMetricsProvider[string](nopMetrics{}))}
		}},
		{"controller-runtime", func() pq[string] { return crQueue[string]{crpq.New[string]("idle")} }},
	} {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := runtime.NumGoroutine()
				q := impl.new()
				synctest.Wait()
				fresh := runtime.NumGoroutine() - base
				q.addAfter("a", time.Second)
				q.add("b", 0)
				during := 0
				for range 2 {
					item, _ := q.get()
					time.Sleep(2 * time.Second)
					synctest.Wait()
					during = max(during, runtime.NumGoroutine()-base)
					q.done(item)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				idle := runtime.NumGoroutine() - base
				q.shutDown()
				t.Logf("goroutines: %d when new, %d while an item is held, %d idle after use", fresh, during, idle)
				if impl.name == "kcache" && (fresh != 0 || during > 1 || idle != 0) {
					t.Errorf("kcache runs %d goroutines when new, %d while busy, %d when idle; want 0, at most 1, 0", fresh, during, idle)
				}
			})
		})
	}
}

// nopMetrics is a metrics provider that records nothing, so that the queue runs its
// metrics machinery without a registry.
type nopMetrics struct{}

type nopMetric struct{}

func (nopMetric) Inc()            {}
func (nopMetric) Dec()            {}
func (nopMetric) Set(float64)     {}
func (nopMetric) Observe(float64) {}

func (nopMetrics) NewDepthMetric(string) workqueue.GaugeMetric            { return nopMetric{} }
func (nopMetrics) NewAddsMetric(string) workqueue.CounterMetric           { return nopMetric{} }
func (nopMetrics) NewLatencyMetric(string) workqueue.HistogramMetric      { return nopMetric{} }
func (nopMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric { return nopMetric{} }
func (nopMetrics) NewRetriesMetric(string) workqueue.CounterMetric        { return nopMetric{} }
func (nopMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return nopMetric{}
}
func (nopMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return nopMetric{}
}
