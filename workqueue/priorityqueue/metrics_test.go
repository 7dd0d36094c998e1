package priorityqueue

import (
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

// fakeMetric records every update of one metric.
type fakeMetric struct {
	mu   sync.Mutex
	val  float64
	obs  []float64
	byPr map[int]float64
}

// v reads the value under the metric's lock.
func (m *fakeMetric) v() float64 { m.mu.Lock(); defer m.mu.Unlock(); return m.val }

func (m *fakeMetric) Inc()              { m.mu.Lock(); m.val++; m.mu.Unlock() }
func (m *fakeMetric) Dec()              { m.mu.Lock(); m.val--; m.mu.Unlock() }
func (m *fakeMetric) Set(v float64)     { m.mu.Lock(); m.val = v; m.mu.Unlock() }
func (m *fakeMetric) Observe(v float64) { m.mu.Lock(); m.obs = append(m.obs, v); m.mu.Unlock() }

type fakePriorityDepth struct{ m *fakeMetric }

func (d fakePriorityDepth) Inc(p int) { d.m.mu.Lock(); d.m.byPr[p]++; d.m.mu.Unlock() }
func (d fakePriorityDepth) Dec(p int) { d.m.mu.Lock(); d.m.byPr[p]--; d.m.mu.Unlock() }

type fakeProvider struct {
	depth, adds, latency, work, unfinished, longest, retries fakeMetric
}

func (p *fakeProvider) NewDepthMetric(string) workqueue.GaugeMetric            { return &p.depth }
func (p *fakeProvider) NewAddsMetric(string) workqueue.CounterMetric           { return &p.adds }
func (p *fakeProvider) NewLatencyMetric(string) workqueue.HistogramMetric      { return &p.latency }
func (p *fakeProvider) NewWorkDurationMetric(string) workqueue.HistogramMetric { return &p.work }
func (p *fakeProvider) NewRetriesMetric(string) workqueue.CounterMetric        { return &p.retries }
func (p *fakeProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return &p.unfinished
}
func (p *fakeProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return &p.longest
}

type fakePriorityProvider struct{ fakeProvider }

func (p *fakePriorityProvider) NewDepthMetricWithPriority(string) DepthMetricWithPriority {
	p.depth.byPr = map[int]float64{}
	return fakePriorityDepth{&p.depth}
}

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mp := &fakeProvider{}
		q := New("q", WithMetricsProvider[string](mp))
		defer q.ShutDown()
		q.Add("a")
		q.Add("a") // deduplicated: one add
		q.AddAfter("b", time.Second)
		if mp.depth.v() != 1 || mp.adds.v() != 1 || mp.retries.v() != 1 {
			t.Fatalf("depth %v adds %v retries %v, want 1 1 1 (a delayed item is not in depth)", mp.depth.v(), mp.adds.v(), mp.retries.v())
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if mp.depth.v() != 2 || mp.adds.v() != 2 {
			t.Fatalf("after the delay: depth %v adds %v, want 2 2", mp.depth.v(), mp.adds.v())
		}
		item, _ := q.Get() // a, ready for 2s
		if mp.depth.v() != 1 || len(mp.latency.obs) != 1 || mp.latency.obs[0] != 2 {
			t.Fatalf("after Get: depth %v latency %v, want 1 [2]", mp.depth.v(), mp.latency.obs)
		}
		time.Sleep(3 * time.Second)
		q.Add("c")
		other, _ := q.Get()
		if mp.longest.v() != 3 || mp.unfinished.v() != 3 {
			t.Fatalf("longest %v unfinished %v, want 3 3", mp.longest.v(), mp.unfinished.v())
		}
		q.Done(item)
		q.Done(other)
		if len(mp.work.obs) != 2 || mp.work.obs[0] != 3 || mp.work.obs[1] != 0 {
			t.Fatalf("work durations %v, want [3 0]", mp.work.obs)
		}
	})
}

func TestMetricsByPriority(t *testing.T) {
	mp := &fakePriorityProvider{}
	q := New("q", WithMetricsProvider[string](mp))
	defer q.ShutDown()
	q.AddWithOpts(AddOpts{Priority: prio(-1)}, "a", "b")
	q.AddWithOpts(AddOpts{Priority: prio(2)}, "b") // b moves from -1 to 2
	if got := mp.depth.byPr; got[-1] != 1 || got[2] != 1 {
		t.Fatalf("depth by priority %v, want -1:1 2:1", got)
	}
	_, _ = q.Get()
	if got := mp.depth.byPr; got[-1] != 1 || got[2] != 0 {
		t.Fatalf("depth by priority after Get %v, want -1:1 2:0", got)
	}
}

