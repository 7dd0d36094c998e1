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
//     item in 256, and records each of that item's latency and work duration for the items
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
	sampleEvery    = 256
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
//
// add, get and done are small enough for the compiler to inline into the queue's Add, Get
// and Done; what an untimed item needs happens there, the rest in addSlow, getSlow and
// doneTimed.
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

	// The Gets and Dones since the queue was created (the queue counts its adds).
	gets, dones uint64

	// The sampling (sampled only): addedBits and startedBits are the coarse time of this
	// refresh period, plus one, in place for an item's state; timed counts the adds timed in
	// it; skip is how many of the next adds are not timed.
	addedBits, startedBits itemState
	timed                  int
	skip                   int
	// noTimedWaiting is true while the queue is sampled and no timed item waits: a Get's item
	// is then untimed without a lookup.
	noTimedWaiting bool
	// coarse is true while an item waiting or being processed may have a coarse time: from
	// the first add sampling skips until ages finds none and none is to come.
	coarse bool

	// What was last observed or shown: gets and dones at the last latency and work-duration
	// observations, the queue's adds at the last update of adds (sampled), the depth last set
	// in depth.
	latencyObserved, workObserved uint64
	addsShown                     int64
	depthShown                    int
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
		noTimedWaiting: ext != nil,
		addedBits:      1 << addedShift, // coarse time 0
		startedBits:    1 << startedShift,
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
	if m.skip > 0 { // sampled and not timed
		m.skip--
		return m.addedBits
	}
	return m.addSlow(item)
}

// addSlow is add for an item that is timed: every item with a plain provider; the first
// timedPerPeriod items of a refresh period, then one in sampleEvery, when sampled.
func (m *queueMetrics[T]) addSlow(item T) itemState {
	if m.sampled {
		if m.timed++; m.timed >= timedPerPeriod {
			m.skip = sampleEvery - 1
			m.coarse = true
		}
	} else {
		m.adds.Inc()
		m.depth.Inc()
	}
	m.addTimes[item] = m.now()
	m.addTimesSize.grew(len(m.addTimes))
	m.noTimedWaiting = false
	return 0
}

// get counts item as taken by a worker: it observes how long the item waited if its add was
// timed, and then times its processing. It returns the item's timing bits.
func (m *queueMetrics[T]) get(item T) itemState {
	m.gets++
	if m.noTimedWaiting {
		return m.startedBits
	}
	return m.getSlow(item)
}

// getSlow is get when item may have been timed.
func (m *queueMetrics[T]) getSlow(item T) itemState {
	if !m.sampled {
		m.depth.Dec()
	}
	added, timed := m.addTimes[item]
	if !timed {
		return m.startedBits
	}
	delete(m.addTimes, item)
	if len(m.addTimes) == 0 {
		m.noTimedWaiting = m.sampled
		if m.addTimesSize.emptied() {
			m.addTimes = make(map[T]int64)
		}
	}
	now := m.now()
	observe(m.latency, now-added, m.gets-m.latencyObserved)
	m.latencyObserved = m.gets
	m.started[item] = now
	return startExact
}

// done observes how long the processing of item, in state st, took if its Get was timed.
func (m *queueMetrics[T]) done(item T, st itemState) {
	m.dones++
	if st&startExact != 0 {
		m.doneTimed(item)
	}
}

// doneTimed is done for an item whose Get was timed.
func (m *queueMetrics[T]) doneTimed(item T) {
	observe(m.workDuration, m.now()-m.started[item], m.dones-m.workObserved)
	m.workObserved = m.dones
	delete(m.started, item)
}

// observe records d nanoseconds in h for weight items.
func observe(h HistogramMetric, d int64, weight uint64) {
	v := time.Duration(d).Seconds()
	if w, ok := h.(WeightedHistogramMetric); ok && weight > 1 {
		w.ObserveWeighted(v, weight)
		return
	}
	for range weight {
		h.Observe(v)
	}
}

// refresh is the periodic update of a measured queue whose items are items and whose count
// of adds that made an item dirty is adds: it sets the deferred counts and the gauges and
// starts a new sampling period.
func (m *queueMetrics[T]) refresh(items map[T]itemState, adds int64) {
	m.flushCounts(adds)
	ages := m.ages(items)
	m.unfinishedWork.Set(ages.unfinished.Seconds())
	m.longestRunning.Set(ages.longestRunning.Seconds())
	if m.oldestWaiting != nil {
		m.oldestWaiting.Set(ages.oldestWaiting.Seconds())
	}
	m.timed, m.skip = 0, 0
	period := itemState(m.now()/int64(coarseUnit))&coarseMask + 1
	m.addedBits, m.startedBits = period<<addedShift, period<<startedShift
}

// flushCounts sets the deferred depth and adds of a sampled queue that counted adds adds
// that made an item dirty. The depth is what client-go counts: the dirty items not yet
// taken, those adds less the Gets.
func (m *queueMetrics[T]) flushCounts(adds int64) {
	if !m.sampled {
		return
	}
	if c, ok := m.adds.(interface{ Add(float64) }); ok {
		if adds > m.addsShown {
			c.Add(float64(adds - m.addsShown))
		}
	} else {
		for range adds - m.addsShown {
			m.adds.Inc()
		}
	}
	m.addsShown = adds
	depth := int(adds - int64(m.gets))
	if g, ok := m.depth.(SettableGaugeMetric); ok {
		g.Set(float64(depth))
	} else {
		for ; m.depthShown < depth; m.depthShown++ {
			m.depth.Inc()
		}
		for ; m.depthShown > depth; m.depthShown-- {
			m.depth.Dec()
		}
	}
	m.depthShown = depth
}

// stop sets the deferred counts a last time; from then on depth is updated at each Get (adds
// are over).
func (m *queueMetrics[T]) stop(adds int64) {
	m.flushCounts(adds)
	m.sampled, m.noTimedWaiting, m.skip = false, false, 0
}

// queueAges are the ages the gauges show.
type queueAges struct {
	unfinished     time.Duration // the sum of the ages of the items being processed
	longestRunning time.Duration // the largest of them
	oldestWaiting  time.Duration // the age of the item waiting longest
}

// ages returns the ages of the items being processed and waiting: O(items being processed
// + timed items waiting), or O(items) while some may have a coarse time.
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
	if !m.coarse {
		return a
	}
	// A coarse time c stands for (c-1)*coarseUnit; the subtraction modulo 2^coarseBits keeps
	// it right across the wrap-around of the coarse clock.
	nowCoarse := itemState(now/int64(coarseUnit)) & coarseMask
	coarseAge := func(c itemState) time.Duration {
		return time.Duration((nowCoarse-(c-1))&coarseMask) * coarseUnit
	}
	m.coarse = m.skip > 0 // the next adds get a coarse time
	for _, st := range items {
		if c := st >> addedShift & coarseMask; c != 0 {
			a.oldestWaiting = max(a.oldestWaiting, coarseAge(c))
			m.coarse = true
		}
		if c := st >> startedShift & coarseMask; c != 0 {
			age := coarseAge(c)
			a.unfinished += age
			a.longestRunning = max(a.longestRunning, age)
			m.coarse = true
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
