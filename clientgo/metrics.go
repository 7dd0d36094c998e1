package clientgo

import (
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
)

// kcacheNames holds, per informer name, the kcache InformerName the bridge reserved for it.
var kcacheNames = struct {
	mu    sync.Mutex // mu guards names
	names map[string]*cache.InformerName
}{names: map[string]*cache.InformerName{}}

// convertMetrics turns client-go's metrics identity and provider into kcache's. An identity
// that client-go would not publish metrics for (not Reserved) gives none. A reserved one is
// registered under the same name and resource with kcache (once per name and resource, as in
// client-go; a name reserved with kcache directly by other code publishes no metrics here).
// The metrics come from provider, called with client-go's own identity; with provider nil,
// from kcache's global provider (cache.SetInformerMetricsProvider: client-go's global provider
// is not reachable from outside client-go).
func convertMetrics(id toolscache.InformerNameAndResource, provider toolscache.InformerMetricsProvider) (cache.InformerNameAndResource, cache.InformerMetricsProvider) {
	if !id.Reserved() {
		return cache.InformerNameAndResource{}, nil
	}
	kcacheNames.mu.Lock()
	name, ok := kcacheNames.names[id.Name()]
	if !ok {
		var err error
		if name, err = cache.NewInformerName(id.Name()); err != nil {
			klog.TODO().Error(err, "Informer name is reserved with kcache already - metrics will not be published", "informerName", id.Name())
		}
		kcacheNames.names[id.Name()] = name // nil after an error: reserves nothing
	}
	kcacheNames.mu.Unlock()
	kid := name.WithResource(id.GroupVersionResource())
	if provider == nil {
		return kid, nil
	}
	return kid, metricsProvider{provider: provider, id: id}
}

// metricsProvider is a client-go metrics provider behind kcache's interface. It asks provider
// for the metrics of id, client-go's identity of the informer, so that the metrics stop when
// client-go's InformerName is released.
type metricsProvider struct {
	provider toolscache.InformerMetricsProvider
	id       toolscache.InformerNameAndResource
}

// NewQueuedItemMetric implements cache.InformerMetricsProvider.
func (m metricsProvider) NewQueuedItemMetric(cache.InformerNameAndResource) cache.GaugeMetric {
	return m.provider.NewQueuedItemMetric(m.id)
}

// NewProcessingLatencyMetric implements cache.InformerMetricsProvider.
func (m metricsProvider) NewProcessingLatencyMetric(cache.InformerNameAndResource) cache.HistogramMetric {
	return m.provider.NewProcessingLatencyMetric(m.id)
}

// NewStoreResourceVersionMetric implements cache.InformerMetricsProvider.
func (m metricsProvider) NewStoreResourceVersionMetric(cache.InformerNameAndResource) cache.GaugeMetric {
	return m.provider.NewStoreResourceVersionMetric(m.id)
}
