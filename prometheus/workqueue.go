package prometheus

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kcache/cache/workqueue"
)

// queueBuckets are the buckets of the workqueue duration histograms, client-go's and
// controller-runtime's: 10ns to 1000s.
var queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 12)

// queueProvider is the workqueue.ExtendedMetricsProvider Register installs.
type queueProvider struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        histogramFamily
	workDuration   histogramFamily
	unfinishedWork *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
	oldestWaiting  *prometheus.GaugeVec
	// controllerRuntime is true when the registry already held controller-runtime's
	// workqueue metrics (labels name and controller, and priority for the depth): the queues
	// are then recorded in those, with controller set to the queue's name as
	// controller-runtime does.
	controllerRuntime bool
}

var _ workqueue.ExtendedMetricsProvider = (*queueProvider)(nil)

// queueMetric describes one workqueue metric in client-go's form and in
// controller-runtime's (same name, other help and labels).
type queueMetric struct {
	name, help, crHelp string
	crLabels           []string
}

var (
	depthMetric = queueMetric{"depth", "Current depth of workqueue",
		"Current depth of workqueue by workqueue and priority", []string{"name", "controller", "priority"}}
	addsMetric = queueMetric{"adds_total", "Total number of adds handled by workqueue",
		"Total number of adds handled by workqueue", []string{"name", "controller"}}
	latencyMetric = queueMetric{"queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested.",
		"How long in seconds an item stays in workqueue before being requested", []string{"name", "controller"}}
	workDurationMetric = queueMetric{"work_duration_seconds", "How long in seconds processing an item from workqueue takes.",
		"How long in seconds processing an item from workqueue takes.", []string{"name", "controller"}}
	unfinishedMetric = queueMetric{"unfinished_work_seconds",
		"How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		"How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		[]string{"name", "controller"}}
	longestMetric = queueMetric{"longest_running_processor_seconds",
		"How many seconds has the longest running processor for workqueue been running.",
		"How many seconds has the longest running processor for workqueue been running.", []string{"name", "controller"}}
	retriesMetric = queueMetric{"retries_total", "Total number of retries handled by workqueue",
		"Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
		[]string{"name", "controller"}}
)

// registerVec registers the collector newVec builds, first in client-go's form; if the
// registry has the name in another form (controller-runtime's), in that form. A collector
// registered already in the same form is reused. It reports which form is in use.
func registerVec[V prometheus.Collector](reg prometheus.Registerer, m queueMetric, newVec func(help string, labels []string) V) (V, bool, error) {
	vec, err := register(reg, newVec(m.help, []string{"name"}))
	if err == nil {
		return vec, false, nil
	}
	crVec, crErr := register(reg, newVec(m.crHelp, m.crLabels))
	if crErr == nil {
		return crVec, true, nil
	}
	return vec, false, fmt.Errorf("kcacheprom: registering workqueue_%s: %w", m.name, err)
}

// registerHistograms registers the histograms of m, in client-go's form as a
// weightedHistogramVec; if the registry has them in controller-runtime's form, it uses those.
// It reports which form is in use.
func registerHistograms(reg prometheus.Registerer, m queueMetric) (histogramFamily, bool, error) {
	vec, err := register(reg, newWeightedHistogramVec(m.name, m.help, []string{"name"}))
	if err == nil {
		return vec, false, nil
	}
	crVec, crErr := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue",
		Name: m.name, Help: m.crHelp, Buckets: queueBuckets}, m.crLabels))
	if crErr == nil {
		return clientHistograms{crVec}, true, nil
	}
	return nil, false, fmt.Errorf("kcacheprom: registering workqueue_%s: %w", m.name, err)
}

// register registers c, or returns the collector of the same description registered already.
func register[V prometheus.Collector](reg prometheus.Registerer, c V) (V, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(V); ok {
			return existing, nil
		}
	}
	return c, err
}

func newQueueProvider(reg prometheus.Registerer) (*queueProvider, error) {
	p := &queueProvider{}
	gauge := func(name string) func(string, []string) *prometheus.GaugeVec {
		return func(help string, labels []string) *prometheus.GaugeVec {
			return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
		}
	}
	counter := func(name string) func(string, []string) *prometheus.CounterVec {
		return func(help string, labels []string) *prometheus.CounterVec {
			return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
		}
	}
	var err error
	var cr [7]bool
	if p.depth, cr[0], err = registerVec(reg, depthMetric, gauge(depthMetric.name)); err != nil {
		return nil, err
	}
	if p.adds, cr[1], err = registerVec(reg, addsMetric, counter(addsMetric.name)); err != nil {
		return nil, err
	}
	if p.latency, cr[2], err = registerHistograms(reg, latencyMetric); err != nil {
		return nil, err
	}
	if p.workDuration, cr[3], err = registerHistograms(reg, workDurationMetric); err != nil {
		return nil, err
	}
	if p.unfinishedWork, cr[4], err = registerVec(reg, unfinishedMetric, gauge(unfinishedMetric.name)); err != nil {
		return nil, err
	}
	if p.longestRunning, cr[5], err = registerVec(reg, longestMetric, gauge(longestMetric.name)); err != nil {
		return nil, err
	}
	if p.retries, cr[6], err = registerVec(reg, retriesMetric, counter(retriesMetric.name)); err != nil {
		return nil, err
	}
	for _, c := range cr[1:] {
		if c != cr[0] {
			return nil, errors.New("kcacheprom: the registry holds some workqueue metrics in controller-runtime's form and some in client-go's")
		}
	}
	p.controllerRuntime = cr[0]
	oldest := prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "oldest_waiting_seconds",
		Help: "How many seconds the item waiting longest in the workqueue has waited."}, []string{"name"})
	if p.oldestWaiting, err = register(reg, oldest); err != nil {
		return nil, fmt.Errorf("kcacheprom: registering workqueue_oldest_waiting_seconds: %w", err)
	}
	return p, nil
}

// labels returns the label values of queue name; depth adds controller-runtime's priority.
func (p *queueProvider) labels(name string, depth bool) []string {
	switch {
	case !p.controllerRuntime:
		return []string{name}
	case depth:
		return []string{name, name, ""}
	default:
		return []string{name, name}
	}
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(p.labels(name, true)...)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(p.labels(name, false)...)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.with(p.labels(name, false))
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.workDuration.with(p.labels(name, false))
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinishedWork.WithLabelValues(p.labels(name, false)...)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longestRunning.WithLabelValues(p.labels(name, false)...)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (p *queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(p.labels(name, false)...)
}

// NewOldestWaitingSecondsMetric implements workqueue.ExtendedMetricsProvider.
func (p *queueProvider) NewOldestWaitingSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.oldestWaiting.WithLabelValues(name)
}
