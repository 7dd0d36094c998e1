package prometheus

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kcache/cache"
	"github.com/kcache/cache/workqueue"
)

// Register registers kcache's metrics with reg:
//
//   - per informer, labelled name, group, version, resource (the informer's name and its
//     resource, empty when unknown): kcache_informer_synced, _startup_latency_seconds,
//     _objects, _last_resource_version_seen, _last_resource_version_processed, _lists_total,
//     _relists_total{cause="expired"|"watch_list_fallback"|"error"}, _watch_restarts_total,
//     _last_watch_error_timestamp_seconds, _events_total;
//   - per event handler, labelled name (the informer's) and handler:
//     kcache_informer_handler_pending, _lag_seconds, _processed_total, _coalesced_total,
//     _coalescing_episodes_total, _panics_total, _duration_seconds (histogram);
//   - per workqueue, client-go's set labelled name: workqueue_depth, workqueue_adds_total,
//     workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
//     workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds,
//     workqueue_retries_total, plus workqueue_oldest_waiting_seconds. Unnamed queues are
//     included under their default names. When reg already holds controller-runtime's
//     workqueue metrics (its metrics.Registry does), kcache's queues are recorded in those,
//     with its labels (controller = the queue's name), so one dashboard shows both.
//
// Register turns on cache.EnableInformerTiming (handler lag and duration). It installs the
// workqueue provider with workqueue.SetProvider, whose first call wins: call Register before
// creating queues, once per process (a second call with another registry gets the informer
// metrics but not the queues'). Registering twice with the same registry is not an error.
//
// kcache extension.
func Register(reg prometheus.Registerer) error {
	if reg == nil {
		return errors.New("kcacheprom: nil Registerer")
	}
	cache.EnableInformerTiming()
	if _, err := register(reg, prometheus.Collector(informerCollector{})); err != nil {
		return fmt.Errorf("kcacheprom: registering the informer metrics: %w", err)
	}
	p, err := newQueueProvider(reg)
	if err != nil {
		return err
	}
	workqueue.SetProvider(p)
	return nil
}
