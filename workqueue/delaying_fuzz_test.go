package workqueue_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

// The delaying and rate-limited queue fuzzers drive a queue through its public API only, on a
// fake clock inside a synctest bubble, and compare it after every operation with delayModel:
// nothing is handed out before it is due, nothing due is withheld once the clock has passed
// it, no item is lost or handed out twice, due items come out earliest first, and the rate
// limiters' delays and requeue counts follow their documentation.

// fuzzDelays are the AddAfter durations the fuzzer chooses from; 0 and negative durations add
// at once, the last one never comes due within a run.
var fuzzDelays = []time.Duration{-time.Millisecond, 0, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 100 * time.Millisecond, math.MaxInt64}

// fuzzSteps are the clock steps the fuzzer chooses from.
var fuzzSteps = []time.Duration{time.Microsecond, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond,
	5 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, time.Second}

// fuzzItems is the size of the item space: small, so that items collide.
const fuzzItems = 6

// delayModel is the reference: a FIFO of due items over the dirty and processing sets, and the
// items not due yet with their due times. Items that come due at the same instant form one
// group, whose order among themselves is not specified.
type delayModel struct {
	now        time.Duration // since the queue was made
	waiting    map[int]time.Duration
	queue      [][]int // groups of due items, first group first
	dirty      map[int]bool
	processing map[int]bool
	down       bool
}

func newDelayModel() *delayModel {
	return &delayModel{waiting: map[int]time.Duration{}, dirty: map[int]bool{}, processing: map[int]bool{}}
}

func (m *delayModel) len() int {
	n := 0
	for _, g := range m.queue {
		n += len(g)
	}
	return n
}

// addGroup adds items that became due together.
func (m *delayModel) addGroup(items []int) {
	var g []int
	for _, item := range items {
		if m.down || m.dirty[item] {
			continue
		}
		m.dirty[item] = true
		if !m.processing[item] {
			g = append(g, item)
		}
	}
	if len(g) > 0 {
		m.queue = append(m.queue, g)
	}
}

func (m *delayModel) addAfter(item int, d time.Duration) {
	if m.down {
		return
	}
	if d <= 0 {
		m.addGroup([]int{item})
		return
	}
	due := m.now + d
	if due < m.now {
		due = math.MaxInt64
	}
	if cur, ok := m.waiting[item]; !ok || due < cur {
		m.waiting[item] = due
	}
}

func (m *delayModel) step(d time.Duration) {
	m.now += d
	var due []int
	for item, at := range m.waiting {
		if at <= m.now {
			due = append(due, item)
		}
	}
	slices.SortFunc(due, func(a, b int) int {
		return cmp.Or(cmp.Compare(m.waiting[a], m.waiting[b]), cmp.Compare(a, b))
	})
	for len(due) > 0 {
		at := m.waiting[due[0]]
		n := 1
		for n < len(due) && m.waiting[due[n]] == at {
			n++
		}
		for _, item := range due[:n] {
			delete(m.waiting, item)
		}
		m.addGroup(due[:n])
		due = due[n:]
	}
}

// take checks that got may be handed out now and moves it to processing.
func (m *delayModel) take(got int) error {
	if len(m.queue) == 0 {
		return fmt.Errorf("Get returned %d, the model has nothing due", got)
	}
	g := m.queue[0]
	i := slices.Index(g, got)
	if i < 0 {
		return fmt.Errorf("Get returned %d, want one of %v (queue %v, waiting %v)", got, g, m.queue, m.waiting)
	}
	g = slices.Delete(g, i, i+1)
	if len(g) == 0 {
		m.queue = m.queue[1:]
	} else {
		m.queue[0] = g
	}
	delete(m.dirty, got)
	m.processing[got] = true
	return nil
}

func (m *delayModel) done(item int) {
	if !m.processing[item] {
		return
	}
	delete(m.processing, item)
	if m.dirty[item] {
		m.queue = append(m.queue, []int{item})
	}
}

func (m *delayModel) shutDown() {
	m.down = true
	clear(m.waiting)
}

// limiterModel computes what the rate limiters of fuzzLimiter return.
type limiterModel struct {
	kind     int
	failures map[int]int
}

const (
	limExp = iota
	limFastSlow
	limMaxOf
	limMaxWait
	numLimiters
)

