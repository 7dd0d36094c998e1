package workqueue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// countingClock counts the timers created on a fake clock.
type countingClock struct {
	*testingclock.FakeClock
	timers atomic.Int32
}

func (c *countingClock) NewTimer(d time.Duration) clock.Timer {
	c.timers.Add(1)
	return c.FakeClock.NewTimer(d)
}

// runDelayScript drives a delaying queue on a fake clock inside a synctest bubble. Steps:
// "after x d" (AddAfter, d parsed by time.ParseDuration or "max"), "add x", "step d" (advance
// the clock and let the queue react), "len n", "get x", "done x", "shutdown", "waiters n"
// (timers and tickers registered on the clock).
func runDelayScript(t *testing.T, script []string) *countingClock {
	t.Helper()
	fc := &countingClock{FakeClock: testingclock.NewFakeClock(t0)}
	synctest.Test(t, func(t *testing.T) {
		q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc})
		defer q.ShutDown()
		for i, step := range script {
			synctest.Wait()
			f := strings.Fields(step)
			switch f[0] {
			case "after":
				d := time.Duration(math.MaxInt64)
				if f[2] != "max" {
					var err error
					if d, err = time.ParseDuration(f[2]); err != nil {
						t.Fatalf("step %d %q: %v", i, step, err)
					}
				}
				q.AddAfter(f[1], d)
			case "add":
				q.Add(f[1])
			case "step":
				d, _ := time.ParseDuration(f[1])
				fc.Step(d)
			case "len", "waiters":
				want, _ := strconv.Atoi(f[1])
				got := q.Len()
				if f[0] == "waiters" {
					got = fc.Waiters()
				}
				if got != want {
					t.Fatalf("step %d %q: got %d", i, step, got)
				}
			case "get":
				if q.Len() == 0 {
					t.Fatalf("step %d %q: queue is empty", i, step)
				}
				if item, _ := q.Get(); item != f[1] {
					t.Fatalf("step %d %q: Get = %q", i, step, item)
				}
			case "done":
				q.Done(f[1])
			case "shutdown":
				q.ShutDown()
			default:
				t.Fatalf("bad step %q", step)
			}
		}
	})
	return fc
}

func TestAddAfter(t *testing.T) {
	cases := []struct {
		name       string
		script     []string
		wantTimers int32 // timers created over the whole script
	}{
		{"arrives after its delay", []string{"after a 50ms", "len 0", "waiters 1", "step 49ms", "len 0", "step 1ms", "len 1", "get a", "waiters 0"}, 1},
		{"zero delay adds now", []string{"after a 0s", "len 1", "waiters 0"}, 0},
		{"negative delay adds now", []string{"after a -1h", "len 1", "get a"}, 0},
		{"comes out in due order", []string{
			"after a 30ms", "after b 10ms", "after c 20ms", "step 30ms", "len 3", "get b", "get c", "get a"}, 1},
		{"equal due times all arrive", []string{"after a 10ms", "after b 10ms", "after c 10ms", "step 10ms", "len 3"}, 1},
		{"re-add keeps the earlier time", []string{
			"after a 100ms", "after a 50ms", "after a 70ms", "step 50ms", "len 1", "get a", "done a", "step 100ms", "len 0"}, 1},
		{"re-add with a later time changes nothing", []string{"after a 10ms", "after a 1h", "step 10ms", "len 1"}, 1},
		{"a queued item is not duplicated", []string{"add a", "after a 10ms", "step 10ms", "len 1", "get a", "len 0"}, 1},
		{"an earlier item re-arms the one timer", []string{
			"after a 1h", "after b 1m", "after c 1s", "waiters 1", "step 1s", "get c", "step 59s", "get b", "step 59m", "get a", "waiters 0"}, 1},
		{"held item comes back after done", []string{"add a", "get a", "after a 10ms", "step 10ms", "len 0", "done a", "len 1"}, 1},
		{"max delay never arrives", []string{"after a max", "step 100000h", "len 0", "waiters 1"}, 1},
		{"shutdown drops waiting items", []string{"after a 10ms", "shutdown", "step 1h", "len 0", "waiters 0"}, 1},
		{"after shutdown is dropped", []string{"shutdown", "after a 0s", "after b 1ms", "step 1ms", "len 0", "waiters 0"}, 0},
		{"many waiting items, one timer", func() []string {
			var s []string
			for i := range 50 {
				s = append(s, fmt.Sprintf("after i%d %dms", i, 50-i))
			}
			for i := range 50 {
				s = append(s, "step 1ms", fmt.Sprintf("get i%d", 49-i))
			}
			return append(s, "waiters 0")
		}(), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := runDelayScript(t, tc.script)
			if got := fc.timers.Load(); got != tc.wantTimers {
				t.Fatalf("%d timers created, want %d", got, tc.wantTimers)
			}
		})
	}
}

// blockingQueue is an inner queue whose Add blocks until release is closed.
type blockingQueue struct {
	TypedInterface[string]
	entered chan struct{}
	release chan struct{}
}

func (b *blockingQueue) Add(item string) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-b.release
	b.TypedInterface.Add(item)
}

