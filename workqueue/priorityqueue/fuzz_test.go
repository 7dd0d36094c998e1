package priorityqueue

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var fuzzSeeds = [][]byte{
	{0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 4},
	{1, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5},
	{2, 3, 7, 2, 3, 5, 1, 6, 9, 4, 8, 1, 6, 6, 6, 6, 4, 4, 5, 1, 5, 2, 4},
	{0, 2, 1, 3, 4, 2, 9, 9, 9, 9, 9, 4, 0, 1, 2, 0, 4, 6, 6, 6, 6, 4, 4, 4},
	{3, 8, 8, 8, 9, 10, 11, 4, 5, 0, 12, 4, 6, 13, 4},
}

// FuzzCore runs random adds (priorities, delays), takes, dones and time steps on the
// deterministic core and on the reference model, and compares every answer.
func FuzzCore(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(runCoreFuzz)
}

func runCoreFuzz(t *testing.T, data []byte) {
	{
		in := &byteStream{b: data}
		every := in.next(4) // 0 disables aging
		const after = 3
		c := newCore[int](every, after, nil)
		m := newRefQueue(every, after)
		var now int64
		delays := []int64{0, 0, 0, 1, 2, 5}
		for in.more() {
			switch op := in.next(8); op {
			case 0, 1, 2, 3:
				key, prio, delay := in.next(8), in.next(4)-1, delays[in.next(len(delays))]
				c.add(key, prio, delay, at(now))
				m.add(key, prio, delay, now)
			case 4:
				e := c.take(at(now))
				k, p, ok := m.take(now)
				if (e != nil) != ok || (ok && (e.key != k || e.priority != p)) {
					t.Fatalf("take at %d: core %v, model %d/%d/%v", now, e, k, p, ok)
				}
			case 5:
				key := in.next(8)
				c.done(key, at(now))
				m.done(key, now)
			case 6:
				to := now + int64(in.next(4))
				for {
					due, ok := c.nextDeadline()
					if !ok || due > to {
						break
					}
					c.promote(at(due))
				}
				m.advance(to)
				now = to
			case 7:
				c.dropWaiting()
				m.dropWaiting()
			}
			checkCore(t, c)
			ca, cok := c.nextDeadline()
			ma, mok := m.nextDeadline()
			if c.len() != m.len() || cok != mok || ca != ma {
				t.Fatalf("len %d/%d, deadline %d %v / %d %v", c.len(), m.len(), ca, cok, ma, mok)
			}
		}
	}
}

// fixedLimiter is a rate limiter whose delay for key k is (k%3)ms, counting its calls.
type fixedLimiter struct {
	mu    sync.Mutex
	calls map[int]int
}

func (l *fixedLimiter) When(k int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[k]++
	return time.Duration(k%3) * time.Millisecond
}
func (l *fixedLimiter) Forget(k int) { l.mu.Lock(); delete(l.calls, k); l.mu.Unlock() }
func (l *fixedLimiter) NumRequeues(k int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[k]
}

// queueHarness drives a real queue inside a synctest bubble next to the reference model,
// including blocked Gets, ShutDown and ShutDownWithDrain.
type queueHarness struct {
	t     *testing.T
	q     PriorityQueue[int]
	m     *refQueue
	start time.Time

	stopped, shuttingDown bool
	getters               int
	want                  map[int]string // getter id -> expected answer
	got                   chan [2]string
	drains                []chan struct{}
}

func (h *queueHarness) now() int64 { return int64(time.Since(h.start)) }

// dispatch hands the model's eligible items to the blocked getters, oldest first.
func (h *queueHarness) dispatch(now int64) {
	for _, id := range h.waiting() {
		if !h.m.hasEligible() {
			return
		}
		k, p, _ := h.m.take(now)
		h.want[id] = fmt.Sprintf("%d/%d/false", k, p)
	}
}

func (h *queueHarness) waiting() []int {
	var ids []int
	for id := range h.getters {
		if h.want[id] == "" {
			ids = append(ids, id)
		}
	}
	return ids
}

func (h *queueHarness) wakeAll() {
	for _, id := range h.waiting() {
		h.want[id] = "0/0/true"
	}
}

func (h *queueHarness) afterShutdownChange() {
	if h.stopped || (h.shuttingDown && h.m.len() == 0) {
		h.wakeAll()
	}
}

func (h *queueHarness) get() {
	id := h.getters
	h.getters++
	go func() {
		k, p, s := h.q.GetWithPriority()
		h.got <- [2]string{fmt.Sprint(id), fmt.Sprintf("%d/%d/%v", k, p, s)}
	}()
	switch {
	case h.stopped:
		h.want[id] = "0/0/true"
	case h.m.hasEligible():
		k, p, _ := h.m.take(h.now())
		h.want[id] = fmt.Sprintf("%d/%d/false", k, p)
	case h.shuttingDown && h.m.len() == 0:
		h.want[id] = "0/0/true"
	}
}

