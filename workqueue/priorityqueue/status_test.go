package priorityqueue

import (
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

func findQueue(name string) (workqueue.QueueStatus, bool) {
	for _, s := range workqueue.Queues() {
		if s.Name == name {
			return s, true
		}
	}
	return workqueue.QueueStatus{}, false
}

// TestQueuesListsPriorityQueues: a priority queue is in workqueue.Queues with its counts, and
// its times when it has metrics, until ShutDown.
func TestQueuesListsPriorityQueues(t *testing.T) {
	for _, timed := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			fc := clocktesting.NewFakeClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
			opts := []Opt[string]{WithClock[string](fc)}
			if timed {
				opts = append(opts, WithMetricsProvider[string](&fakeProvider{}))
			}
			q := New("pq", opts...)
			q.Add("a")
			q.Add("b")
			q.AddWithOpts(AddOpts{After: 10 * time.Second}, "c")
			fc.Step(2 * time.Second)
			if item, _ := q.Get(); item != "a" {
				t.Fatalf("Get = %q", item)
			}
			fc.Step(time.Second)
			q.Add("a") // parked: ready since now, behind b
			fc.Step(time.Second)

			got, ok := findQueue("pq")
			want := workqueue.QueueStatus{Name: "pq", Named: true, Depth: 2, Adds: 4, Processing: 1, Retries: 1, Delayed: 1}
			if timed {
				want.Timed = true
				want.OldestWaiting = 4 * time.Second // b
				want.LongestRunning, want.UnfinishedWork = 2*time.Second, 2*time.Second
			}
			if !ok || got != want {
				t.Errorf("timed=%v:\n got %+v\nwant %+v", timed, got, want)
			}
			q.ShutDown()
			if _, ok := findQueue("pq"); ok {
				t.Error("a shut-down priority queue is listed")
			}
		})
	}
}
