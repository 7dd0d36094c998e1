package cache

import (
	"strconv"
	"sync"
)

// MetricsProvider creates the metrics of reflectors. Each method is called once per Reflector,
// when it is created, with the reflector's name. (client-go declares this interface but never
// calls it; kcache records every metric.)
type MetricsProvider interface {
	// NewListsMetric counts full listings: LIST requests and streaming watch-lists (one per
	// attempt to fill the store, retries within it included).
	NewListsMetric(name string) CounterMetric
	// NewListDurationMetric observes the seconds each successful full listing took, until the
	// store was replaced.
	NewListDurationMetric(name string) SummaryMetric
	// NewItemsInListMetric observes the number of objects of each successful full listing.
	NewItemsInListMetric(name string) SummaryMetric

	// NewWatchesMetric counts steady-state watches (including the one a watch-list continues).
	NewWatchesMetric(name string) CounterMetric
	// NewShortWatchesMetric counts watches that ended within a second with no event (see
	// VeryShortWatchError).
	NewShortWatchesMetric(name string) CounterMetric
	// NewWatchDurationMetric observes the seconds each watch lasted.
	NewWatchDurationMetric(name string) SummaryMetric
	// NewItemsInWatchMetric observes the number of events each watch delivered.
	NewItemsInWatchMetric(name string) SummaryMetric

	// NewLastResourceVersionMetric is set to the reflector's last synced resource version
	// whenever it moves and is a decimal number (Kubernetes resource versions are; only the
	// last 15 digits are kept, to stay exact in a float64).
	NewLastResourceVersionMetric(name string) GaugeMetric
}

type noopMetricsProvider struct{}

func (noopMetricsProvider) NewListsMetric(string) CounterMetric         { return noopMetric{} }
func (noopMetricsProvider) NewListDurationMetric(string) SummaryMetric  { return noopMetric{} }
func (noopMetricsProvider) NewItemsInListMetric(string) SummaryMetric   { return noopMetric{} }
func (noopMetricsProvider) NewWatchesMetric(string) CounterMetric       { return noopMetric{} }
func (noopMetricsProvider) NewShortWatchesMetric(string) CounterMetric  { return noopMetric{} }
func (noopMetricsProvider) NewWatchDurationMetric(string) SummaryMetric { return noopMetric{} }
func (noopMetricsProvider) NewItemsInWatchMetric(string) SummaryMetric  { return noopMetric{} }
func (noopMetricsProvider) NewLastResourceVersionMetric(string) GaugeMetric {
	return noopMetric{}
}

// reflectorMetricsFactory holds the process-wide reflector metrics provider.
var reflectorMetricsFactory = struct {
	once sync.Once
	// mu guards provider.
	mu       sync.RWMutex
	provider MetricsProvider
}{provider: noopMetricsProvider{}}

// SetReflectorMetricsProvider sets the provider of the metrics of every Reflector created
// afterwards; reflectors created before keep recording nothing. Only the first call has an
// effect; a nil provider is ignored (and still counts as the first call).
func SetReflectorMetricsProvider(metricsProvider MetricsProvider) {
	reflectorMetricsFactory.once.Do(func() {
		if metricsProvider == nil {
			return
		}
		reflectorMetricsFactory.mu.Lock()
		reflectorMetricsFactory.provider = metricsProvider
		reflectorMetricsFactory.mu.Unlock()
	})
}

// reflectorMetrics are the metrics one Reflector records.
type reflectorMetrics struct {
	lists         CounterMetric
	listDuration  SummaryMetric
	itemsInList   SummaryMetric
	watches       CounterMetric
	shortWatches  CounterMetric
	watchDuration SummaryMetric
	itemsInWatch  SummaryMetric
	lastRV        GaugeMetric
}

// newReflectorMetrics creates the metrics of the reflector called name from the process-wide
// provider.
func newReflectorMetrics(name string) *reflectorMetrics {
	reflectorMetricsFactory.mu.RLock()
	p := reflectorMetricsFactory.provider
	reflectorMetricsFactory.mu.RUnlock()
	return newReflectorMetricsFrom(p, name)
}

func newReflectorMetricsFrom(p MetricsProvider, name string) *reflectorMetrics {
	return &reflectorMetrics{
		lists:         p.NewListsMetric(name),
		listDuration:  p.NewListDurationMetric(name),
		itemsInList:   p.NewItemsInListMetric(name),
		watches:       p.NewWatchesMetric(name),
		shortWatches:  p.NewShortWatchesMetric(name),
		watchDuration: p.NewWatchDurationMetric(name),
		itemsInWatch:  p.NewItemsInWatchMetric(name),
		lastRV:        p.NewLastResourceVersionMetric(name),
	}
}

// maxExactDigits is how many decimal digits a float64 holds exactly.
const maxExactDigits = 15

// setLastResourceVersion sets the last-resource-version gauge when rv is a decimal number.
func (m *reflectorMetrics) setLastResourceVersion(rv string) {
	if len(rv) > maxExactDigits {
		rv = rv[len(rv)-maxExactDigits:]
	}
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil {
		m.lastRV.Set(float64(v))
	}
}
