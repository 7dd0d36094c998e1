package workqueue

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// recorder is a MetricsProvider that keeps every value, keyed by "<metric>/<queue name>".
type recorder struct {
	mu      sync.Mutex
	values  map[string]float64
	obs     map[string][]float64
	weights []string // "key:value×count" of each weighted observation
}

func newRecorder() *recorder {
	return &recorder{values: map[string]float64{}, obs: map[string][]float64{}}
}

type recMetric struct {
	r   *recorder
	key string
}

func (m recMetric) Inc() { m.add(1) }
func (m recMetric) Dec() { m.add(-1) }
func (m recMetric) add(d float64) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	m.r.values[m.key] += d
}
func (m recMetric) Set(v float64) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	m.r.values[m.key] = v
}
func (m recMetric) Observe(v float64) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	m.r.obs[m.key] = append(m.r.obs[m.key], v)
}

func (r *recorder) metric(kind, name string) recMetric {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := kind + "/" + name
	r.values[key] += 0 // record the creation
	return recMetric{r, key}
}

func (r *recorder) NewDepthMetric(name string) GaugeMetric       { return r.metric("depth", name) }
func (r *recorder) NewAddsMetric(name string) CounterMetric      { return r.metric("adds", name) }
func (r *recorder) NewLatencyMetric(name string) HistogramMetric { return r.metric("latency", name) }
func (r *recorder) NewWorkDurationMetric(name string) HistogramMetric {
	return r.metric("work", name)
}
func (r *recorder) NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric {
	return r.metric("unfinished", name)
}
func (r *recorder) NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric {
	return r.metric("longest", name)
}
func (r *recorder) NewRetriesMetric(name string) CounterMetric { return r.metric("retries", name) }

func (r *recorder) value(key string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.values[key]
}

func (r *recorder) observations(key string) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.obs[key])
}

func (r *recorder) created() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.values)
}

// stringFIFO is a custom Queue, which puts the queue in locked mode (every operation under the
// queue's lock, the item state and metrics bookkeeping included).
type stringFIFO struct{ items []string }

func (f *stringFIFO) Touch(string)       {}
func (f *stringFIFO) Push(item string)   { f.items = append(f.items, item) }
func (f *stringFIFO) Len() int           { return len(f.items) }
func (f *stringFIFO) Pop() (item string) { item, f.items = f.items[0], f.items[1:]; return item }

func TestQueueMetrics(t *testing.T) {
	t.Run("default queue", func(t *testing.T) { testQueueMetrics(t, nil) })
	t.Run("custom queue", func(t *testing.T) { testQueueMetrics(t, &stringFIFO{}) })
}

func testQueueMetrics(t *testing.T, custom Queue[string]) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		fc := testingclock.NewFakeClock(t0)
		q := NewTypedWithConfig(TypedQueueConfig[string]{Name: "q", MetricsProvider: rec, Clock: fc, Queue: custom})
		defer q.ShutDown()
		step := func(d time.Duration) {
			synctest.Wait()
			fc.Step(d)
			synctest.Wait()
		}
		check := func(what string, key string, want float64) {
			t.Helper()
			if got := rec.value(key); math.Abs(got-want) > 1e-9 {
				t.Fatalf("%s: %s = %v, want %v", what, key, got, want)
			}
		}
		checkObs := func(what string, key string, want ...float64) {
			t.Helper()
			if got := rec.observations(key); !slices.Equal(got, want) {
				t.Fatalf("%s: %s observed %v, want %v", what, key, got, want)
			}
		}

		q.Add("a")
		q.Add("b")
		q.Add("a") // deduplicated: not counted
		check("two adds", "adds/q", 2)
		check("two adds", "depth/q", 2)

		step(time.Second)
		q.Get() // a waited 1s
		check("one get", "depth/q", 1)
		checkObs("one get", "latency/q", 1)

		step(2 * time.Second)
		q.Get() // b waited 3s
		checkObs("two gets", "latency/q", 1, 3)
		// Refreshed on the ticker: a has run 2s, b 0s.
		check("unfinished", "unfinished/q", 2)
		check("longest", "longest/q", 2)

		q.Add("a") // while a is processing: counted, queued at Done
		check("re-add", "adds/q", 3)
		check("re-add", "depth/q", 1)

		step(time.Second)
		check("unfinished after 1s", "unfinished/q", 3+1)
		check("longest after 1s", "longest/q", 3)
		q.Done("a")
		checkObs("done a", "work/q", 3)
		step(500 * time.Millisecond)
		check("unfinished after done", "unfinished/q", 1.5)
		check("longest after done", "longest/q", 1.5)

		q.Get() // a again, waited since its re-add 1.5s ago
		checkObs("a again", "latency/q", 1, 3, 1.5)
		q.Done("a")
		q.Done("b")
		q.Done("b") // ignored: not processing
		checkObs("all done", "work/q", 3, 0, 1.5)
		step(500 * time.Millisecond)
		check("idle", "unfinished/q", 0)
		check("idle", "longest/q", 0)
		check("idle", "depth/q", 0)

		// ShutDown stops the metrics goroutine: synctest.Test fails if it is left blocked.
		// (The fake clock's ticker cannot be unregistered, so HasWaiters cannot tell.)
		q.Add("z")
		q.Get()
		step(500 * time.Millisecond)
		check("before shutdown", "longest/q", 0.5)
		q.ShutDown()
		step(time.Second)
		check("no updates after shutdown", "longest/q", 0.5)
		q.Done("z")
	})
}

