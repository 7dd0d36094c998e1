package workqueue

import (
	"math"
	"math/bits"
	"sync"
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

// queueMetrics records the metrics of one named queue. A nil *queueMetrics records nothing.
// The per-item bookkeeping lives in the shards' itemMetrics, guarded like the shards' item
// states (addTime, startRun, endRun, takeAddTime, collectUnfinished). The calls into the metric
// objects (count*, setUnfinishedWork) are made only with the queue's own lock held, as
// client-go makes them, so a provider's metrics need not be safe for concurrent use; a lock of
// their own would be a second lock that every item takes three times, on which the workers
// and producers of a busy queue then queue up.
type queueMetrics[T comparable] struct {
	clock clock.Clock
	base  time.Time // start offsets are measured from here

	depth          GaugeMetric
	adds           CounterMetric
	latency        HistogramMetric
	workDuration   HistogramMetric
	unfinishedWork SettableGaugeMetric
	longestRunning SettableGaugeMetric
}

// itemMetrics is the per-item bookkeeping of one shard of a named queue, guarded like the
// shard's item states.
type itemMetrics[T comparable] struct {
	// addTimes holds when each dirty item was first added since its last Get.
	addTimes map[T]time.Time

	// running indexes the items being processed. They also form a list in the order they
	// were taken, so the oldest is at the head, and startSum is the sum of their start
	// offsets: the periodic update is O(shards) instead of a walk over every item.
	running    map[T]*runNode[T]
	head, tail *runNode[T]
	free       *runNode[T]
	nFree      int
	startSum   int128
}

// runNode is one item being processed.
type runNode[T any] struct {
	item       T
	start      time.Time
	offset     int64 // start - base, in nanoseconds
	prev, next *runNode[T]
}

// maxFreeNodes bounds the list of recycled runNodes of one shard.
const maxFreeNodes = 1024 / itemShardCount

func newQueueMetrics[T comparable](mp MetricsProvider, name string, c clock.Clock) *queueMetrics[T] {
	if name == "" || mp == (noopMetricsProvider{}) {
		return nil
	}
	return &queueMetrics[T]{
		clock:          c,
		depth:          mp.NewDepthMetric(name),
		adds:           mp.NewAddsMetric(name),
		latency:        mp.NewLatencyMetric(name),
		workDuration:   mp.NewWorkDurationMetric(name),
		unfinishedWork: mp.NewUnfinishedWorkSecondsMetric(name),
		longestRunning: mp.NewLongestRunningProcessorSecondsMetric(name),
		base:           c.Now(),
	}
}

// newItemMetrics returns the per-item bookkeeping for one shard of m's queue, or nil if m is.
func (m *queueMetrics[T]) newItemMetrics() *itemMetrics[T] {
	if m == nil {
		return nil
	}
	return &itemMetrics[T]{addTimes: make(map[T]time.Time), running: make(map[T]*runNode[T])}
}

// now returns the metrics clock's time, or the zero time if m is nil (no metrics). The queue
// reads it before taking its lock and passes it to addTime and countGet.
func (m *queueMetrics[T]) now() time.Time {
	if m == nil {
		return time.Time{}
	}
	return m.clock.Now()
}

// noTime stands for "no add time here" where add times travel with queued items.
const noTime = math.MinInt64

// addTime records now (from now()) as the time item became dirty. inFIFO says that the item is
// queued at once in the default FIFO, which keeps its add time: addTime then returns that time, as
// an offset from base, and does not touch im. Otherwise (an item added while it is processed, or
// any item of a queue with a custom Queue) the time is kept in im and addTime returns noTime. The
// caller also calls countAdd.
func (m *queueMetrics[T]) addTime(im *itemMetrics[T], item T, inFIFO bool, now time.Time) int64 {
	if m == nil {
		return noTime
	}
	if inFIFO {
		return int64(now.Sub(m.base))
	}
	im.addTimes[item] = now
	return noTime
}

// countAdd counts an item that became dirty. Under the queue's lock.
func (m *queueMetrics[T]) countAdd() {
	if m == nil {
		return
	}
	m.adds.Inc()
	m.depth.Inc()
}

// takeAddTime returns the add time im keeps for item, as an offset from base, and forgets it;
// noTime if there is none. Done calls it to move the time of an item added during its
// processing into the FIFO with the item.
func (m *queueMetrics[T]) takeAddTime(im *itemMetrics[T], item T) int64 {
	if m == nil {
		return noTime
	}
	added, ok := im.addTimes[item]
	if !ok {
		return noTime
	}
	delete(im.addTimes, item)
	return int64(added.Sub(m.base))
}

// countGet counts item as taken by a worker at now (from now()), which it returns: its processing
// starts then. addedAt is its add time (an offset from base) if it came with it from the FIFO, or
// noTime: then im (if not nil) keeps it, and im must be guarded. Under the queue's lock.
func (m *queueMetrics[T]) countGet(im *itemMetrics[T], item T, addedAt int64, now time.Time) (start time.Time) {
	if m == nil {
		return time.Time{}
	}
	waited, wasAdded := now.Sub(m.base)-time.Duration(addedAt), addedAt != noTime
	if !wasAdded && im != nil {
		var added time.Time
		if added, wasAdded = im.addTimes[item]; wasAdded {
			delete(im.addTimes, item)
			waited = now.Sub(added)
		}
	}
	m.depth.Dec()
	if wasAdded {
		m.latency.Observe(waited.Seconds())
	}
	return now
}

// startRun records that the processing of item started at start (from countGet). The queue
// never hands out an item that is being processed, so item is not in running.
func (m *queueMetrics[T]) startRun(im *itemMetrics[T], item T, start time.Time) {
	if m == nil {
		return
	}
	n := im.free
	if n != nil {
		im.free = n.next
		im.nFree--
	} else {
		n = new(runNode[T])
	}
	*n = runNode[T]{item: item, start: start, offset: int64(start.Sub(m.base)), prev: im.tail}
	if im.tail != nil {
		im.tail.next = n
	} else {
		im.head = n
	}
	im.tail = n
	im.running[item] = n
	im.startSum.add(n.offset)
}

// endRun records that the processing of item ended and returns how long it took, in
// seconds, for countDone; ok is false if item was not recorded as running (or m is nil).
func (m *queueMetrics[T]) endRun(im *itemMetrics[T], item T) (took float64, ok bool) {
	if m == nil {
		return 0, false
	}
	n, ok := im.running[item]
	if !ok {
		return 0, false
	}
	took = m.clock.Since(n.start).Seconds()
	im.unlink(n)
	return took, true
}

// countDone observes a processing that took took seconds. Under the queue's lock.
func (m *queueMetrics[T]) countDone(took float64) {
	m.workDuration.Observe(took)
}

func (im *itemMetrics[T]) unlink(n *runNode[T]) {
	delete(im.running, n.item)
	im.startSum.sub(n.offset)
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		im.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		im.tail = n.prev
	}
	*n = runNode[T]{}
	if im.nFree < maxFreeNodes {
		n.next = im.free
		im.free = n
		im.nFree++
	}
}

