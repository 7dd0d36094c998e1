package priorityqueue

import (
	"time"

	"github.com/kcache/cache/workqueue"
)

// status returns the queue's entry in workqueue.Queues (which sets its name). Depth counts
// the ready items as Len does; Delayed the items waiting for their delay; Retries the adds
// with a delay. The durations need the start times a queue with metrics keeps. O(items being
// processed).
func (q *queue[T]) status() workqueue.QueueStatus {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.core
	s := workqueue.QueueStatus{
		Depth:   c.len(),
		Adds:    c.adds,
		Retries: q.retries,
		Delayed: c.waiting.Len(),
		Timed:   c.metrics != nil,
	}
	now := q.now()
	var oldestReady int64 = -1
	if c.age.head != nil {
		oldestReady = c.age.head.readyAt
	}
	for e := c.running.head; e != nil; e = e.runNext {
		s.Processing++
		if e.state == stateParked && (oldestReady < 0 || e.readyAt < oldestReady) {
			oldestReady = e.readyAt
		}
		if s.Timed {
			s.UnfinishedWork += time.Duration(now - e.startedAt)
		}
	}
	if s.Timed {
		if e := c.running.head; e != nil {
			s.LongestRunning = time.Duration(now - e.startedAt)
		}
		if oldestReady >= 0 {
			s.OldestWaiting = time.Duration(now - oldestReady)
		}
	}
	return s
}