func TestNoMetrics(t *testing.T) {
	cases := []struct {
		name  string
		build func(rec *recorder, c *testingclock.FakeClock) TypedInterface[string]
	}{
		{"unnamed queue", func(rec *recorder, c *testingclock.FakeClock) TypedInterface[string] {
			return NewTypedWithConfig(TypedQueueConfig[string]{MetricsProvider: rec, Clock: c})
		}},
		{"unnamed delaying queue", func(rec *recorder, c *testingclock.FakeClock) TypedInterface[string] {
			q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{MetricsProvider: rec, Clock: c})
			q.AddAfter("x", 0)
			return q
		}},
		{"named queue, default provider", func(rec *recorder, c *testingclock.FakeClock) TypedInterface[string] {
			return NewTypedWithConfig(TypedQueueConfig[string]{Name: "q", Clock: c})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			fc := testingclock.NewFakeClock(t0)
			q := tc.build(rec, fc)
			q.Add("a")
			q.Get()
			q.Done("a")
			if fc.HasWaiters() {
				t.Fatal("a metrics ticker was started")
			}
			q.ShutDown()
			if n := rec.created(); n != 0 {
				t.Fatalf("%d metrics created", n)
			}
		})
	}
}

func TestRetriesMetric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		fc := testingclock.NewFakeClock(t0)
		q := NewTypedRateLimitingQueueWithConfig(NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Hour),
			TypedRateLimitingQueueConfig[string]{Name: "rl", MetricsProvider: rec, Clock: fc})
		q.AddAfter("a", 0)
		q.AddAfter("a", time.Second)
		q.AddRateLimited("b")
		q.Add("c") // not a retry
		if got := rec.value("retries/rl"); got != 3 {
			t.Fatalf("retries = %v, want 3", got)
		}
		if got := rec.value("adds/rl"); got != 2 {
			t.Fatalf("adds = %v, want 2 (a and c)", got)
		}
		q.ShutDown()
		q.AddAfter("a", time.Second)
		if got := rec.value("retries/rl"); got != 3 {
			t.Fatalf("retries after shutdown = %v, want 3", got)
		}
	})
}

func TestSetProvider(t *testing.T) {
	reset := func() {
		providerMu.Lock()
		provider, providerSet = noopMetricsProvider{}, false
		providerMu.Unlock()
	}
	reset()
	t.Cleanup(reset)

	cases := []struct {
		name      string
		providers []MetricsProvider // passed to SetProvider in order; the first wins
		wantFirst bool              // whether the first provider gets the metrics
	}{
		{"first call wins", []MetricsProvider{newRecorder(), newRecorder()}, true},
		{"nil keeps recording nothing", []MetricsProvider{nil, newRecorder()}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			for _, p := range tc.providers {
				SetProvider(p)
			}
			q := NewNamed("global")
			q.Add("a")
			q.ShutDown()
			for i, p := range tc.providers {
				rec, _ := p.(*recorder)
				if rec == nil {
					continue
				}
				got := rec.value("adds/global")
				if want := i == 0 && tc.wantFirst; (got == 1) != want {
					t.Fatalf("provider %d recorded adds = %v", i, got)
				}
			}
		})
	}
}

// plainProvider's metrics are plain fields with no lock, as a provider may make them: the
// queue promises to call them one at a time, and the race detector holds it to that.
type plainProvider struct{ adds, depth, latency, work, unfinished, longest plainMetric }

type plainMetric struct {
	value float64
	count int
}

func (m *plainMetric) Inc()              { m.value++ }
func (m *plainMetric) Dec()              { m.value-- }
func (m *plainMetric) Set(v float64)     { m.value = v }
func (m *plainMetric) Observe(v float64) { m.value += v; m.count++ }

