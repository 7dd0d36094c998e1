package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func TestRateLimitingQueue(t *testing.T) {
	cases := []struct {
		name string
		// run drives the queue; step advances the fake clock and lets the queue settle.
		run func(t *testing.T, q TypedRateLimitingInterface[string], step func(time.Duration))
	}{
		{"backs off exponentially", func(t *testing.T, q TypedRateLimitingInterface[string], step func(time.Duration)) {
			for i, delay := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
				q.AddRateLimited("a")
				if got := q.NumRequeues("a"); got != i+1 {
					t.Fatalf("NumRequeues = %d, want %d", got, i+1)
				}
				step(delay - time.Millisecond)
				if q.Len() != 0 {
					t.Fatalf("retry %d arrived before %v", i, delay)
				}
				step(time.Millisecond)
				if item, _ := q.Get(); item != "a" {
					t.Fatalf("Get = %q", item)
				}
				q.Done("a")
			}
		}},
		{"forget resets the backoff", func(t *testing.T, q TypedRateLimitingInterface[string], step func(time.Duration)) {
			q.AddRateLimited("a")
			q.AddRateLimited("a")
			q.Forget("a")
			if got := q.NumRequeues("a"); got != 0 {
				t.Fatalf("NumRequeues after Forget = %d", got)
			}
			step(10 * time.Millisecond) // the earlier of the two waits
			if q.Len() != 1 {
				t.Fatalf("Len = %d, want 1", q.Len())
			}
		}},
		{"plain adds are not delayed", func(t *testing.T, q TypedRateLimitingInterface[string], step func(time.Duration)) {
			q.Add("a")
			q.AddAfter("b", 0)
			if q.Len() != 2 || q.NumRequeues("a") != 0 {
				t.Fatalf("Len = %d, NumRequeues = %d", q.Len(), q.NumRequeues("a"))
			}
		}},
		{"adds after shutdown are dropped", func(t *testing.T, q TypedRateLimitingInterface[string], step func(time.Duration)) {
			q.ShutDown()
			q.AddRateLimited("a")
			step(time.Hour)
			if _, shutdown := q.Get(); !shutdown {
				t.Fatal("Get after shutdown returned an item")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := testingclock.NewFakeClock(t0)
				q := NewTypedRateLimitingQueueWithConfig(
					NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, time.Second),
					TypedRateLimitingQueueConfig[string]{Clock: fc})
				defer q.ShutDown()
				tc.run(t, q, func(d time.Duration) {
					synctest.Wait()
					fc.Step(d)
					synctest.Wait()
				})
			})
		})
	}
}

func TestRateLimitingQueueWithCustomDelayingQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(t0)
		dq := NewDelayingQueueWithCustomClock(fc, "")
		q := NewRateLimitingQueueWithDelayingInterface(dq, NewItemFastSlowRateLimiter(time.Second, time.Hour, 1))
		defer q.ShutDown()
		q.AddRateLimited("a")
		synctest.Wait()
		fc.Step(time.Second)
		synctest.Wait()
		if dq.Len() != 1 {
			t.Fatalf("the custom delaying queue got %d items, want 1", dq.Len())
		}
		q.ShutDown()
		if !dq.ShuttingDown() {
			t.Fatal("ShutDown did not reach the custom delaying queue")
		}
	})
}
