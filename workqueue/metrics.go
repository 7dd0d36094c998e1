package workqueue

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// GaugeMetric is a value that goes up and down, such as a queue's depth.
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a gauge that is set to a value, such as the seconds of unfinished work.
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric is a value that only goes up, such as the number of adds.
type CounterMetric interface {
	Inc()
}

// SummaryMetric records observations. The queues do not use it; it exists for compatibility.
type SummaryMetric interface {
	Observe(float64)
}

// HistogramMetric records observations, such as how long items wait in the queue.
type HistogramMetric interface {
	Observe(float64)
}

// MetricsProvider creates the metrics of a named queue. Each method is called once per queue,
// when the queue is created, with the queue's name.
//
// The queues call the metrics of one queue with that queue's lock held, so the calls of one
// queue are serialized (as in client-go); a metric must not call back into its queue. The
// retries counter is the exception: it is incremented without a lock, from whatever goroutine
// calls AddAfter.
type MetricsProvider interface {
	// NewDepthMetric: the number of items waiting to be taken.
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric: the number of adds that made an item dirty.
	NewAddsMetric(name string) CounterMetric
	// NewLatencyMetric: seconds an item waited between its first add and Get.
	NewLatencyMetric(name string) HistogramMetric
	// NewWorkDurationMetric: seconds between Get and Done.
	NewWorkDurationMetric(name string) HistogramMetric
	// NewUnfinishedWorkSecondsMetric: the sum over items being processed of the seconds since
	// their Get, refreshed every 500ms.
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	// NewLongestRunningProcessorSecondsMetric: the seconds since the Get of the item taken
	// earliest among those being processed, refreshed every 500ms.
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	// NewRetriesMetric: the number of AddAfter calls (and so AddRateLimited calls).
	NewRetriesMetric(name string) CounterMetric
}

// ExtendedMetricsProvider is a MetricsProvider that also measures what client-go's does not.
// A provider that implements it, given to a queue or to SetProvider, gets for every queue one
// more gauge, and gets queues created without a name too, under their default names (see
// Queues); a plain MetricsProvider, as in client-go, measures named queues only.
//
// kcache extension.
type ExtendedMetricsProvider interface {
	MetricsProvider
	// NewOldestWaitingSecondsMetric: the seconds since the first add of the item that has
	// waited longest to be taken (0 when none waits), refreshed every 500ms with the
	// unfinished-work gauges. Each refresh costs O(items waiting), under the queue's lock.
	NewOldestWaitingSecondsMetric(name string) SettableGaugeMetric
}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

type noopMetricsProvider struct{}

