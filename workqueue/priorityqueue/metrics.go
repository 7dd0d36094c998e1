package priorityqueue

import "github.com/kcache/cache/workqueue"

// MetricsProviderWithPriority is a workqueue.MetricsProvider that can also record a queue's
// depth per priority. When the provider given to New implements it, the queue records depth
// through NewDepthMetricWithPriority instead of NewDepthMetric. kcache extension (the same
// method set as controller-runtime's internal interface).
type MetricsProviderWithPriority interface {
	workqueue.MetricsProvider
	// NewDepthMetricWithPriority returns the depth gauge of the queue called name, by priority.
	NewDepthMetricWithPriority(name string) DepthMetricWithPriority
}

// DepthMetricWithPriority is a depth gauge labelled by priority.
type DepthMetricWithPriority interface {
	// Inc adds one ready item of priority.
	Inc(priority int)
	// Dec removes one ready item of priority.
	Dec(priority int)
}

// queueMetrics records one named queue's metrics. A nil *queueMetrics records nothing. Its
// methods are called with the queue's lock held, as client-go's workqueue does.
type queueMetrics struct {
	depth          workqueue.GaugeMetric
	depthPriority  DepthMetricWithPriority
	adds           workqueue.CounterMetric
	latency        workqueue.HistogramMetric
	workDuration   workqueue.HistogramMetric
	unfinishedWork workqueue.SettableGaugeMetric
	longestRunning workqueue.SettableGaugeMetric
	retries        workqueue.CounterMetric

	// lastRefresh is when the unfinished-work gauges were last set; shown is whether they
	// were set with items being processed (not to zero).
	lastRefresh int64
	shown       bool
}

// unfinishedRefresh is how often the unfinished-work gauges are recomputed, as in client-go.
// Hand-outs and Done recompute them when this long has passed; the queue's timer does while
// items are being processed, so that they move even when every worker is stuck.
const unfinishedRefresh = 500 * 1e6

func newQueueMetrics(mp workqueue.MetricsProvider, name string) *queueMetrics {
	if name == "" || mp == nil {
		return nil
	}
	m := &queueMetrics{
		adds:           mp.NewAddsMetric(name),
		latency:        mp.NewLatencyMetric(name),
		workDuration:   mp.NewWorkDurationMetric(name),
		unfinishedWork: mp.NewUnfinishedWorkSecondsMetric(name),
		longestRunning: mp.NewLongestRunningProcessorSecondsMetric(name),
		retries:        mp.NewRetriesMetric(name),
	}
	if pp, ok := mp.(MetricsProviderWithPriority); ok {
		m.depthPriority = pp.NewDepthMetricWithPriority(name)
	} else {
		m.depth = mp.NewDepthMetric(name)
	}
	return m
}

func (m *queueMetrics) readyAdded(priority int) {
	if m == nil {
		return
	}
	m.adds.Inc()
	if m.depthPriority != nil {
		m.depthPriority.Inc(priority)
	} else {
		m.depth.Inc()
	}
}

func (m *queueMetrics) depthMove(from, to int) {
	if m == nil || m.depthPriority == nil {
		return
	}
	m.depthPriority.Dec(from)
	m.depthPriority.Inc(to)
}

func (m *queueMetrics) taken(priority int, waitedNs int64) {
	if m == nil {
		return
	}
	if m.depthPriority != nil {
		m.depthPriority.Dec(priority)
	} else {
		m.depth.Dec()
	}
	m.latency.Observe(float64(waitedNs) / 1e9)
}

func (m *queueMetrics) finished(tookNs int64) {
	if m == nil {
		return
	}
	m.workDuration.Observe(float64(tookNs) / 1e9)
}

func (m *queueMetrics) retry() {
	if m == nil {
		return
	}
	m.retries.Inc()
}

// refreshUnfinished sets the unfinished-work gauges from the running items, at most once per
// unfinishedRefresh unless force is set. O(items being processed).
func (c *core[T]) refreshUnfinished(n *instant, force bool) {
	m := c.metrics
	if m == nil {
		return
	}
	now := n.get()
	if !force && now-m.lastRefresh < unfinishedRefresh {
		return
	}
	m.lastRefresh = now
	m.shown = c.running.head != nil
	var total float64
	for e := c.running.head; e != nil; e = e.runNext {
		total += float64(now-e.startedAt) / 1e9
	}
	var longest float64
	if e := c.running.head; e != nil {
		longest = float64(now-e.startedAt) / 1e9
	}
	m.unfinishedWork.Set(total)
	m.longestRunning.Set(longest)
}

// nextRefresh returns when the unfinished-work gauges are next due, if they need a refresh
// with no queue call: while items are being processed, and once more after the last one
// finished, to set them back to zero.
func (c *core[T]) nextRefresh() (int64, bool) {
	m := c.metrics
	if m == nil || (c.running.head == nil && !m.shown) {
		return 0, false
	}
	return m.lastRefresh + unfinishedRefresh, true
}
