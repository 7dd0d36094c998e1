package workqueue

import (
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
// An ExtendedMetricsProvider's metrics cost the queue a few integer updates per item instead
// of clock reads and metric updates, with the same meaning but these differences of
// precision (a plain provider's are updated per item, as in client-go):
//   - depth and adds are updated every 500ms with the unfinished-work gauges, and when the
//     queue shuts down (depth then per Get): with Set and Add(float64) if the metrics have
//     them, else with Inc and Dec;
//   - in each 500ms period a queue times its first 128 items; beyond that rate it times one
//     item in 64, and records each of that item's latency and work duration for the items
//     taken or done since the previous one was recorded (with WeightedHistogramMetric's
//     ObserveWeighted if the histogram has it, else with that many Observe calls). So the
//     histograms' counts are exact up to the last timed item, and their shape and sum are
//     estimates from a regular sample while more than 256 items a second pass;
//   - an item that was not timed counts in the unfinished-work, longest-running and
//     oldest-waiting gauges from the start of the 500ms period in which it was added or
//     taken, so under such load those read high by up to 0.6s.
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

// WeightedHistogramMetric is a HistogramMetric that can record one observation standing for
// several equal ones. A queue with an ExtendedMetricsProvider times only a sample of its items
// under load and records each sampled duration for the items it stands for: with
// ObserveWeighted if the histogram has it, else with that many Observe calls.
//
// kcache extension.
type WeightedHistogramMetric interface {
	HistogramMetric
	// ObserveWeighted records value count times.
	ObserveWeighted(value float64, count uint64)
}

// The sampling of a queue with an ExtendedMetricsProvider: in each refresh period it times
// its first timedPerPeriod adds, then one add in sampleEvery.
const (
	timedPerPeriod = 128
	sampleEvery    = 64
)

// The timing of an item, kept in its itemState next to its phase, so that Get and Done need
// no other lookup. A timed item being processed has startExact and its Get's time in started.
// An untimed item has, for the phase it is in (both for stateAgain), the start of the refresh
// period of its Add or Get in coarse units since base, plus one (0: none); the gauges count
// its age from then.
const (
	startExact   itemState = 1 << 4 // its Done observes the work duration
	coarseBits             = 28
	coarseUnit             = 100 * time.Millisecond // so a coarse time spans 310 days
	coarseMask   itemState = 1<<coarseBits - 1
	addedShift             = 8
	startedShift           = addedShift + coarseBits
	addedMask              = coarseMask << addedShift
)

// queueMetrics records the metrics of one measured queue, as client-go does. A nil
// *queueMetrics records nothing. Its methods are called with the queue's lock held, so a
// provider's metrics need not be safe for concurrent use.
//
// With a plain MetricsProvider every item is timed and every metric updated at each Add, Get
// and Done, as in client-go. With an ExtendedMetricsProvider (sampled) the per-item work is
// a few integer updates: depth and adds are set at each refresh, and once timedPerPeriod adds
// have been timed in a refresh period only one add in sampleEvery is (its item's latency and
// work duration are observed for the items since the previous observation); an untimed item
// counts in the gauges from the start of the refresh period of its Add or Get.
type queueMetrics[T comparable] struct {
	clock    clock.Clock
	provided bool // the metrics are a provider's, not noop ones kept for Queues' times
	sampled  bool // the provider is an ExtendedMetricsProvider and the queue not shut down

	depth          GaugeMetric
	adds           CounterMetric
	latency        HistogramMetric
	workDuration   HistogramMetric
	unfinishedWork SettableGaugeMetric
	longestRunning SettableGaugeMetric
	oldestWaiting  SettableGaugeMetric // nil unless the provider is an ExtendedMetricsProvider

	// addTimes holds when each timed dirty item was first added since its last Get, in
	// nanoseconds since base (8 bytes instead of a time.Time's 24: a burst of adds can be
	// large). started holds when each item with startExact was taken.
	base         time.Time
	addTimes     map[T]int64
	addTimesSize burstSize
	started      map[T]int64

	// The sampling and the deferred counts (sampled only).
	period        itemState // the coarse time of this refresh period, plus one
	timed         int       // adds timed in this refresh period
	skipped       int       // adds not timed since the last timed one
	untimed       int       // items waiting or being processed with a coarse time
	latencyWeight uint64    // Gets since the last latency observation
	workWeight    uint64    // Dones since the last work-duration observation
	pendingAdds   int       // adds not yet counted in adds
	dirty         int       // the depth, as client-go counts it: dirty items not yet taken
	shownDepth    int       // the depth last set in depth
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
// what a plain provider's bookkeeping costs, a clock read and a map update per Add, Get and
// Done, but starts no goroutine. The debug page calls it; it cannot be turned off. Safe for
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
		sampled:        ext != nil,
		period:         1, // coarse time 0
		clock:          c,
		depth:          mp.NewDepthMetric(name),
		adds:           mp.NewAddsMetric(name),
		latency:        mp.NewLatencyMetric(name),
		workDuration:   mp.NewWorkDurationMetric(name),
		unfinishedWork: mp.NewUnfinishedWorkSecondsMetric(name),
		longestRunning: mp.NewLongestRunningProcessorSecondsMetric(name),
		base:           c.Now(),
		addTimes:       make(map[T]int64),
		started:        make(map[T]int64),
	}
	if ext != nil {
		m.oldestWaiting = ext.NewOldestWaitingSecondsMetric(name)
	}
	return m
}

// now returns the time in nanoseconds since base: with the real clock, one monotonic clock
// read.
func (m *queueMetrics[T]) now() int64 { return int64(m.clock.Since(m.base)) }

