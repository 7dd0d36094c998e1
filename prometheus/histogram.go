package prometheus

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kcache/cache/workqueue"
)

// histogramFamily hands out the histogram of one queue.
type histogramFamily interface {
	with(labels []string) workqueue.HistogramMetric
}

// clientHistograms is a client_golang HistogramVec, used when the registry already holds
// controller-runtime's histograms: a weighted observation is then that many Observe calls.
type clientHistograms struct{ *prometheus.HistogramVec }

func (h clientHistograms) with(labels []string) workqueue.HistogramMetric {
	return h.WithLabelValues(labels...)
}

// weightedHistogramVec is a family of histograms with queueBuckets that take weighted
// observations (workqueue.WeightedHistogramMetric), which client_golang's do not: a sampling
// queue records one timed item for the items since the last. It is a prometheus.Collector.
type weightedHistogramVec struct {
	desc *prometheus.Desc
	// mu guards children.
	mu       sync.Mutex
	children map[string]*weightedHistogram
}

func newWeightedHistogramVec(name, help string, labels []string) *weightedHistogramVec {
	return &weightedHistogramVec{
		desc:     prometheus.NewDesc(prometheus.BuildFQName("", "workqueue", name), help, labels, nil),
		children: map[string]*weightedHistogram{},
	}
}

// with returns the histogram of the given label values, the same one for the same values.
func (v *weightedHistogramVec) with(labels []string) workqueue.HistogramMetric {
	key := strings.Join(labels, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	h := v.children[key]
	if h == nil {
		h = &weightedHistogram{labels: slices.Clone(labels), counts: make([]atomic.Uint64, len(queueBuckets)+1)}
		v.children[key] = h
	}
	return h
}

// Describe implements prometheus.Collector.
func (v *weightedHistogramVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

// Collect implements prometheus.Collector.
func (v *weightedHistogramVec) Collect(ch chan<- prometheus.Metric) {
	v.mu.Lock()
	children := make([]*weightedHistogram, 0, len(v.children))
	for _, h := range v.children {
		children = append(children, h)
	}
	v.mu.Unlock()
	for _, h := range children {
		ch <- h.metric(v.desc)
	}
}

// weightedHistogram is one histogram of a weightedHistogramVec. Safe for concurrent use.
type weightedHistogram struct {
	labels []string
	counts []atomic.Uint64 // per bucket of queueBuckets, and last above them all
	sum    atomic.Uint64   // float64 bits
}

// Observe implements workqueue.HistogramMetric.
func (h *weightedHistogram) Observe(v float64) { h.ObserveWeighted(v, 1) }

// ObserveWeighted implements workqueue.WeightedHistogramMetric.
func (h *weightedHistogram) ObserveWeighted(v float64, n uint64) {
	h.counts[sort.SearchFloat64s(queueBuckets, v)].Add(n)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v*float64(n))) {
			return
		}
	}
}

// metric returns the histogram's present value as a const metric of desc.
func (h *weightedHistogram) metric(desc *prometheus.Desc) prometheus.Metric {
	buckets := make(map[float64]uint64, len(queueBuckets))
	var count uint64
	for i, upper := range queueBuckets {
		count += h.counts[i].Load()
		buckets[upper] = count
	}
	count += h.counts[len(queueBuckets)].Load()
	return prometheus.MustNewConstHistogram(desc, count, math.Float64frombits(h.sum.Load()), buckets, h.labels...)
}
