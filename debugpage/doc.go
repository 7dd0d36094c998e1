// Package debugpage serves a page that shows what every kcache informer and workqueue of the
// process is doing: an http.Handler to mount next to net/http/pprof.
//
//	mux := http.NewServeMux()
//	mux.Handle("/debug/kcache/", debugpage.New(debugpage.Options{}))
//
// The overview lists every running informer (its type, whether it is synced and, if it is
// not, why, in words; objects, last resourceVersion, listings and relists by cause, watch
// restarts and the last watch error, events in), each informer's event handlers (pending
// notifications, the age of the oldest one, processed, coalesced, contained panics, time in
// the handler) and every live workqueue (depth, adds, items processing, retries, delayed items
// and, for a queue with a metrics provider, the age of the oldest waiting item, the longest
// running item and the unfinished work). Add ?format=json to get the same as JSON. The key
// view lists an informer's keys and resourceVersions in sorted pages that link to each other.
//
// The page only renders: the informers' state comes from cache.InformerStatuses and the
// queues' from workqueue.Queues, read afresh on every request. It is plain HTML with inline
// styles — no scripts, no external assets — so it works in any browser, text ones included,
// and stays light with thousands of objects. New turns on the timing the page shows (handler
// lag, time in handlers, workqueue item ages; see New).
//
// # Object contents
//
// Caches hold Secrets, so the page never shows an object's contents unless it is created with
// Options.ShowObject, which is both the switch and the redaction hook: it gets each object
// before it is shown and returns what to show, or false to withhold it. For example, to show
// everything but Secrets:
//
//	debugpage.New(debugpage.Options{
//		ShowObject: func(informer string, obj any) (any, bool) {
//			_, secret := obj.(*corev1.Secret)
//			return obj, !secret
//		},
//	})
//
// The page itself has no authentication: mount it only on a listener that is not exposed
// (127.0.0.1, or behind the same protection as pprof).
//
// kcache extension.
package debugpage
