package cache

import (
	"math"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// informerTiming is true once EnableInformerTiming was called.
var informerTiming atomic.Bool

// EnableInformerTiming turns on, for every informer of the process, the two measurements that
// read the clock per notification: the age of each handler's oldest pending notification (lag)
// and the time spent in each handler call (HandlerStatus.HandlerTime). Until it is called both
// read zero and cost nothing; after, they cost one clock read per batch of changes the
// informer applies and two per timed handler call: every call while a handler gets under a
// thousand notifications a second, fewer beyond (see HandlerStatus.HandlerTime). The other figures of
// InformerStatuses are always kept: a few counters updated under locks already held. The
// Prometheus module's Register and the debug page call it; it cannot be turned off. Safe for
// concurrent use.
//
// kcache extension.
func EnableInformerTiming() { informerTiming.Store(true) }

// monoTime is a time read from an informer's clock, as nanoseconds since a base time of its
// processor plus one, so that 0 stands for "not read". With the real clock, reading one is a
// single monotonic clock read, and differences are immune to changes of the wall clock.
type monoTime int64

// monoClock reads an informer's clock as monoTimes. The processor and its listeners share one,
// so that their times compare.
type monoClock struct {
	clock clock.Clock
	base  time.Time
}

// newMonoClock returns a monoClock of clk whose base is now.
func newMonoClock(clk clock.Clock) monoClock { return monoClock{clock: clk, base: clk.Now()} }

// now reads the clock.
func (c monoClock) now() monoTime { return monoTime(c.clock.Since(c.base)) + 1 }

// at converts t, a time of the same clock, to a monoTime.
func (c monoClock) at(t time.Time) monoTime { return monoTime(t.Sub(c.base)) + 1 }

// handlerTimeBounds are the upper bounds of HandlerStatus.HandlerTime's buckets.
var handlerTimeBounds = []time.Duration{
	10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond,
	100 * time.Millisecond, time.Second, 10 * time.Second,
}

// durationHistogram counts durations in the buckets of handlerTimeBounds (plus one for longer
// ones). It is written by one goroutine and read by any.
type durationHistogram struct {
	counts [8]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// handlerTimeSampling is how many handler calls made back to back one timed call stands for.
const handlerTimeSampling = 16

// handlerTimeGap is how long after a timed call started a call made after a wait for work is
// timed again.
const handlerTimeGap = time.Millisecond

// observe records d for weight calls.
func (h *durationHistogram) observe(d time.Duration, weight uint64) {
	i := 0
	for i < len(handlerTimeBounds) && d > handlerTimeBounds[i] {
		i++
	}
	h.counts[i].Add(weight)
	h.sum.Add(int64(d) * int64(weight))
}

func (h *durationHistogram) snapshot() DurationHistogram {
	out := DurationHistogram{Bounds: handlerTimeBounds, Counts: make([]uint64, len(h.counts))}
	for i := range h.counts {
		out.Counts[i] = h.counts[i].Load()
		out.Count += out.Counts[i]
	}
	out.Sum = time.Duration(h.sum.Load())
	return out
}

// maxLagMarks bounds the marks a listener keeps: beyond, new notifications get no mark of their
// own and the lag reported while they are the oldest is that of an earlier mark (too high,
// never too low).
const maxLagMarks = 64

// lagResolution is the precision of the lag: notifications queued less than lagResolution
// after the newest mark share it (their lag reads high by less than lagResolution), so that a
// listener getting notifications back to back dates them once a lagResolution, not once a
// batch.
const lagResolution = time.Millisecond

// lagMark says that the notification numbered seq (counting every notification queued for the
// listener) and those after it, up to the next mark, were queued at or after at.
type lagMark struct {
	seq uint64
	at  monoTime
}

// lagMarks is a bounded FIFO of marks.
type lagMarks struct {
	buf     [maxLagMarks]lagMark
	head, n int
}

func (m *lagMarks) at(i int) *lagMark { return &m.buf[(m.head+i)%maxLagMarks] }

// listenerStats are the counters of a listener that InformerStatuses reports. The listener's
// mu guards them, except panics and handlerTime.
type listenerStats struct {
	// pushed counts the notifications ever queued; consumed those popped for delivery or
	// coalesced away (kept only once timing is on: it serves the lag); processed the handler
	// calls that returned (or panicked).
	pushed, consumed, processed uint64
	// coalescedSeen is the buffer's coalescedAway when consumed was last updated.
	coalescedSeen uint64
	// marks date the queued notifications while EnableInformerTiming is on; nil before.
	// newest is the time of the newest mark (0 while there is none) and nextSeq the seq of the
	// second oldest (the first a pop can retire; MaxUint64 while there is none): copies, so
	// that the checks made for every notification stay on the listener's own cache lines.
	marks   *lagMarks
	newest  monoTime
	nextSeq uint64

	// initialCalls counts the handler calls of the initial list, apart from processed: each is
	// counted before the sync tracker learns of it, without the listener's mu, so that a
	// handler that reports synced already counts all of them in Processed.
	initialCalls atomic.Uint64

	panics      atomic.Uint64
	handlerTime durationHistogram
}

// markLocked dates the notifications about to be queued, and those after them up to the next
// mark, with at, unless the newest mark is less than lagResolution older; pending is the
// number of deliveries waiting before them. The listener counts what it queues in pushed
// itself.
func (s *listenerStats) markLocked(at monoTime, pending int, coalescedAway uint64) {
	if s.newest != 0 && time.Duration(at-s.newest) < lagResolution {
		return
	}
	s.addMarkLocked(at, pending, coalescedAway)
}

// addMarkLocked is markLocked when a mark may be due. It is kept out of line so that
// markLocked, called for every listener of every batch, is inlined.
//
//go:noinline
func (s *listenerStats) addMarkLocked(at monoTime, pending int, coalescedAway uint64) {
	if s.marks == nil {
		// Timing was just turned on: consumed, kept only with timing, starts from what the
		// buffer holds (exact unless it is coalescing, when keys stand for more).
		s.marks = &lagMarks{}
		s.consumed = s.pushed - uint64(pending)
		s.coalescedSeen = coalescedAway
		s.nextSeq = math.MaxUint64
	}
	m := s.marks
	if m.n == maxLagMarks {
		return
	}
	*m.at(m.n) = lagMark{seq: s.pushed, at: at}
	m.n++
	s.newest = at
	if m.n == 2 {
		s.nextSeq = m.at(1).seq
	}
}

// poppedLocked records a pop: called says the handler is called for it; coalescedAway is the
// buffer's counter after the pop. It does nothing until timing has dated a notification.
func (s *listenerStats) poppedLocked(called bool, coalescedAway uint64) {
	if s.marks == nil {
		return
	}
	s.consumed += coalescedAway - s.coalescedSeen
	s.coalescedSeen = coalescedAway
	if called {
		s.consumed++
	}
	if s.consumed >= s.nextSeq {
		s.retireMarksLocked()
	}
}

// retireMarksLocked drops the marks that no waiting notification needs any more: all but the
// last of those at or before consumed.
func (s *listenerStats) retireMarksLocked() {
	m := s.marks
	for m.n > 1 && m.at(1).seq <= s.consumed {
		m.head = (m.head + 1) % maxLagMarks
		m.n--
	}
	s.nextSeq = math.MaxUint64
	if m.n > 1 {
		s.nextSeq = m.at(1).seq
	}
}

// newestDateLocked returns the newest mark's time (no later than now, read without the
// clock), 0 if none was dated.
func (s *listenerStats) newestDateLocked() monoTime {
	return s.newest
}

// lagLocked returns the age at now of the oldest notification waiting, 0 if none waits or
// none was dated.
func (s *listenerStats) lagLocked(pending int, now monoTime) time.Duration {
	m := s.marks
	if pending == 0 || m == nil || m.n == 0 || m.at(0).seq > s.consumed {
		return 0
	}
	return max(0, time.Duration(now-m.at(0).at))
}

// status returns the handler's status at now.
func (p *processorListener) status(now monoTime) HandlerStatus {
	p.mu.Lock()
	pending := p.pending.Len()
	st := HandlerStatus{
		Name:               p.handlerName,
		Pending:            pending,
		Lag:                p.stats.lagLocked(pending, now),
		Processed:          p.stats.processed + p.stats.initialCalls.Load(),
		Coalesced:          p.pending.coalescedAway,
		CoalescingEpisodes: p.pending.episodes,
	}
	p.mu.Unlock()
	st.Synced = p.HasSynced()
	st.Panics = p.stats.panics.Load()
	st.HandlerTime = p.stats.handlerTime.snapshot()
	return st
}