// unfinished accumulates the items being processed over the shards.
type unfinished struct {
	n        int64
	startSum int128
	oldest   time.Time // zero if none
}

// collectUnfinished adds im's items being processed to u; the caller holds im's guard.
func collectUnfinished[T comparable](u *unfinished, im *itemMetrics[T]) {
	if im == nil || im.head == nil {
		return
	}
	u.n += int64(len(im.running))
	u.startSum.addInt128(im.startSum)
	if u.oldest.IsZero() || im.head.start.Before(u.oldest) {
		u.oldest = im.head.start
	}
}

// setUnfinishedWork sets the unfinished-work and longest-running gauges from u. Under the
// queue's lock.
func (m *queueMetrics[T]) setUnfinishedWork(u *unfinished) {
	if m == nil {
		return
	}
	now := m.clock.Now()
	var total, oldest float64
	if u.n > 0 {
		// Σ(now - start) = n·(now - base) - Σ(start - base), exact in 128 bits.
		all := mulInt128(u.n, int64(now.Sub(m.base)))
		all.subInt128(u.startSum)
		total = all.float64() / float64(time.Second)
		oldest = max(0, now.Sub(u.oldest).Seconds())
	}
	m.unfinishedWork.Set(total)
	m.longestRunning.Set(oldest)
}

// retryMetrics counts AddAfter calls of one named delaying queue. A nil *retryMetrics
// records nothing.
type retryMetrics struct {
	retries CounterMetric
}

func newRetryMetrics(name string, mp MetricsProvider) *retryMetrics {
	if name == "" {
		return nil
	}
	if mp == nil {
		mp = globalProvider()
	}
	if mp == (noopMetricsProvider{}) {
		return nil
	}
	return &retryMetrics{retries: mp.NewRetriesMetric(name)}
}

func (m *retryMetrics) retry() {
	if m != nil {
		m.retries.Inc()
	}
}

// int128 is a two's complement 128-bit integer, enough to sum any number of int64 offsets.
type int128 struct {
	hi int64
	lo uint64
}

func (a *int128) add(x int64) {
	lo, carry := bits.Add64(a.lo, uint64(x), 0)
	a.hi += x>>63 + int64(carry)
	a.lo = lo
}

func (a *int128) sub(x int64) {
	lo, borrow := bits.Sub64(a.lo, uint64(x), 0)
	a.hi -= x>>63 + int64(borrow)
	a.lo = lo
}

func (a *int128) addInt128(b int128) {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	a.hi = a.hi + b.hi + int64(carry)
	a.lo = lo
}

func (a *int128) subInt128(b int128) {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	a.hi = a.hi - b.hi - int64(borrow)
	a.lo = lo
}

// mulInt128 returns n·x for n >= 0.
func mulInt128(n, x int64) int128 {
	ux := uint64(x)
	if x < 0 {
		ux = -ux
	}
	hi, lo := bits.Mul64(uint64(n), ux)
	r := int128{hi: int64(hi), lo: lo}
	if x < 0 {
		r = r.neg()
	}
	return r
}

func (a int128) neg() int128 {
	lo, carry := bits.Add64(^a.lo, 1, 0)
	return int128{hi: ^a.hi + int64(carry), lo: lo}
}

// float64 converts through the magnitude, so that small negative values keep their precision.
func (a int128) float64() float64 {
	if a.hi < 0 {
		m := a.neg() // for the minimum value m.hi stays negative, and uint64 reads it right
		return -(float64(uint64(m.hi))*(1<<64) + float64(m.lo))
	}
	return float64(uint64(a.hi))*(1<<64) + float64(a.lo)
}