// fuzzLimiter returns the limiter of kind k, with small delays so that the fuzzer's steps
// reach them.
func fuzzLimiter(k int) workqueue.TypedRateLimiter[int] {
	switch k {
	case limExp:
		return workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, 50*time.Millisecond)
	case limFastSlow:
		return workqueue.NewTypedItemFastSlowRateLimiter[int](2*time.Millisecond, 20*time.Millisecond, 2)
	case limMaxOf:
		return workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, 50*time.Millisecond),
			workqueue.NewTypedItemFastSlowRateLimiter[int](2*time.Millisecond, 20*time.Millisecond, 2))
	default:
		return workqueue.NewTypedWithMaxWaitRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second), 30*time.Millisecond)
	}
}

// when returns the documented delay of item's next failure and counts it.
func (l *limiterModel) when(item int) time.Duration {
	n := l.failures[item]
	l.failures[item] = n + 1
	exp := func(base, cap time.Duration) time.Duration {
		d := base
		for range n {
			if d >= cap {
				break
			}
			d *= 2
		}
		return min(d, cap)
	}
	fastSlow := 20 * time.Millisecond
	if n+1 <= 2 {
		fastSlow = 2 * time.Millisecond
	}
	switch l.kind {
	case limExp:
		return exp(time.Millisecond, 50*time.Millisecond)
	case limFastSlow:
		return fastSlow
	case limMaxOf:
		return max(exp(time.Millisecond, 50*time.Millisecond), fastSlow)
	default:
		return min(exp(time.Millisecond, time.Second), 30*time.Millisecond)
	}
}

// fuzzQueue is the part of the queue API the fuzzers use.
type fuzzQueue interface {
	workqueue.TypedDelayingInterface[int]
}

// FuzzDelayingQueue: Add, AddAfter, clock steps, Get, Done, ShutDown and ShutDownWithDrain
// against delayModel.
func FuzzDelayingQueue(f *testing.F) {
	f.Add([]byte{1, 2, 1, 3, 2, 1, 3, 0, 4, 0, 3, 0})
	f.Add([]byte{1, 0x12, 1, 0x22, 1, 0x32, 2, 2, 3, 0, 3, 0, 2, 7, 3, 0})
	f.Add([]byte{0, 1, 3, 0, 0, 1, 1, 0x12, 5, 0, 2, 7, 4, 1, 3, 0})
	f.Add([]byte{0, 1, 3, 0, 6, 0, 0, 2, 4, 1, 3, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		runDelayFuzz(t, ops, -1)
	})
}

// FuzzRateLimitingQueue adds AddRateLimited, Forget and NumRequeues, with each of the
// per-item limiters (chosen by the first byte); the expected delays follow the limiters'
// documentation.
func FuzzRateLimitingQueue(f *testing.F) {
	for k := range numLimiters {
		f.Add(append([]byte{byte(k)}, 7, 1, 7, 1, 7, 1, 2, 1, 3, 0, 2, 2, 3, 0, 4, 1, 8, 1, 7, 1, 2, 7, 3, 0))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		runDelayFuzz(t, data[1:], int(data[0])%numLimiters)
	})
}

