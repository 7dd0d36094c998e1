package cache

import (
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// infTestGauge records the last value set and how many times.
type infTestGauge struct {
	mu   sync.Mutex
	last float64
	sets int
}

func (g *infTestGauge) Set(v float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.last, g.sets = v, g.sets+1
}

func (g *infTestGauge) Observe(v float64) { g.Set(v) }

func (g *infTestGauge) get() (float64, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last, g.sets
}

// infTestMetrics is an InformerMetricsProvider that hands out one gauge per metric.
type infTestMetrics struct {
	queued, latency, storeRV infTestGauge
}

func (m *infTestMetrics) NewQueuedItemMetric(InformerNameAndResource) GaugeMetric { return &m.queued }
func (m *infTestMetrics) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric {
	return &m.latency
}
func (m *infTestMetrics) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return &m.storeRV
}

// TestSharedInformerMetrics: an informer with a reserved identity publishes its queue and
// store metrics through the provider in its options; without one it publishes nothing.
func TestSharedInformerMetrics(t *testing.T) {
	cases := []struct {
		name     string
		reserved bool
	}{
		{name: "reserved identity", reserved: true},
		{name: "no identity", reserved: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ResetInformerNamesForTesting()
			defer ResetInformerNamesForTesting()
			var id InformerNameAndResource
			if tc.reserved {
				name, err := NewInformerName("informer-metrics-test")
				if err != nil {
					t.Fatal(err)
				}
				id = name.WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
			}
			metrics := &infTestMetrics{}
			src := infTestSource("a", "b")
			inf := newSharedIndexInformer(src, &v1.Pod{}, SharedIndexInformerOptions{
				Identifier: id, InformerMetricsProvider: metrics,
			}, clock.RealClock{})
			rec := newInfTestRecorder()
			reg, _ := inf.AddEventHandler(rec)
			infTestRun(t, inf)
			infTestWaitSynced(t, inf, reg)
			src.Add(infTestPod("ns", "c", ""))
			infTestNextN(t, rec, 3)

			_, queuedSets := metrics.queued.get()
			_, latencySets := metrics.latency.get()
			rv, rvSets := metrics.storeRV.get()
			if !tc.reserved {
				if queuedSets+latencySets+rvSets != 0 {
					t.Fatalf("metrics published without an identity: %d %d %d", queuedSets, latencySets, rvSets)
				}
				return
			}
			if queuedSets == 0 || latencySets == 0 {
				t.Fatalf("queue metrics not published: queued %d, latency %d", queuedSets, latencySets)
			}
			if rvSets == 0 || rv < 2 {
				t.Fatalf("store resource version gauge = %v after %d sets", rv, rvSets)
			}
		})
	}
}
