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
package prometheus
