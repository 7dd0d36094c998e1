// Package workqueue provides the work queues controllers use to process keys: a plain queue,
// a delaying queue that adds items after a delay, and a rate-limited queue that asks a rate
// limiter for that delay. It is source-compatible with k8s.io/client-go/util/workqueue v0.37.2.
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
// is ignored, and the queue gives back the memory of a burst once it has drained.
//
// Queues lists every live queue with its counts, for a debug page or an exporter; a queue
// created without a name is listed, and measured by an ExtendedMetricsProvider, under a
// default name derived from the function that created it (kcache extension).
//
// Time is read from an injectable k8s.io/utils/clock clock (Clock in each config), so tests can
// drive delays with a fake clock.
package workqueue