// add counts an Add that made item dirty and returns the timing bits to add to its state.
func (m *queueMetrics[T]) add(item T) itemState {
	if m == nil {
		return 0
	}
	if m.sampled {
		m.pendingAdds++
		m.dirty++
	} else {
		m.adds.Inc()
		m.depth.Inc()
	}
	if !m.timeAdd() {
		m.untimed++
		return m.period << addedShift
	}
	m.addTimes[item] = m.now()
	m.addTimesSize.grew(len(m.addTimes))
	return 0
}

// timeAdd reports whether to time the add being counted (see queueMetrics).
func (m *queueMetrics[T]) timeAdd() bool {
	if !m.sampled || m.timed < timedPerPeriod {
		m.timed++
		return true
	}
	if m.skipped++; m.skipped < sampleEvery {
		return false
	}
	m.skipped = 0
	return true
}

// get counts item as taken by a worker: it observes how long the item waited if its add was
// timed, and then times its processing. It returns the item's timing bits.
func (m *queueMetrics[T]) get(item T) itemState {
	if m == nil {
		return 0
	}
	if m.sampled {
		m.dirty--
	} else {
		m.depth.Dec()
	}
	m.latencyWeight++
	var added int64
	var timed bool
	if len(m.addTimes) > 0 { // (a lookup less while the queue times no waiting item)
		added, timed = m.addTimes[item]
	}
	if !timed {
		return m.period << startedShift // still counted in untimed
	}
	delete(m.addTimes, item)
	if len(m.addTimes) == 0 && m.addTimesSize.emptied() {
		m.addTimes = make(map[T]int64)
	}
	now := m.now()
	observe(m.latency, now-added, &m.latencyWeight)
	m.started[item] = now
	return startExact
}

// done observes how long the processing of item, in state st, took if its Get was timed.
func (m *queueMetrics[T]) done(item T, st itemState) {
	if m == nil {
		return
	}
	m.workWeight++
	if st&startExact == 0 {
		m.untimed--
		return
	}
	observe(m.workDuration, m.now()-m.started[item], &m.workWeight)
	delete(m.started, item)
}

// observe records d nanoseconds in h for *weight items, and resets *weight.
func observe(h HistogramMetric, d int64, weight *uint64) {
	v, n := time.Duration(d).Seconds(), *weight
	*weight = 0
	if w, ok := h.(WeightedHistogramMetric); ok && n > 1 {
		w.ObserveWeighted(v, n)
		return
	}
	for range n {
		h.Observe(v)
	}
}

// refresh is the periodic update of a measured queue whose items are items: it sets the
// deferred counts and the gauges and starts a new sampling period.
func (m *queueMetrics[T]) refresh(items map[T]itemState) {
	m.flushCounts()
	ages := m.ages(items)
	m.unfinishedWork.Set(ages.unfinished.Seconds())
	m.longestRunning.Set(ages.longestRunning.Seconds())
	if m.oldestWaiting != nil {
		m.oldestWaiting.Set(ages.oldestWaiting.Seconds())
	}
	m.timed, m.skipped = 0, 0
	m.period = itemState(m.now()/int64(coarseUnit))&coarseMask + 1
}

// flushCounts sets the deferred depth and adds of a sampled queue.
func (m *queueMetrics[T]) flushCounts() {
	if !m.sampled {
		return
	}
	if c, ok := m.adds.(interface{ Add(float64) }); ok {
		if m.pendingAdds > 0 {
			c.Add(float64(m.pendingAdds))
		}
	} else {
		for range m.pendingAdds {
			m.adds.Inc()
		}
	}
	m.pendingAdds = 0
	if g, ok := m.depth.(SettableGaugeMetric); ok {
		g.Set(float64(m.dirty))
	} else {
		for ; m.shownDepth < m.dirty; m.shownDepth++ {
			m.depth.Inc()
		}
		for ; m.shownDepth > m.dirty; m.shownDepth-- {
			m.depth.Dec()
		}
	}
	m.shownDepth = m.dirty
}

// stop sets the deferred counts a last time; from then on depth is updated at each Get (adds
// are over).
func (m *queueMetrics[T]) stop() {
	m.flushCounts()
	m.sampled = false
}

// queueAges are the ages the gauges show.
type queueAges struct {
	unfinished     time.Duration // the sum of the ages of the items being processed
	longestRunning time.Duration // the largest of them
	oldestWaiting  time.Duration // the age of the item waiting longest
}

// ages returns the ages of the items being processed and waiting: O(items being processed
// + timed items waiting), or O(items) while some are untimed.
func (m *queueMetrics[T]) ages(items map[T]itemState) queueAges {
	var a queueAges
	now := m.now()
	processing := func(start int64) {
		age := time.Duration(max(0, now-start))
		a.unfinished += age
		a.longestRunning = max(a.longestRunning, age)
	}
	waiting := func(added int64) {
		a.oldestWaiting = max(a.oldestWaiting, time.Duration(now-added))
	}
	for _, start := range m.started {
		processing(start)
	}
	for _, added := range m.addTimes {
		waiting(added)
	}
	if m.untimed == 0 {
		return a
	}
	// A coarse time c stands for (c-1)*coarseUnit; the subtraction modulo 2^coarseBits keeps
	// it right across the wrap-around of the coarse clock.
	nowCoarse := itemState(now/int64(coarseUnit)) & coarseMask
	coarseAge := func(c itemState) time.Duration {
		return time.Duration((nowCoarse-(c-1))&coarseMask) * coarseUnit
	}
	for _, st := range items {
		if c := st >> addedShift & coarseMask; c != 0 {
			a.oldestWaiting = max(a.oldestWaiting, coarseAge(c))
		}
		if c := st >> startedShift & coarseMask; c != 0 {
			age := coarseAge(c)
			a.unfinished += age
			a.longestRunning = max(a.longestRunning, age)
		}
	}
	return a
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