// check compares the answers of the getters that returned and the queue's length.
func (h *queueHarness) check() {
	h.t.Helper()
	synctest.Wait()
	for {
		select {
		case r := <-h.got:
			var id int
			fmt.Sscan(r[0], &id)
			if h.want[id] != r[1] {
				h.t.Fatalf("getter %d got %s, want %q", id, r[1], h.want[id])
			}
			h.want[id] = "returned"
			continue
		default:
		}
		break
	}
	for id := range h.getters {
		if w := h.want[id]; w != "" && w != "returned" {
			h.t.Fatalf("getter %d still blocked, want %s", id, w)
		}
	}
	if got, want := h.q.Len(), h.m.len(); got != want {
		h.t.Fatalf("Len %d, model %d", got, want)
	}
	for i, d := range h.drains {
		if d == nil {
			continue
		}
		select {
		case <-d:
			h.drains[i] = nil
			if !h.stopped && h.m.processing() > 0 {
				h.t.Fatalf("ShutDownWithDrain %d returned with %d items processing", i, h.m.processing())
			}
		default:
			if h.stopped || h.m.processing() == 0 {
				h.t.Fatalf("ShutDownWithDrain %d still waiting", i)
			}
		}
	}
}

// FuzzQueue runs random adds (priorities, delays, rate limits, batches), gets (blocking or
// not), dones, time steps and shutdowns on the real queue in a synctest bubble and on the
// reference model, and compares every answer, Len and the ends of ShutDownWithDrain.
func FuzzQueue(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		synctest.Test(t, func(t *testing.T) { runQueueFuzz(t, data) })
	})
}

func runQueueFuzz(t *testing.T, data []byte) {
	in := &byteStream{b: data}
	every := in.next(4)
	agingAfter := 3 * time.Millisecond
	h := &queueHarness{t: t, m: newRefQueue(every, int64(agingAfter)), want: map[int]string{}, got: make(chan [2]string, 1024)}
	lim := &fixedLimiter{calls: map[int]int{}}
	h.start = time.Now()
	h.q = New("", WithRateLimiter[int](lim), WithAging[int](Aging{After: agingAfter, Every: every, Disabled: every == 0}))
	defer func() {
		h.q.ShutDown()
		synctest.Wait()
	}()
	afters := []time.Duration{0, 0, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond}
	for in.more() {
		now := h.now()
		switch op := in.next(14); op {
		case 0, 1, 2, 3, 4:
			key, prio := in.next(6), in.next(4)-1
			after, rl := afters[in.next(len(afters))], in.next(3) == 0
			keys := []int{key}
			if op == 4 {
				keys = append(keys, (key+1)%6, (key+3)%6)
			}
			switch {
			case op == 0 && !rl:
				h.q.AddAfter(key, after)
				prio = 0
			case op == 1 && after == 0:
				h.q.AddRateLimited(key)
				prio, rl = 0, true
			case op == 2 && after == 0 && !rl && prio == 0:
				h.q.Add(key)
			default:
				h.q.AddWithOpts(AddOpts{After: after, RateLimited: rl, Priority: &prio}, keys...)
			}
			if !h.shuttingDown {
				for _, k := range keys {
					d := after
					if rl {
						if l := time.Duration(k%3) * time.Millisecond; d <= 0 || l < d {
							d = l
						}
					}
					h.m.add(k, prio, int64(d), now)
				}
			}
			if !h.stopped {
				h.dispatch(now)
			}
		case 5, 6, 7:
			h.get()
		case 8, 9:
			key := in.next(6)
			h.q.Done(key)
			h.m.done(key, now)
			if !h.stopped {
				h.dispatch(now)
			}
			h.afterShutdownChange()
		case 10, 11:
			d := time.Duration(in.next(4)) * time.Millisecond
			to := now + int64(d)
			for {
				at, ok := h.m.nextDeadline()
				if !ok || at > to || h.shuttingDown {
					break
				}
				h.m.promote(at)
				h.dispatch(at)
			}
			time.Sleep(d) // synctest: advances the bubble's fake clock
		case 12:
			done := make(chan struct{})
			h.drains = append(h.drains, done)
			go func() { h.q.ShutDownWithDrain(); close(done) }()
			h.shuttingDown = true
			h.m.dropWaiting()
			h.afterShutdownChange()
		case 13:
			h.q.ShutDown()
			h.shuttingDown, h.stopped = true, true
			h.m.dropWaiting()
			h.afterShutdownChange()
		}
		h.check()
	}
	// Every getter still blocked is released by ShutDown.
	h.q.ShutDown()
	h.stopped = true
	h.afterShutdownChange()
	h.check()
}