func (p *plainProvider) NewDepthMetric(string) GaugeMetric            { return &p.depth }
func (p *plainProvider) NewAddsMetric(string) CounterMetric           { return &p.adds }
func (p *plainProvider) NewLatencyMetric(string) HistogramMetric      { return &p.latency }
func (p *plainProvider) NewWorkDurationMetric(string) HistogramMetric { return &p.work }
func (p *plainProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric {
	return &p.unfinished
}
func (p *plainProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return &p.longest
}
func (p *plainProvider) NewRetriesMetric(string) CounterMetric { return new(plainMetric) }

// plainExtProvider is plainProvider as an ExtendedMetricsProvider.
type plainExtProvider struct{ *plainProvider }

func (p plainExtProvider) NewOldestWaitingSecondsMetric(string) SettableGaugeMetric {
	return new(plainMetric)
}

// TestMetricsCalledOneAtATime: producers and workers on a named queue, in both modes, while
// the unfinished-work gauges are refreshed every millisecond, never call two metric objects
// at once (the race detector checks), and the counts add up.
func TestMetricsCalledOneAtATime(t *testing.T) {
	for _, c := range []struct{ locked, extended bool }{{false, false}, {true, false}, {false, true}} {
		locked := c.locked
		t.Run(fmt.Sprintf("locked=%v,extended=%v", c.locked, c.extended), func(t *testing.T) {
			p := new(plainProvider)
			var mp MetricsProvider = p
			if c.extended {
				mp = plainExtProvider{p}
			}
			cfg := TypedQueueConfig[int]{Name: "q", MetricsProvider: mp}
			if locked {
				cfg.Queue = &intFIFO{}
			}
			q := newTyped(cfg, resolveName(cfg.Name), time.Millisecond)
			checkInvariants(t, q, 1, 4, 4, 16, 2000, 20)
			q.ShutDown() // stops the gauge refresh before the fields are read
			if p.depth.value != 0 {
				t.Errorf("depth = %v after the drain, want 0", p.depth.value)
			}
			// A sampling queue observes its last untimed items with the next timed one.
			adds, lost := int(p.adds.value), 0
			if c.extended {
				lost = sampleEvery - 1
			}
			if n := p.latency.count; n > adds || n < adds-lost {
				t.Errorf("%v adds, %d latency observations", adds, n)
			}
			if n := p.work.count; n > adds || n < adds-lost {
				t.Errorf("%v adds, %d work-duration observations", adds, n)
			}
			if p.adds.value == 0 {
				t.Error("no adds counted")
			}
		})
	}
}

// extRecorder is a recorder that is an ExtendedMetricsProvider; its histograms record weighted
// observations as that many equal ones.
type extRecorder struct{ *recorder }

func (r extRecorder) NewOldestWaitingSecondsMetric(name string) SettableGaugeMetric {
	return r.metric("oldest", name)
}

func (r extRecorder) NewLatencyMetric(name string) HistogramMetric {
	return weightedMetric{r.metric("latency", name)}
}

func (r extRecorder) NewWorkDurationMetric(name string) HistogramMetric {
	return weightedMetric{r.metric("work", name)}
}

type weightedMetric struct{ recMetric }

func (m weightedMetric) ObserveWeighted(v float64, n uint64) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	m.r.obs[m.key] = append(m.r.obs[m.key], v)
	m.r.weights = append(m.r.weights, fmt.Sprintf("%s:%v×%d", m.key, v, n))
}

// TestExtendedMetricsDeferredCounts: with an ExtendedMetricsProvider depth and adds are set at
// each refresh and at shutdown; after shutdown depth follows every Get again.
func TestExtendedMetricsDeferredCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := extRecorder{newRecorder()}
		fc := testingclock.NewFakeClock(t0)
		q := NewTypedWithConfig(TypedQueueConfig[string]{Name: "q", MetricsProvider: rec, Clock: fc})
		step := func(d time.Duration) {
			synctest.Wait()
			fc.Step(d)
			synctest.Wait()
		}
		check := func(what, key string, want float64) {
			t.Helper()
			if got := rec.value(key); got != want {
				t.Fatalf("%s: %s = %v, want %v", what, key, got, want)
			}
		}
		q.Add("a")
		q.Add("b")
		q.Add("c")
		check("before a refresh", "adds/q", 0)
		check("before a refresh", "depth/q", 0)
		step(500 * time.Millisecond)
		check("refreshed", "adds/q", 3)
		check("refreshed", "depth/q", 3)
		q.Get() // a waited 500ms: observed at once
		if got := rec.observations("latency/q"); !slices.Equal(got, []float64{0.5}) {
			t.Fatalf("latency = %v, want [0.5]", got)
		}
		q.Add("a") // again while processing: counted in depth, as client-go does
		step(500 * time.Millisecond)
		check("after a get and a re-add", "depth/q", 3)
		check("after a get and a re-add", "adds/q", 4)
		q.Add("d")
		q.ShutDown()
		check("at shutdown", "adds/q", 5)
		check("at shutdown", "depth/q", 4)
		q.Get()
		check("a get after shutdown", "depth/q", 3)
	})
}