func TestUnnamedQueueRecordsNothing(t *testing.T) {
	mp := &fakeProvider{}
	q := New("", WithMetricsProvider[string](mp))
	defer q.ShutDown()
	q.Add("a")
	if mp.adds.v() != 0 || mp.depth.v() != 0 {
		t.Fatal("an unnamed queue recorded metrics")
	}
}

// TestGaugesMoveWhileWorkersAreStuck: every worker holds an item and never returns, so the
// queue gets no call at all; the unfinished-work and longest-running gauges must still
// advance with the clock, then go back to zero once the workers are done.
func TestGaugesMoveWhileWorkersAreStuck(t *testing.T) {
	cases := []struct {
		name         string
		waitingInGet bool // the workers block in Get before the items arrive
	}{
		{"items handed to blocked Gets", true},
		{"items taken by Get from a ready queue", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := clocktesting.NewFakeClock(time.Unix(1000, 0))
				mp := &fakeProvider{}
				q := New("q", WithMetricsProvider[string](mp), WithClock[string](fc)).(*queue[string])
				defer q.ShutDown()
				stuck := make(chan struct{})
				var wg sync.WaitGroup
				worker := func() {
					item, _ := q.Get()
					<-stuck
					q.Done(item)
				}
				if tc.waitingInGet {
					for range 3 {
						wg.Go(worker)
					}
					synctest.Wait()
				}
				q.AddWithOpts(AddOpts{}, "a", "b", "c")
				if !tc.waitingInGet {
					for range 3 {
						wg.Go(worker)
					}
				}
				for _, step := range []struct {
					by                  time.Duration
					unfinished, longest float64
				}{
					{time.Second, 3, 1},
					{time.Second, 6, 2},
					{time.Minute, 3 * 62, 62},
				} {
					synctest.Wait() // the workers are stuck and the timer is armed
					fc.Step(step.by)
					synctest.Wait()
					if u, l := mp.unfinished.v(), mp.longest.v(); u != step.unfinished || l != step.longest {
						t.Fatalf("at %v: unfinished %v longest %v, want %v %v", fc.Since(time.Unix(1000, 0)), u, l, step.unfinished, step.longest)
					}
				}
				close(stuck)
				wg.Wait()
				fc.Step(time.Second)
				synctest.Wait()
				if u, l := mp.unfinished.v(), mp.longest.v(); u != 0 || l != 0 {
					t.Fatalf("after the workers finished: unfinished %v longest %v, want 0 0", u, l)
				}
				q.mu.Lock()
				running := q.timerRunning
				q.mu.Unlock()
				if running {
					t.Fatal("the timer goroutine still runs with nothing processing")
				}
			})
		})
	}
}

// TestIdleQueueRunsNoGoroutine checks the goroutine budget with metrics on: once nothing is
// delayed or processing and the gauges are back to zero, the queue runs no goroutine.
func TestIdleQueueRunsNoGoroutine(t *testing.T) {
	cases := []struct {
		name string
		use  func(q PriorityQueue[string], fc *clocktesting.FakeClock)
	}{
		{"new", func(PriorityQueue[string], *clocktesting.FakeClock) {}},
		{"after processing items", func(q PriorityQueue[string], fc *clocktesting.FakeClock) {
			q.Add("a")
			item, _ := q.Get()
			waitForTimer(fc)
			fc.Step(2 * time.Second)
			waitForTimer(fc) // the gauges show a for 2s, and the timer is armed again
			q.Done(item)
			fc.Step(time.Second) // the gauges go back to zero
		}},
		{"after a delayed item became ready", func(q PriorityQueue[string], fc *clocktesting.FakeClock) {
			q.AddAfter("a", time.Second)
			waitForTimer(fc)
			fc.Step(time.Second)
			for q.Len() == 0 {
				runtime.Gosched() // the timer goroutine makes a ready
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			fc := clocktesting.NewFakeClock(time.Unix(1000, 0))
			q := New("q", WithMetricsProvider[string](&fakeProvider{}), WithClock[string](fc))
			defer q.ShutDown()
			tc.use(q, fc)
			goleak.VerifyNone(t, before)
		})
	}
}

// waitForTimer waits until the queue's timer goroutine has armed its timer on fc.
func waitForTimer(fc *clocktesting.FakeClock) {
	for !fc.HasWaiters() {
		runtime.Gosched()
	}
}
