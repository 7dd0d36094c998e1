package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// GaugeMetric is a metric that is set to a value.
type GaugeMetric interface {
	Set(float64)
}

// CounterMetric is a metric that counts up.
type CounterMetric interface {
	Inc()
}

// SummaryMetric is a metric that records observations in a summary.
type SummaryMetric interface {
	Observe(float64)
}

// HistogramMetric is a metric that records observations in a histogram.
type HistogramMetric interface {
	Observe(float64)
}

// noopMetric implements every metric interface and records nothing.
type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Observe(float64) {}
func (noopMetric) Set(float64)     {}

// InformerMetricsProvider creates the metrics of informer queues and stores. The metrics it
// returns should check id.Reserved() before recording, so that an informer whose identity was
// released stops publishing.
type InformerMetricsProvider interface {
	// NewQueuedItemMetric returns the gauge of items waiting in a FIFO: for DeltaFIFO the
	// number of keys with pending deltas, for RealFIFO the number of queued deltas.
	NewQueuedItemMetric(id InformerNameAndResource) GaugeMetric

	// NewProcessingLatencyMetric returns the histogram of the seconds it takes to process what
	// a FIFO pops.
	NewProcessingLatencyMetric(id InformerNameAndResource) HistogramMetric

	// NewStoreResourceVersionMetric returns the gauge of a store's latest resource version.
	NewStoreResourceVersionMetric(id InformerNameAndResource) GaugeMetric
}

type noopInformerMetricsProvider struct{}

func (noopInformerMetricsProvider) NewQueuedItemMetric(InformerNameAndResource) GaugeMetric {
	return noopMetric{}
}

func (noopInformerMetricsProvider) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric {
	return noopMetric{}
}

func (noopInformerMetricsProvider) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return noopMetric{}
}

// informerMetricsProviderState holds the process-wide provider: noop until
// SetInformerMetricsProvider.
type informerMetricsProviderState struct {
	once     sync.Once
	provider atomic.Value // of informerMetricsProviderBox
}

var informerMetricsProvider = &informerMetricsProviderState{}

type informerMetricsProviderBox struct{ InformerMetricsProvider }

// SetInformerMetricsProvider sets the provider used by every FIFO and store created afterwards
// without an explicit provider. Only the first call has an effect; a nil provider is ignored
// (and still counts as the first call).
func SetInformerMetricsProvider(metricsProvider InformerMetricsProvider) {
	informerMetricsProvider.once.Do(func() {
		if metricsProvider != nil {
			informerMetricsProvider.provider.Store(informerMetricsProviderBox{metricsProvider})
		}
	})
}

// globalInformerMetricsProvider returns the provider set by SetInformerMetricsProvider, or a
// noop one.
func globalInformerMetricsProvider() InformerMetricsProvider {
	if box, ok := informerMetricsProvider.provider.Load().(informerMetricsProviderBox); ok {
		return box.InformerMetricsProvider
	}
	return noopInformerMetricsProvider{}
}

// fifoMetrics are the metrics a FIFO records.
type fifoMetrics struct {
	numberOfQueuedItem GaugeMetric
	processingLatency  HistogramMetric
}

// noopFIFOMetrics are the metrics of every queue without a reserved identity; shared, and
// never modified.
var noopFIFOMetrics = &fifoMetrics{numberOfQueuedItem: noopMetric{}, processingLatency: noopMetric{}}

// newFIFOMetrics returns real metrics only for a reserved identity (otherwise the shared no-op
// ones, so an unnamed queue costs no allocation for them); a nil provider means the global one.
func newFIFOMetrics(id InformerNameAndResource, provider InformerMetricsProvider) *fifoMetrics {
	if !id.Reserved() {
		return noopFIFOMetrics
	}
	m := &fifoMetrics{}
	if provider == nil {
		provider = globalInformerMetricsProvider()
	}
	m.numberOfQueuedItem = provider.NewQueuedItemMetric(id)
	m.processingLatency = provider.NewProcessingLatencyMetric(id)
	return m
}

// storeMetrics are the metrics a store records.
type storeMetrics struct {
	storeResourceVersion GaugeMetric
}

// newStoreMetrics returns real metrics only for a reserved identity; a nil provider means the
// global one (client-go dropped the global provider in that case; see WithStoreMetrics).
func newStoreMetrics(id InformerNameAndResource, provider InformerMetricsProvider) *storeMetrics {
	m := &storeMetrics{storeResourceVersion: noopMetric{}}
	if !id.Reserved() {
		return m
	}
	if provider == nil {
		provider = globalInformerMetricsProvider()
	}
	m.storeResourceVersion = provider.NewStoreResourceVersionMetric(id)
	return m
}