// TestExtendedMetricsSampling: past timedPerPeriod items in a refresh period, one item in
// sampleEvery is timed and observed for the items since the last observation; the next
// period times every item again.
func TestExtendedMetricsSampling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := extRecorder{newRecorder()}
		fc := testingclock.NewFakeClock(t0)
		q := NewTypedWithConfig(TypedQueueConfig[int]{Name: "q", MetricsProvider: rec, Clock: fc})
		defer q.ShutDown()
		cycle := func(n int) {
			for i := range n {
				q.Add(i)
				item, _ := q.Get()
				q.Done(item)
			}
		}
		count := func(key string) int {
			return len(rec.observations(key))
		}
		cycle(timedPerPeriod + 3*sampleEvery + 5)
		if got, want := count("latency/q"), timedPerPeriod+3; got != want {
			t.Fatalf("%d latency observations, want %d", got, want)
		}
		if got, want := count("work/q"), timedPerPeriod+3; got != want {
			t.Fatalf("%d work-duration observations, want %d", got, want)
		}
		wantWeights := []string{}
		for range 3 {
			wantWeights = append(wantWeights, fmt.Sprintf("latency/q:0×%d", sampleEvery), fmt.Sprintf("work/q:0×%d", sampleEvery))
		}
		if !slices.Equal(rec.weights, wantWeights) {
			t.Fatalf("weighted observations %v, want %v", rec.weights, wantWeights)
		}

		synctest.Wait()
		fc.Step(500 * time.Millisecond)
		synctest.Wait()
		rec.weights = nil
		cycle(1) // timed again: stands for itself and the 5 untimed items before it
		want := []string{"latency/q:0×6", "work/q:0×6"}
		if !slices.Equal(rec.weights, want) {
			t.Fatalf("first observation of the new period %v, want %v", rec.weights, want)
		}
	})
}

// TestExtendedMetricsUntimedItemsAge: an item that was not timed counts in the gauges from
// the start of the refresh period of its add or get, and its latency and duration are not
// observed.
func TestExtendedMetricsUntimedItemsAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := extRecorder{newRecorder()}
		fc := testingclock.NewFakeClock(t0)
		q := NewTypedWithConfig(TypedQueueConfig[int]{Name: "q", MetricsProvider: rec, Clock: fc})
		defer q.ShutDown()
		step := func(d time.Duration) {
			synctest.Wait()
			fc.Step(d)
			synctest.Wait()
		}
		for i := range timedPerPeriod {
			q.Add(i)
			item, _ := q.Get()
			q.Done(item)
		}
		observed := len(rec.observations("latency/q"))
		if s := q.status(); s.OldestWaiting != 0 || s.LongestRunning != 0 { // nothing queued yet
			t.Fatalf("empty queue's status: %+v", s)
		}
		q.Add(-1) // untimed: waits
		q.Add(-2) // untimed: taken and held
		q.Get()   // -1
		q.Add(-3) // untimed: waits
		if got, _ := q.Get(); got != -2 {
			t.Fatalf("got %d, want -2", got)
		}
		step(250 * time.Millisecond)
		q.Done(-1)
		step(250 * time.Millisecond)
		step(time.Second)
		// -3 and -2 count from 0, the start of the period in which they were added and taken.
		for _, c := range []struct {
			key  string
			want float64
		}{{"oldest/q", 1.5}, {"longest/q", 1.5}, {"unfinished/q", 1.5}} {
			if got := rec.value(c.key); got != c.want {
				t.Errorf("%s = %v, want %v", c.key, got, c.want)
			}
		}
		q.Done(-2)
		q.Get()
		q.Done(-3)
		step(500 * time.Millisecond)
		for _, key := range []string{"oldest/q", "longest/q", "unfinished/q"} {
			if got := rec.value(key); got != 0 {
				t.Errorf("%s = %v with nothing queued, want 0", key, got)
			}
		}
		if got := len(rec.observations("latency/q")); got != observed {
			t.Errorf("%d latency observations of untimed items", got-observed)
		}
		if got := len(rec.observations("work/q")); got != observed {
			t.Errorf("%d work-duration observations of untimed items", got-observed)
		}
	})
}