func (noopMetricsProvider) NewDepthMetric(string) GaugeMetric            { return noopMetric{} }
func (noopMetricsProvider) NewAddsMetric(string) CounterMetric           { return noopMetric{} }
func (noopMetricsProvider) NewLatencyMetric(string) HistogramMetric      { return noopMetric{} }
func (noopMetricsProvider) NewWorkDurationMetric(string) HistogramMetric { return noopMetric{} }
func (noopMetricsProvider) NewRetriesMetric(string) CounterMetric        { return noopMetric{} }
func (noopMetricsProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric {
	return noopMetric{}
}
func (noopMetricsProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return noopMetric{}
}

var (
	// providerMu guards provider and providerSet.
	providerMu  sync.Mutex
	provider    MetricsProvider = noopMetricsProvider{}
	providerSet bool
)

// SetProvider sets the metrics provider used by queues created afterwards without their own
// MetricsProvider. Only the first call has an effect; a nil provider keeps the default, which
// records nothing (client-go would panic on the next named queue).
func SetProvider(metricsProvider MetricsProvider) {
	providerMu.Lock()
	defer providerMu.Unlock()
	if providerSet {
		return
	}
	providerSet = true
	if metricsProvider != nil {
		provider = metricsProvider
	}
}

func globalProvider() MetricsProvider {
	providerMu.Lock()
	defer providerMu.Unlock()
	return provider
}

// queueMetrics records the metrics of one named queue, as client-go does. A nil *queueMetrics
// records nothing. Its methods are called with the queue's lock held, so a provider's metrics
// need not be safe for concurrent use.
type queueMetrics[T comparable] struct {
	clock    clock.Clock
	provided bool // the metrics are a provider's, not noop ones kept for Queues' times

	depth          GaugeMetric
	adds           CounterMetric
	latency        HistogramMetric
	workDuration   HistogramMetric
	unfinishedWork SettableGaugeMetric
	longestRunning SettableGaugeMetric
	oldestWaiting  SettableGaugeMetric // nil unless the provider is an ExtendedMetricsProvider

	// addTimes holds when each dirty item was first added since its last Get, in nanoseconds
	// since base (8 bytes instead of a time.Time's 24: a burst of adds can be large). started
	// holds when each item being processed was taken.
	base         time.Time
	addTimes     map[T]int64
	addTimesSize burstSize
	started      map[T]time.Time
}

// measured reports whether a queue named qn records metrics with mp: a named queue with any
// provider but the default one, an unnamed queue with an ExtendedMetricsProvider.
func measured(mp MetricsProvider, qn queueName) (ext ExtendedMetricsProvider, ok bool) {
	if mp == (noopMetricsProvider{}) {
		return nil, false
	}
	ext, isExt := mp.(ExtendedMetricsProvider)
	return ext, qn.given || isExt
}

// timing is true once EnableTiming was called.
var timing atomic.Bool

// EnableTiming makes every queue created afterwards keep the times its items were added and
// taken even without a metrics provider, so that Queues reports their OldestWaiting,
// LongestRunning and UnfinishedWork (which a queue with a provider keeps anyway). It costs
// what a provider's bookkeeping costs, a clock read and a map update per Add, Get and Done,
// but starts no goroutine. The debug page calls it; it cannot be turned off. Safe for
// concurrent use.
//
// kcache extension.
func EnableTiming() { timing.Store(true) }

// newQueueMetrics returns the queue's metrics: those of mp for a measured queue; noop ones
// that keep only the times (for Queues) after EnableTiming; nil otherwise.
func newQueueMetrics[T comparable](mp MetricsProvider, qn queueName, c clock.Clock) *queueMetrics[T] {
	ext, ok := measured(mp, qn)
	if !ok {
		if !timing.Load() {
			return nil
		}
		mp, ext = noopMetricsProvider{}, nil
	}
	name := qn.name
	m := &queueMetrics[T]{
		provided:       ok,
		clock:          c,
		depth:          mp.NewDepthMetric(name),
		adds:           mp.NewAddsMetric(name),
		latency:        mp.NewLatencyMetric(name),
		workDuration:   mp.NewWorkDurationMetric(name),
		unfinishedWork: mp.NewUnfinishedWorkSecondsMetric(name),
		longestRunning: mp.NewLongestRunningProcessorSecondsMetric(name),
		base:           c.Now(),
		addTimes:       make(map[T]int64),
		started:        make(map[T]time.Time),
	}
	if ext != nil {
		m.oldestWaiting = ext.NewOldestWaitingSecondsMetric(name)
	}
	return m
}

// add counts an Add that made item dirty.
func (m *queueMetrics[T]) add(item T) {
	if m == nil {
		return
	}
	m.adds.Inc()
	m.depth.Inc()
	if _, ok := m.addTimes[item]; !ok {
		m.addTimes[item] = int64(m.clock.Since(m.base))
		m.addTimesSize.grew(len(m.addTimes))
	}
}

// get counts item as taken by a worker: it observes how long the item waited.
func (m *queueMetrics[T]) get(item T) {
	if m == nil {
		return
	}
	now := m.clock.Now()
	m.depth.Dec()
	m.started[item] = now
	if added, ok := m.addTimes[item]; ok {
		m.latency.Observe((now.Sub(m.base) - time.Duration(added)).Seconds())
		delete(m.addTimes, item)
		if len(m.addTimes) == 0 && m.addTimesSize.emptied() {
			m.addTimes = make(map[T]int64)
		}
	}
}

// done observes how long the processing of item took.
func (m *queueMetrics[T]) done(item T) {
	if m == nil {
		return
	}
	if start, ok := m.started[item]; ok {
		m.workDuration.Observe(m.clock.Since(start).Seconds())
		delete(m.started, item)
	}
}

// updateUnfinishedWork sets the unfinished-work and longest-running gauges from the items
// being processed: O(items being processed), about the number of workers.
func (m *queueMetrics[T]) updateUnfinishedWork() {
	if m == nil {
		return
	}
	total, longest := m.unfinished()
	m.unfinishedWork.Set(total.Seconds())
	m.longestRunning.Set(longest.Seconds())
	if m.oldestWaiting != nil {
		m.oldestWaiting.Set(m.oldestWaitingAge().Seconds())
	}
}

// unfinished returns the sum of the ages of the items being processed and the largest of
// them. O(items being processed).
func (m *queueMetrics[T]) unfinished() (total, longest time.Duration) {
	for _, start := range m.started {
		age := m.clock.Since(start)
		total += age
		longest = max(longest, age)
	}
	return total, longest
}

// oldestWaitingAge returns the time since the first add of the item waiting longest, or 0.
// O(items waiting).
func (m *queueMetrics[T]) oldestWaitingAge() time.Duration {
	if len(m.addTimes) == 0 {
		return 0
	}
	first := int64(math.MaxInt64)
	for _, added := range m.addTimes {
		first = min(first, added)
	}
	return max(0, m.clock.Since(m.base)-time.Duration(first))
}

// retryMetrics counts AddAfter calls of one named delaying queue. A nil *retryMetrics
// records nothing.
type retryMetrics struct {
	retries CounterMetric
}

func newRetryMetrics(qn queueName, mp MetricsProvider) *retryMetrics {
	if mp == nil {
		mp = globalProvider()
	}
	if _, ok := measured(mp, qn); !ok {
		return nil
	}
	return &retryMetrics{retries: mp.NewRetriesMetric(qn.name)}
}

func (m *retryMetrics) retry() {
	if m != nil {
		m.retries.Inc()
	}
}
