// Package priorityqueue is a rate-limited work queue that hands out items by priority. It has
// the surface of controller-runtime's pkg/controller/priorityqueue (PriorityQueue, AddOpts,
// New, Opt), so code moves over by changing an import, and it plugs into client-go style
// code as a workqueue.TypedRateLimitingInterface.
//
// # Order
//
// Ready items are handed out highest priority first, FIFO within a priority. Adding an item
// that is already queued keeps the higher of the two priorities and the earlier of the two
// ready times; a raised priority puts the item at the back of its new priority. An item
// that becomes ready after a delay joins the back of its priority when it becomes ready.
// An item added while it is being processed is handed out again only after Done, but the
// re-Add's time and priority give it its place, as in controller-runtime: at Done it comes
// before the items of its priority that became ready after the re-Add (a delayed re-Add
// takes its place when the delay ends; a raise while it is held, when it is raised).
//
// # Aging: no ready item starves
//
// Strict priority lets a steady stream of high-priority items hold back a low-priority one
// forever (controller-runtime issue #3496). This queue adds one rule (Opts.Aging):
//
//	An item is aged once it has been ready for Aging.After (default 10s). When the item that
//	has been ready longest is aged and at least Aging.Every-1 (default 3) handouts have
//	passed since this rule last applied, that item is handed out instead of the priority
//	order's choice.
//
// So aged items get at least one of every Every handouts, oldest first, and priorities rule
// the rest. The bound: an item x that has been ready for Aging.After is handed out within
// Every×(A+1) handouts, where A is the number of items that became ready before x and are
// still queued at that moment (A < Len()), counting an item re-added while it is processed
// as ready from its re-Add. The items ahead of x can only leave, and each run of Every
// handouts hands out x or one of them. In time: x waits at most
// After + Every×(A+1)/r, where r is the rate at which workers take items. Aging.Disabled
// restores strict priority.
//
// # Goroutines, shutdown and metrics
//
// New starts no goroutine. One goroutine sleeps on a timer of Opts.Clock while there is
// something to wake up for: an item delayed by AddAfter or AddRateLimited, or, when metrics
// are recorded, an item being processed (see below). It exits when there is nothing left,
// so an idle queue runs none. Blocked Gets are handed items directly, without a relay
// goroutine. ShutDown wakes every blocked Get; ShutDownWithDrain waits for the items being
// processed, as the plain workqueue does.
//
// A named queue records the workqueue metrics through Opts.MetricProvider: depth counts the
// ready items (by priority if the provider implements MetricsProviderWithPriority); adds
// counts items becoming ready. The unfinished-work and longest-running gauges are
// recomputed every 500ms while items are being processed — on a hand-out or a Done once
// 500ms have passed, and by the timer when no call comes, so they keep moving when every
// worker is stuck — and set back to zero once nothing is processing.
package priorityqueue
