package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/kcache/cache"
	"github.com/kcache/cache/workqueue"
	"github.com/kcache/cache/workqueue/priorityqueue"
)

// usePriority switches the controller to the priority workqueue and plays a restart: the
// workers start only after the initial list is queued and two widgets have really changed,
// and the output shows those changes reconciled before the initial-list backlog.
var usePriority = flag.Bool("priority", false,
	"use the priority workqueue: initial-list adds and unchanged objects wait behind real changes")

// newQueue returns the controller's workqueue: the plain rate-limited queue, or with
// -priority a priority queue whose workers wait for startWorkers.
func newQueue(out *printer) workqueue.TypedRateLimitingInterface[cache.ObjectName] {
	if !*usePriority {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "widgets"})
	}
	return &priorityWorkqueue{
		PriorityQueue: priorityqueue.New("widgets",
			priorityqueue.WithRateLimiter(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())),
		out:  out,
		gate: make(chan struct{}),
	}
}

// priorityWorkqueue is the priority queue with a gate in front of Get, and a log line for
// each key handed out with its priority.
type priorityWorkqueue struct {
	priorityqueue.PriorityQueue[cache.ObjectName]
	out  *printer
	gate chan struct{} // closed when the workers may start
}

func (q *priorityWorkqueue) Get() (cache.ObjectName, bool) {
	<-q.gate
	key, priority, shutdown := q.GetWithPriority()
	if !shutdown {
		q.out.logf("queue", "hand out %-18s priority %4d", key.String(), priority)
	}
	return key, shutdown
}

func (q *priorityWorkqueue) open() {
	select {
	case <-q.gate:
	default:
		close(q.gate)
	}
}

func (q *priorityWorkqueue) ShutDown() {
	q.open()
	q.PriorityQueue.ShutDown()
}

// enqueueLow enqueues name at low priority when the queue has priorities, as
// controller-runtime does for initial-list adds and unchanged updates.
func (c *controller) enqueueLow(name cache.ObjectName) {
	q, ok := c.queue.(*priorityWorkqueue)
	if !ok {
		c.queue.Add(name)
		return
	}
	low := priorityqueue.LowPriority
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, name)
}

// restartDemo, with -priority, plays a controller restart: the initial list is queued at
// low priority, two widgets change while the workers are still held, and then the workers
// start. Without -priority it does nothing.
func (c *controller) restartDemo(ctx context.Context, changes func() int) error {
	q, ok := c.queue.(*priorityWorkqueue)
	if !ok {
		return nil
	}
	c.out.logf("queue", "--- priority queue: %d initial-list keys wait at priority %d; two widgets change before the workers start",
		q.Len(), priorityqueue.LowPriority)
	want := changes()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		seen := c.counts.updates
		c.mu.Unlock()
		if seen >= want {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the changes: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
	c.out.logf("queue", "--- workers start: the changed widgets come first, then the backlog")
	q.open()
	return nil
}
