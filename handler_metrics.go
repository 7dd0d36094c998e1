package cache

// HandlerMetricsProvider is an optional interface an InformerMetricsProvider may implement to
// receive per-handler metrics of the informers that use it (SharedIndexInformerOptions
// InformerMetricsProvider, or the provider set with SetInformerMetricsProvider). A provider
// that does not implement it keeps working unchanged; the informer then records no handler
// metrics. As with the other metrics, they are created only for an informer with a reserved
// identity (SharedIndexInformerOptions.Identifier), once per AddEventHandler call; handler is
// the handler's name as it appears in logs.
//
// kcache extension.
type HandlerMetricsProvider interface {
	// NewHandlerPendingMetric returns the gauge of deliveries waiting for the handler:
	// notifications, or object keys while its listener coalesces (HandlerOptions.MaxPending).
	NewHandlerPendingMetric(id InformerNameAndResource, handler string) GaugeMetric

	// NewHandlerCoalescedMetric returns the counter of notifications that were folded into a
	// newer one for the same object and so never delivered on their own.
	NewHandlerCoalescedMetric(id InformerNameAndResource, handler string) CounterMetric

	// NewHandlerCoalescingEpisodesMetric returns the counter of the times the handler's
	// listener switched to coalescing.
	NewHandlerCoalescingEpisodesMetric(id InformerNameAndResource, handler string) CounterMetric

	// NewHandlerPanicsMetric returns the counter of handler panics contained
	// (HandlerOptions.ContainPanics).
	NewHandlerPanicsMetric(id InformerNameAndResource, handler string) CounterMetric
}

// handlerMetrics are the metrics a listener records; nil when the provider has none.
type handlerMetrics struct {
	pending   GaugeMetric
	coalesced CounterMetric
	episodes  CounterMetric
	panics    CounterMetric
}

// newHandlerMetrics returns the handler's metrics, or nil unless id is reserved and the
// provider (nil: the global one) implements HandlerMetricsProvider.
func newHandlerMetrics(id InformerNameAndResource, provider InformerMetricsProvider, handler string) *handlerMetrics {
	if !id.Reserved() {
		return nil
	}
	if provider == nil {
		provider = globalInformerMetricsProvider()
	}
	hp, ok := provider.(HandlerMetricsProvider)
	if !ok {
		return nil
	}
	return &handlerMetrics{
		pending:   hp.NewHandlerPendingMetric(id, handler),
		coalesced: hp.NewHandlerCoalescedMetric(id, handler),
		episodes:  hp.NewHandlerCoalescingEpisodesMetric(id, handler),
		panics:    hp.NewHandlerPanicsMetric(id, handler),
	}
}
