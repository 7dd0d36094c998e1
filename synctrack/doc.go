// Package synctrack tells a consumer of an informer when it has finished processing the
// informer's initial list, which is later than the informer itself being synced: the informer
// is synced once it has handed out every object of the initial list, a consumer only once it
// has also processed all of them.
//
// Two trackers cover the two ways consumers process items:
//
//   - SingleFileTracker, for consumers that process items one at a time in order (an event
//     handler). It only counts.
//   - AsyncTracker, for consumers that process keys in parallel (a workqueue with several
//     workers). It remembers which keys are still outstanding.
//
// Both implement the DoneChecker shape of package cache (Name and Done), so they can be passed
// to cache.WaitFor, and both report HasSynced without blocking. Lazy caches a computed value
// until told that its inputs changed.
//
// This mirrors k8s.io/client-go/tools/cache/synctrack of v0.37.2, including its method API:
// UpstreamHasSynced is a method that the owner calls once the upstream is synced.
package synctrack