// informerNames is the process-wide registry of reserved informer names.
var informerNames = struct {
	mu    sync.Mutex // mu guards names
	names map[string]*InformerName
}{names: map[string]*InformerName{}}

// InformerName is a process-unique informer name under which informers publish metrics. Each
// GroupVersionResource can be registered under a name once (WithResource); the first
// registration publishes metrics, later ones do not.
//
// Create it once at start-up and Release it when the informers that use it are gone. A nil
// *InformerName is valid: it has no name and reserves nothing.
type InformerName struct {
	name string
	// reserved is false once Release was called.
	reserved atomic.Bool

	mu sync.Mutex // mu guards gvrs
	// gvrs holds the flag shared with every InformerNameAndResource handed out for a GVR.
	gvrs map[schema.GroupVersionResource]*atomic.Bool
}

// NewInformerName reserves name for this process. It fails if name is empty or already
// reserved (a released name can be reserved again).
func NewInformerName(name string) (*InformerName, error) {
	if name == "" {
		return nil, errors.New("informer name cannot be empty")
	}
	informerNames.mu.Lock()
	defer informerNames.mu.Unlock()
	if existing, ok := informerNames.names[name]; ok && existing.reserved.Load() {
		return nil, fmt.Errorf("informer name %q is already registered", name)
	}
	n := &InformerName{name: name, gvrs: map[schema.GroupVersionResource]*atomic.Bool{}}
	n.reserved.Store(true)
	informerNames.names[name] = n
	return n, nil
}

// WithResource registers gvr under the name and returns the identity to give a FIFO, store or
// informer. The identity is Reserved (publishes metrics) only for the first registration of gvr
// under a reserved name; a duplicate is logged and gets an unreserved identity.
func (n *InformerName) WithResource(gvr schema.GroupVersionResource) InformerNameAndResource {
	if n == nil {
		return InformerNameAndResource{gvr: gvr}
	}
	id := InformerNameAndResource{name: n.name, gvr: gvr, reserved: &atomic.Bool{}}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.reserved.Load() {
		return id
	}
	if _, dup := n.gvrs[gvr]; dup {
		klog.TODO().Error(nil, "Duplicate informer registration - metrics will not be published",
			"informerName", n.name, "group", gvr.Group, "version", gvr.Version, "resource", gvr.Resource)
		return id
	}
	id.reserved.Store(true)
	n.gvrs[gvr] = id.reserved
	return id
}

// Release un-reserves the name and every identity WithResource handed out for it, and frees the
// name for reuse. It is idempotent.
func (n *InformerName) Release() {
	if n == nil {
		return
	}
	n.mu.Lock()
	for _, reserved := range n.gvrs {
		reserved.Store(false)
	}
	n.gvrs = map[schema.GroupVersionResource]*atomic.Bool{}
	n.reserved.Store(false)
	n.mu.Unlock()

	informerNames.mu.Lock()
	defer informerNames.mu.Unlock()
	if informerNames.names[n.name] == n {
		delete(informerNames.names, n.name)
	}
}

// Name returns the name, or "" for a nil InformerName.
func (n *InformerName) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// InformerNameAndResource identifies one informer for metrics: a name and the resource it
// serves. The zero value has no name and is not reserved.
type InformerNameAndResource struct {
	name     string
	gvr      schema.GroupVersionResource
	reserved *atomic.Bool
}

// Reserved reports whether metrics should be published for this identity: false for the zero
// value, for a duplicate registration, and once the InformerName was released. It is a single
// atomic load, cheap enough for every queue operation.
func (n InformerNameAndResource) Reserved() bool {
	return n.reserved != nil && n.reserved.Load()
}

// Name returns the informer name.
func (n InformerNameAndResource) Name() string {
	return n.name
}

// GroupVersionResource returns the resource.
func (n InformerNameAndResource) GroupVersionResource() schema.GroupVersionResource {
	return n.gvr
}

// ResetInformerNamesForTesting releases every reserved informer name. It is meant for tests
// that reserve names in more than one test case.
func ResetInformerNamesForTesting() {
	informerNames.mu.Lock()
	names := make([]*InformerName, 0, len(informerNames.names))
	for _, n := range informerNames.names {
		names = append(names, n)
	}
	informerNames.mu.Unlock()
	for _, n := range names {
		n.Release()
	}
}
