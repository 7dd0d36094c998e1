package prometheus

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kcache/cache"
)

// informerLabels label every informer metric: the informer's name and its resource (empty
// when unknown).
var informerLabels = []string{"name", "group", "version", "resource"}

// handlerLabels label every handler metric: the informer's name and the handler's.
var handlerLabels = []string{"name", "handler"}

func informerDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc("kcache_informer_"+name, help, append(append([]string{}, informerLabels...), extra...), nil)
}

func handlerDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("kcache_informer_handler_"+name, help, handlerLabels, nil)
}

// The informer and handler metrics. Their names are kcache's own: neither client-go nor
// controller-runtime exports these figures.
var (
	descSynced         = informerDesc("synced", "1 when the informer has synced (HasSynced), else 0.")
	descStartupLatency = informerDesc("startup_latency_seconds",
		"Seconds from Run to synced; absent until the informer has synced.")
	descObjects    = informerDesc("objects", "Objects in the informer's store.")
	descLastRVSeen = informerDesc("last_resource_version_seen",
		"Last resource version the reflector saw (decimal versions only, last 15 digits).")
	descLastRVProcessed = informerDesc("last_resource_version_processed",
		"Newest resource version processed into the store (decimal versions only, last 15 digits).")
	descLists   = informerDesc("lists_total", "Full listings (LIST or streaming watch-list) started.")
	descRelists = informerDesc("relists_total",
		"Full listings after the first, by cause: expired (410), watch_list_fallback, error.", "cause")
	descWatchRestarts  = informerDesc("watch_restarts_total", "Watches started after the first.")
	descLastWatchError = informerDesc("last_watch_error_timestamp_seconds",
		"Unix time of the last error a watch ended or failed to start with; absent if none.")
	descEvents = informerDesc("events_total", "Changes applied to the store (each object of a list counts).")

	descPending   = handlerDesc("pending", "Notifications waiting for the handler (object keys while coalescing).")
	descLag       = handlerDesc("lag_seconds", "Age of the handler's oldest waiting notification; 0 when none waits.")
	descProcessed = handlerDesc("processed_total", "Handler calls that returned (or panicked).")
	descCoalesced = handlerDesc("coalesced_total",
		"Notifications folded into a newer one for the same object and never delivered on their own.")
	descEpisodes = handlerDesc("coalescing_episodes_total", "Times the handler's listener switched to coalescing.")
	descPanics   = handlerDesc("panics_total", "Handler panics contained (HandlerOptions.ContainPanics).")
	descDuration = handlerDesc("duration_seconds", "Seconds spent in each handler call.")
)

// informerCollector turns cache.InformerStatuses into metrics at each scrape.
type informerCollector struct{}

// Describe implements prometheus.Collector.
func (informerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSynced, descStartupLatency, descObjects, descLastRVSeen,
		descLastRVProcessed, descLists, descRelists, descWatchRestarts, descLastWatchError, descEvents,
		descPending, descLag, descProcessed, descCoalesced, descEpisodes, descPanics, descDuration} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (informerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range cache.InformerStatuses() {
		collectInformer(ch, st)
	}
}

func collectInformer(ch chan<- prometheus.Metric, st cache.InformerStatus) {
	lv := []string{st.Name, st.Resource.Group, st.Resource.Version, st.Resource.Resource}
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(lv[:4:4], extra...)...)
	}
	counter := func(d *prometheus.Desc, v uint64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(lv[:4:4], extra...)...)
	}
	synced := 0.0
	if st.Synced {
		synced = 1
		gauge(descStartupLatency, st.StartupLatency.Seconds())
	}
	gauge(descSynced, synced)
	gauge(descObjects, float64(st.Objects))
	if v, ok := decimalResourceVersion(st.LastResourceVersionSeen); ok {
		gauge(descLastRVSeen, v)
	}
	if v, ok := decimalResourceVersion(st.LastResourceVersionProcessed); ok {
		gauge(descLastRVProcessed, v)
	}
	counter(descLists, st.Lists)
	counter(descRelists, st.Relists.Expired, "expired")
	counter(descRelists, st.Relists.WatchListFallback, "watch_list_fallback")
	counter(descRelists, st.Relists.Error, "error")
	counter(descWatchRestarts, st.WatchRestarts)
	if !st.LastWatchErrorAt.IsZero() {
		gauge(descLastWatchError, float64(st.LastWatchErrorAt.UnixNano())/1e9)
	}
	counter(descEvents, st.EventsIn)

	for _, h := range st.Handlers {
		hv := []string{st.Name, h.Name}
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(h.Pending), hv...)
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, h.Lag.Seconds(), hv...)
		ch <- prometheus.MustNewConstMetric(descProcessed, prometheus.CounterValue, float64(h.Processed), hv...)
		ch <- prometheus.MustNewConstMetric(descCoalesced, prometheus.CounterValue, float64(h.Coalesced), hv...)
		ch <- prometheus.MustNewConstMetric(descEpisodes, prometheus.CounterValue, float64(h.CoalescingEpisodes), hv...)
		ch <- prometheus.MustNewConstMetric(descPanics, prometheus.CounterValue, float64(h.Panics), hv...)
		ch <- prometheus.MustNewConstHistogram(descDuration, h.HandlerTime.Count, h.HandlerTime.Sum.Seconds(),
			cumulativeBuckets(h.HandlerTime), hv...)
	}
}

// cumulativeBuckets converts a DurationHistogram's per-bucket counts into Prometheus's
// cumulative buckets keyed by upper bound in seconds (the last, unbounded bucket is +Inf,
// which Prometheus takes from the count).
func cumulativeBuckets(h cache.DurationHistogram) map[float64]uint64 {
	out := make(map[float64]uint64, len(h.Bounds))
	var sum uint64
	for i, b := range h.Bounds {
		if i < len(h.Counts) {
			sum += h.Counts[i]
		}
		out[b.Seconds()] = sum
	}
	return out
}

// maxExactDigits is how many decimal digits a float64 holds exactly.
const maxExactDigits = 15

// decimalResourceVersion returns rv as a number when it is decimal (Kubernetes resource
// versions issued by etcd are), keeping its last 15 digits.
func decimalResourceVersion(rv string) (float64, bool) {
	if len(rv) > maxExactDigits {
		rv = rv[len(rv)-maxExactDigits:]
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(v), true
}
