// Package prometheus exports kcache's informer, handler, reflector and workqueue metrics to
// Prometheus with one call:
//
//	if err := kcacheprom.Register(prometheus.DefaultRegisterer); err != nil { … }
//
// or, in a controller-runtime manager, Register(metrics.Registry) from
// sigs.k8s.io/controller-runtime/pkg/metrics. Every informer of the process is included —
// those of the informers factory, NewSharedIndexInformer*, the typed constructors and the
// clientgo bridge (and so a controller-runtime cache built on it) — under its name (see
// cache.InformerStatuses), with no naming or further code.
//
// The informer and handler metrics are read from cache.InformerStatuses each time the
// registry is scraped, so an informer that stops disappears from the next scrape and
// nothing is recorded between scrapes but the counters the informers keep anyway. The
// workqueue metrics are client-go's (workqueue_depth{name} and the rest, see Register), set
// through workqueue.SetProvider, plus workqueue_oldest_waiting_seconds{name}.
//
// What they cost: the provider is a workqueue.ExtendedMetricsProvider, so a queue sets depth
// and adds every 500ms rather than per item, and beyond 128 items per 500ms times one item in
// 256, recording its latency and work duration for the items since the last timed one
// (workqueue.ExtendedMetricsProvider says what that changes); the histograms take such
// weighted observations in one call. A handler's duration is timed for every call below a
// thousand calls a second, fewer beyond, down to one in 16 (cache.HandlerStatus.HandlerTime).
package prometheus
