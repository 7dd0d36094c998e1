package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kcache/cache/workqueue"
)

// A queue fed by a producer and drained by workers. Duplicate keys added before a worker
// takes them are processed once.
func Example() {
	q := workqueue.NewTyped[string]()

	var mu sync.Mutex
	processed := map[string]int{}
	var workers sync.WaitGroup
	for range 3 {
		workers.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				processed[key]++
				mu.Unlock()
				q.Done(key)
			}
		})
	}

	for _, key := range []string{"default/a", "default/b", "kube-system/c"} {
		q.Add(key)
	}
	q.ShutDownWithDrain() // stop taking adds, wait for the workers to finish what they hold
	workers.Wait()        // the workers return once the queue is empty

	fmt.Println(len(processed), "keys processed")
	// Output: 3 keys processed
}

// A controller's retry loop: a key that fails goes back with AddRateLimited and waits longer
// each time; a key that succeeds is forgotten by the rate limiter.
func ExampleNewTypedRateLimitingQueue() {
	q := workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second))

	failuresLeft := map[string]int{"flaky": 2}
	syncKey := func(key string) error {
		if failuresLeft[key] > 0 {
			failuresLeft[key]--
			return errors.New("not yet")
		}
		return nil
	}

	q.Add("stable")
	q.Add("flaky")
	for pending := 2; pending > 0; {
		key, _ := q.Get()
		if err := syncKey(key); err != nil {
			fmt.Printf("%s: %v, retry #%d\n", key, err, q.NumRequeues(key)+1)
			q.AddRateLimited(key)
		} else {
			fmt.Printf("%s: synced after %d retries\n", key, q.NumRequeues(key))
			q.Forget(key)
			pending--
		}
		q.Done(key)
	}
	q.ShutDown()
	// Output:
	// stable: synced after 0 retries
	// flaky: not yet, retry #1
	// flaky: not yet, retry #2
	// flaky: synced after 2 retries
}

// AddAfter puts an item in the queue once its delay has passed; until then Get does not see it.
func ExampleNewTypedDelayingQueue() {
	q := workqueue.NewTypedDelayingQueue[string]()
	defer q.ShutDown()

	q.AddAfter("later", 10*time.Millisecond)
	q.Add("now")
	first, _ := q.Get()
	second, _ := q.Get() // blocks until "later" is due
	fmt.Println(first, second)
	// Output: now later
}

// ParallelizeUntil spreads independent pieces of work over a few goroutines.
func ExampleParallelizeUntil() {
	var sum atomic.Int64
	workqueue.ParallelizeUntil(context.Background(), 4, 100, func(piece int) {
		sum.Add(int64(piece))
	}, workqueue.WithChunkSize(10))
	fmt.Println(sum.Load())
	// Output: 4950
}

// Queues lists every live queue with its counts: what a debug page or a metrics exporter
// reads. A queue created without a name is listed under a default one.
func ExampleQueues() {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "widgets"})
	defer q.ShutDown()
	q.Add("default/a")
	q.Add("default/b")
	q.AddAfter("default/c", time.Hour)

	for _, s := range workqueue.Queues() {
		if s.Name == "widgets" {
			fmt.Printf("%s: %d waiting, %d delayed, %d adds, %d retries\n", s.Name, s.Depth, s.Delayed, s.Adds, s.Retries)
		}
	}
	// Output: widgets: 2 waiting, 1 delayed, 2 adds, 1 retries
}
