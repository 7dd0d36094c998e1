package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// TestEnableTiming: after EnableTiming, a queue without a metrics provider reports its times
// in Queues, and still starts no goroutine.
func TestEnableTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(t0)
		before := NewTypedWithConfig(TypedQueueConfig[string]{Name: "before", Clock: fc})
		defer before.ShutDown()
		EnableTiming()
		t.Cleanup(func() { timing.Store(false) })
		q := NewTypedWithConfig(TypedQueueConfig[string]{Name: "timed", Clock: fc})
		defer q.ShutDown()

		q.Add("a")
		q.Add("b")
		fc.Step(2 * time.Second)
		q.Get() // a
		fc.Step(time.Second)
		synctest.Wait()
		if fc.HasWaiters() {
			t.Error("a timed queue without a provider started a ticker")
		}
		got := q.status()
		if !got.Timed || got.OldestWaiting != 3*time.Second || got.LongestRunning != time.Second || got.UnfinishedWork != time.Second {
			t.Errorf("timed queue: %+v", got)
		}
		if s := before.status(); s.Timed {
			t.Errorf("a queue created before EnableTiming is timed: %+v", s)
		}
	})
}