// runDelayFuzz interprets ops as (operation, argument) byte pairs. limiter < 0 fuzzes a plain
// delaying queue; otherwise a rate-limited queue with fuzzLimiter(limiter).
func runDelayFuzz(t *testing.T, ops []byte, limiter int) {
	if len(ops) > 400 {
		ops = ops[:400]
	}
	synctest.Test(t, func(t *testing.T) {
		clk := testingclock.NewFakeClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
		var q fuzzQueue
		var rl workqueue.TypedRateLimitingInterface[int]
		lm := &limiterModel{kind: limiter, failures: map[int]int{}}
		if limiter < 0 {
			q = workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[int]{Clock: clk})
		} else {
			rl = workqueue.NewTypedRateLimitingQueueWithConfig(fuzzLimiter(limiter), workqueue.TypedRateLimitingQueueConfig[int]{Clock: clk})
			q = rl
		}
		m := newDelayModel()
		var drains []chan struct{} // of the ShutDownWithDrain calls not seen returning yet

		// getter, when not nil, gets the result of a Get that blocked: the model had nothing
		// due. It must return as soon as the model has something due, or is shut down.
		type getResult struct {
			item     int
			shutdown bool
		}
		var getter chan getResult

		check := func(i int, what string) {
			t.Helper()
			synctest.Wait()
			if getter != nil {
				select {
				case r := <-getter:
					getter = nil
					switch {
					case r.shutdown && (m.len() > 0 || !m.down):
						t.Fatalf("op %d (%s): a waiting Get reported shutdown (model: down %v, due %v)", i, what, m.down, m.queue)
					case !r.shutdown:
						if err := m.take(r.item); err != nil {
							t.Fatalf("op %d (%s): a waiting Get: %v", i, what, err)
						}
					}
				default:
					if m.len() > 0 || m.down {
						t.Fatalf("op %d (%s): a waiting Get still waits (model: down %v, due %v, now %v)", i, what, m.down, m.queue, m.now)
					}
				}
			}
			if got, want := q.Len(), m.len(); got != want {
				t.Fatalf("op %d (%s): Len = %d, model %d (queue %v, waiting %v, now %v)", i, what, got, want, m.queue, m.waiting, m.now)
			}
			if q.ShuttingDown() != m.down {
				t.Fatalf("op %d (%s): ShuttingDown = %v, model %v", i, what, !m.down, m.down)
			}
			pending := drains[:0]
			for _, d := range drains {
				select {
				case <-d:
					if len(m.processing) != 0 {
						t.Fatalf("op %d (%s): ShutDownWithDrain returned with %v still processing", i, what, m.processing)
					}
				default:
					if len(m.processing) == 0 {
						t.Fatalf("op %d (%s): ShutDownWithDrain still waits with %v processing", i, what, m.processing)
					}
					pending = append(pending, d)
				}
			}
			drains = pending
		}

		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%9, ops[i+1]
			item := int(arg) % fuzzItems
			var what string
			switch op {
			case 0:
				what = fmt.Sprintf("Add(%d)", item)
				q.Add(item)
				m.addGroup([]int{item})
			case 1:
				d := fuzzDelays[int(arg>>4)%len(fuzzDelays)]
				what = fmt.Sprintf("AddAfter(%d, %v)", item, d)
				q.AddAfter(item, d)
				m.addAfter(item, d)
			case 2:
				d := fuzzSteps[int(arg)%len(fuzzSteps)]
				what = fmt.Sprintf("Step(%v)", d)
				clk.Step(d)
				m.step(d)
			case 3:
				what = "Get"
				if m.len() == 0 && !m.down {
					if getter != nil {
						continue
					}
					what = "Get (waits)"
					getter = make(chan getResult, 1)
					go func(c chan<- getResult) {
						item, shutdown := q.Get()
						c <- getResult{item, shutdown}
					}(getter)
					break
				}
				got, shutdown := q.Get()
				switch {
				case shutdown && m.len() > 0:
					t.Fatalf("op %d: Get reported shutdown with %v due", i, m.queue)
				case shutdown:
				case !shutdown && m.len() == 0:
					t.Fatalf("op %d: Get returned %d after shutdown with nothing due", i, got)
				default:
					if err := m.take(got); err != nil {
						t.Fatalf("op %d (now %v): %v", i, m.now, err)
					}
				}
			case 4:
				what = fmt.Sprintf("Done(%d)", item)
				q.Done(item)
				m.done(item)
			case 5:
				what = "ShutDown"
				q.ShutDown()
				m.shutDown()
				// ShutDown ends the wait of every ShutDownWithDrain.
				synctest.Wait()
				for _, d := range drains {
					select {
					case <-d:
					default:
						t.Fatalf("op %d: ShutDownWithDrain still waits after ShutDown", i)
					}
				}
				drains = nil
			case 6:
				what = "ShutDownWithDrain"
				d := make(chan struct{})
				drains = append(drains, d)
				go func() {
					defer close(d)
					q.ShutDownWithDrain()
				}()
				m.shutDown()
			case 7, 8:
				if rl == nil {
					continue
				}
				if op == 7 {
					what = fmt.Sprintf("AddRateLimited(%d)", item)
					rl.AddRateLimited(item)
					m.addAfter(item, lm.when(item))
				} else {
					what = fmt.Sprintf("Forget(%d)", item)
					rl.Forget(item)
					delete(lm.failures, item)
				}
				if got, want := rl.NumRequeues(item), lm.failures[item]; got != want {
					t.Fatalf("op %d (%s): NumRequeues(%d) = %d, want %d", i, what, item, got, want)
				}
			}
			check(i, what)
		}

		// Past every finite delay, everything waiting must be handed out, once each.
		if !m.down {
			clk.Step(time.Hour)
			m.step(time.Hour)
			check(len(ops), "final step")
			for m.len() > 0 {
				got, shutdown := q.Get()
				if shutdown {
					t.Fatalf("final: Get reported shutdown with %v due", m.queue)
				}
				if err := m.take(got); err != nil {
					t.Fatalf("final: %v", err)
				}
				q.Done(got)
				m.done(got)
			}
			check(len(ops), "final gets")
		}
		q.ShutDown()
		m.shutDown()
		for _, d := range drains {
			<-d // ShutDown ends their wait
		}
		drains = nil
		check(len(ops), "final ShutDown")
		for item := range m.processing {
			q.Done(item)
		}
	})
}
