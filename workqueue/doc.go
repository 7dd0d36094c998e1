// Package workqueue provides the work queues controllers use to process keys: a plain queue,
// a delaying queue that adds items after a delay, and a rate-limited queue that asks a rate
// limiter for that delay. It is source-compatible with k8s.io/client-go/util/workqueue v0.36.3.
//
// Every queue is:
//   - Fair: items are handed out in the order they were added (or in the order of a custom
//     Queue).
//   - Stingy: an item added several times before a worker takes it is processed once, and an
//     item is never held by two workers at once.
//   - Re-entrant: an item added while a worker holds it is handed out again after the worker
//     calls Done.
//   - Stoppable: ShutDown lets workers finish what is queued, then Get reports shutdown;
//     ShutDownWithDrain also waits for the items being processed.
//
// A worker loop looks like this:
//
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		if err := process(key); err != nil {
//			q.AddRateLimited(key) // retry later, with backoff
//		} else {
//			q.Forget(key) // reset the backoff
//		}
//		q.Done(key)
//	}
//
// Where this package differs from client-go, it is to fix a weakness and the doc comment says
// so: AddAfter never blocks and the delaying goroutine uses one timer and no heartbeat,
// ShutDownWithDrain stops that goroutine at once, Done of an item that is not being processed
// is ignored, a blocked Get is handed its item without taking the lock again, the items'
// states are spread over 32 locked shards so that producers and workers on different CPUs do
// not queue behind one lock (see Typed), a named queue's per-item metrics bookkeeping lives in
// those shards and its add times travel with the items in the FIFO, and the unfinished-work
// metrics are updated in O(shards) rather than by walking every item under the lock.
//
// Time is read from an injectable k8s.io/utils/clock clock (Clock in each config), so tests can
// drive delays with a fake clock.
package workqueue
