package workqueue_test

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

var start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// gauges is an ExtendedMetricsProvider that keeps the last value of every gauge and counter,
// keyed by "<metric>/<queue name>".
type gauges struct {
	mu     sync.Mutex
	values map[string]float64
}

func newGauges() *gauges { return &gauges{values: map[string]float64{}} }

type gauge struct {
	g   *gauges
	key string
}

func (m gauge) Inc()            { m.add(1) }
func (m gauge) Dec()            { m.add(-1) }
func (m gauge) Observe(float64) {}
func (m gauge) Set(v float64)   { m.g.mu.Lock(); m.g.values[m.key] = v; m.g.mu.Unlock() }
func (m gauge) add(d float64)   { m.g.mu.Lock(); m.g.values[m.key] += d; m.g.mu.Unlock() }

func (g *gauges) metric(kind, name string) gauge {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.values[kind+"/"+name] += 0
	return gauge{g, kind + "/" + name}
}

func (g *gauges) value(key string) (float64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.values[key]
	return v, ok
}

func (g *gauges) NewDepthMetric(n string) workqueue.GaugeMetric       { return g.metric("depth", n) }
func (g *gauges) NewAddsMetric(n string) workqueue.CounterMetric      { return g.metric("adds", n) }
func (g *gauges) NewLatencyMetric(n string) workqueue.HistogramMetric { return g.metric("latency", n) }
func (g *gauges) NewRetriesMetric(n string) workqueue.CounterMetric   { return g.metric("retries", n) }
func (g *gauges) NewWorkDurationMetric(n string) workqueue.HistogramMetric {
	return g.metric("work", n)
}
func (g *gauges) NewUnfinishedWorkSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return g.metric("unfinished", n)
}
func (g *gauges) NewLongestRunningProcessorSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return g.metric("longest", n)
}
func (g *gauges) NewOldestWaitingSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return g.metric("oldest", n)
}

var _ workqueue.ExtendedMetricsProvider = (*gauges)(nil)

// find returns the status of the live queue called name.
func find(t *testing.T, name string) (workqueue.QueueStatus, bool) {
	t.Helper()
	for _, s := range workqueue.Queues() {
		if s.Name == name {
			return s, true
		}
	}
	return workqueue.QueueStatus{}, false
}

func newControllerQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
}

// splitSuffix splits "base-N" into base and N, and "base" into base and 1.
func splitSuffix(name, base string) (int, bool) {
	if name == base {
		return 1, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, base+"-"))
	return n, err == nil && strings.HasPrefix(name, base+"-")
}

func TestDefaultQueueNames(t *testing.T) {
	plain := workqueue.NewTyped[int]()
	defer plain.ShutDown()
	a, b := newControllerQueue(), newControllerQueue()
	defer a.ShutDown()
	defer b.ShutDown()
	named := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: "mine"})
	defer named.ShutDown()

	byName := map[string]workqueue.QueueStatus{}
	var plainName string
	var suffixes []int
	for _, s := range workqueue.Queues() {
		byName[s.Name] = s
		if _, ok := splitSuffix(s.Name, "workqueue_test.TestDefaultQueueNames"); ok {
			plainName = s.Name
		}
		if n, ok := splitSuffix(s.Name, "workqueue_test.newControllerQueue"); ok {
			suffixes = append(suffixes, n)
		}
	}
	if plainName == "" || byName[plainName].Named {
		t.Errorf("no unnamed queue named after the test function in %v", byName)
	}
	if len(suffixes) != 2 || suffixes[1] != suffixes[0]+1 {
		t.Errorf("the two queues of newControllerQueue have suffixes %v, want n and n+1", suffixes)
	}
	if s, ok := byName["mine"]; !ok || !s.Named {
		t.Errorf("named queue: %+v, %v", s, ok)
	}
}

func TestQueuesSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(start)
		step := func(d time.Duration) {
			synctest.Wait()
			fc.Step(d)
			synctest.Wait()
		}
		g := newGauges()
		q := workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "snap", MetricsProvider: g, Clock: fc})
		defer q.ShutDown()

		q.Add("a")
		q.Add("b")
		q.Add("b") // already waiting: not an add
		step(2 * time.Second)
		q.Add("c")
		if item, _ := q.Get(); item != "a" {
			t.Fatalf("Get = %q", item)
		}
		step(3 * time.Second)
		q.AddAfter("d", 10*time.Second)
		q.AddRateLimited("e") // 1s
		synctest.Wait()

		got, ok := find(t, "snap")
		want := workqueue.QueueStatus{
			Name: "snap", Named: true,
			Depth: 2, Adds: 3, Processing: 1, Retries: 2, Delayed: 2,
			Timed: true, UnfinishedWork: 3 * time.Second, LongestRunning: 3 * time.Second,
			OldestWaiting: 5 * time.Second, // b, added at the start
		}
		if !ok || got != want {
			t.Fatalf("status:\n got %+v\nwant %+v", got, want)
		}
		if v, _ := g.value("oldest/snap"); v != 5 {
			t.Errorf("oldest-waiting gauge = %v, want 5", v)
		}

		q.Done("a")
		for range 2 {
			item, _ := q.Get()
			q.Done(item)
		}
		step(time.Second) // e is due
		got, _ = find(t, "snap")
		if got.Depth != 1 || got.Delayed != 1 || got.OldestWaiting != 0 || got.Processing != 0 {
			t.Errorf("after the drain and e's delay: %+v", got)
		}
		if v, _ := g.value("oldest/snap"); v != 0 {
			t.Errorf("oldest-waiting gauge = %v, want 0 (e was just added)", v)
		}
	})
}

func TestQueuesUnmeasured(t *testing.T) {
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[int]{Name: "plain"})
	defer q.ShutDown()
	q.Add(1)
	q.AddAfter(2, time.Hour)
	got, _ := find(t, "plain")
	want := workqueue.QueueStatus{Name: "plain", Named: true, Depth: 1, Adds: 1, Retries: 1, Delayed: 1}
	if got != want {
		t.Fatalf("status:\n got %+v\nwant %+v", got, want)
	}
}

func TestExtendedProviderMeasuresUnnamedQueues(t *testing.T) {
	g := newGauges()
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{MetricsProvider: g})
	q.Add(1)
	q.ShutDown()
	var name string
	for key := range g.values {
		if strings.HasPrefix(key, "adds/") {
			name = strings.TrimPrefix(key, "adds/")
		}
	}
	if _, ok := splitSuffix(name, "workqueue_test.TestExtendedProviderMeasuresUnnamedQueues"); !ok {
		t.Fatalf("metrics recorded under %q, want the default name", name)
	}
	if v, _ := g.value("adds/" + name); v != 1 {
		t.Errorf("adds = %v, want 1", v)
	}
}

func TestQueuesAfterShutDown(t *testing.T) {
	for _, drain := range []bool{false, true} {
		q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[int](),
			workqueue.TypedRateLimitingQueueConfig[int]{Name: "gone"})
		if _, ok := find(t, "gone"); !ok {
			t.Fatal("a live queue is missing")
		}
		if drain {
			q.ShutDownWithDrain()
		} else {
			q.ShutDown()
		}
		if s, ok := find(t, "gone"); ok {
			t.Fatalf("drain=%v: a shut-down queue is listed: %+v", drain, s)
		}
	}
}

//go:noinline
func dropQueue() {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: "dropped"})
	q.Add(1)
}

// TestQueuesDoesNotKeepQueuesAlive: a queue that nothing references any more is collected and
// leaves the registry, without a ShutDown.
func TestQueuesDoesNotKeepQueuesAlive(t *testing.T) {
	dropQueue()
	for range 10 {
		runtime.GC()
		if _, ok := find(t, "dropped"); !ok {
			return
		}
	}
	t.Fatal("a dropped queue is still listed after 10 collections")
}