// TestAddAfterDoesNotBlock holds the waiting goroutine inside the inner queue's Add and checks
// that AddAfter still returns for more items than client-go's 1000-slot channel holds.
func TestAddAfterDoesNotBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(t0)
		inner := &blockingQueue{TypedInterface: NewTyped[string](), entered: make(chan struct{}, 1), release: make(chan struct{})}
		q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc, Queue: inner})
		defer q.ShutDown()
		q.AddAfter("first", time.Millisecond)
		synctest.Wait()
		fc.Step(time.Millisecond)
		<-inner.entered // the waiting goroutine is stuck in Add
		const n = 5000
		done := make(chan struct{})
		go func() {
			for i := range n {
				q.AddAfter(strconv.Itoa(i), time.Duration(i+1)*time.Second)
			}
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("AddAfter blocked while the waiting goroutine was busy")
		}
		close(inner.release)
		synctest.Wait()
		fc.Step(n * time.Second)
		synctest.Wait()
		if got := q.Len(); got != n+1 {
			t.Fatalf("Len = %d, want %d", got, n+1)
		}
	})
}

// TestShutDownWithDrainStopsWaitingLoop: with items still waiting, ShutDownWithDrain alone
// must stop the waiting goroutine (synctest fails the test if a goroutine is left blocked).
func TestShutDownWithDrainStopsWaitingLoop(t *testing.T) {
	cases := []struct {
		name string
		ctor func(c clock.WithTicker) TypedInterface[string]
	}{
		{"delaying", func(c clock.WithTicker) TypedInterface[string] {
			q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: c})
			q.AddAfter("a", time.Hour)
			return q
		}},
		{"rate limited", func(c clock.WithTicker) TypedInterface[string] {
			q := NewTypedRateLimitingQueueWithConfig(DefaultTypedControllerRateLimiter[string](),
				TypedRateLimitingQueueConfig[string]{Clock: c})
			q.AddAfter("a", time.Hour)
			return q
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := testingclock.NewFakeClock(t0)
				q := tc.ctor(fc)
				q.Add("b")
				item, _ := q.Get()
				go func() {
					synctest.Wait()
					q.Done(item)
				}()
				q.ShutDownWithDrain()
				if !q.ShuttingDown() {
					t.Fatal("not shutting down")
				}
				if fc.HasWaiters() {
					t.Fatal("the waiting goroutine's timer is still registered")
				}
			})
		})
	}
}

// TestDelayingRandomInterleaving mixes AddAfter and clock steps without letting the waiting
// goroutine settle in between, so its timer fires while it is busy or woken for another
// reason. A stale tick left in the timer's channel would make a later Step block forever.
func TestDelayingRandomInterleaving(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			synctest.Test(t, func(t *testing.T) {
				fc := testingclock.NewFakeClock(t0)
				q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[int]{Clock: fc})
				defer q.ShutDown()
				due := map[int]time.Time{}
				for range 300 {
					if rng.IntN(3) == 0 {
						fc.Step(time.Duration(rng.IntN(20)) * time.Millisecond)
						continue
					}
					item := rng.IntN(40)
					d := time.Duration(rng.IntN(50)-5) * time.Millisecond
					at := fc.Now().Add(d)
					if old, ok := due[item]; !ok || at.Before(old) {
						due[item] = at
					}
					q.AddAfter(item, d)
				}
				synctest.Wait()
				// Everything due by now is queued; the rest is not.
				now := fc.Now()
				wantLen := 0
				for _, at := range due {
					if !at.After(now) {
						wantLen++
					}
				}
				if got := q.Len(); got != wantLen {
					t.Fatalf("Len = %d, want %d", got, wantLen)
				}
				fc.Step(time.Second)
				synctest.Wait()
				if got := q.Len(); got != len(due) {
					t.Fatalf("Len = %d after all are due, want %d", got, len(due))
				}
			})
		})
	}
}

// TestInnerQueueShutDown: when only the underlying queue is shut down, the waiting goroutine
// stops at its next wake-up, and the delaying queue's own ShutDown still returns.
func TestInnerQueueShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(t0)
		inner := NewTyped[string]()
		q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc, Queue: inner})
		q.AddAfter("a", time.Second)
		synctest.Wait()
		inner.ShutDown()
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown = false after the inner queue shut down")
		}
		q.AddAfter("b", time.Millisecond) // dropped
		fc.Step(time.Second)
		synctest.Wait()
		if q.Len() != 0 {
			t.Fatalf("Len = %d after shutdown", q.Len())
		}
		q.ShutDown()
	})
}

// steppingClock steps its fake clock inside NewTimer, before the timer is created: the
// interleaving where another goroutine steps the clock while the waiting goroutine is between
// reading the time and setting its timer.
type steppingClock struct {
	*testingclock.FakeClock
	stepBy time.Duration
}

func (c *steppingClock) NewTimer(d time.Duration) clock.Timer {
	c.Step(c.stepBy)
	return c.FakeClock.NewTimer(d)
}

// TestStepWhileArming: the item must arrive although the clock reached its due time while the
// timer was being set, and nothing steps the clock again.
func TestStepWhileArming(t *testing.T) {
	cases := []struct {
		name   string
		stepBy time.Duration
		delay  time.Duration
	}{
		{"step past the due time", time.Hour, time.Minute},
		{"step to the due time", time.Minute, time.Minute},
		{"step part of the way", 30 * time.Second, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := &steppingClock{FakeClock: testingclock.NewFakeClock(t0), stepBy: tc.stepBy}
				q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc})
				defer q.ShutDown()
				q.AddAfter("a", tc.delay)
				synctest.Wait()
				if tc.stepBy < tc.delay {
					// Not due yet: the timer must fire when the rest of the delay has passed.
					if q.Len() != 0 {
						t.Fatal("delivered early")
					}
					fc.FakeClock.Step(tc.delay - tc.stepBy)
				}
				if item, _ := q.Get(); item != "a" {
					t.Fatalf("Get = %q", item)
				}
			})
		})
	}
}
