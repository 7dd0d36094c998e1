package cache

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var metricsTestGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func TestInformerNameRegistry(t *testing.T) {
	t.Cleanup(ResetInformerNamesForTesting)

	if _, err := NewInformerName(""); err == nil {
		t.Error("an empty name must be rejected")
	}
	n, err := NewInformerName("metrics-test")
	if err != nil {
		t.Fatal(err)
	}
	if n.Name() != "metrics-test" {
		t.Errorf("Name() = %q", n.Name())
	}
	if _, err := NewInformerName("metrics-test"); err == nil {
		t.Error("a reserved name must not be handed out twice")
	}

	first := n.WithResource(metricsTestGVR)
	dup := n.WithResource(metricsTestGVR)
	other := n.WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if !first.Reserved() || dup.Reserved() || !other.Reserved() {
		t.Fatalf("Reserved: first=%v dup=%v other=%v, want true false true", first.Reserved(), dup.Reserved(), other.Reserved())
	}
	if first.Name() != "metrics-test" || first.GroupVersionResource() != metricsTestGVR {
		t.Errorf("identity = %q %v", first.Name(), first.GroupVersionResource())
	}

	n.Release()
	n.Release() // idempotent
	if first.Reserved() || other.Reserved() {
		t.Error("Release must un-reserve every identity handed out")
	}
	if n.WithResource(metricsTestGVR).Reserved() {
		t.Error("a released name must not reserve new identities")
	}
	again, err := NewInformerName("metrics-test")
	if err != nil {
		t.Fatalf("a released name must be reusable: %v", err)
	}
	if !again.WithResource(metricsTestGVR).Reserved() {
		t.Error("the reused name must reserve its first identity")
	}
}

func TestNilAndZeroIdentities(t *testing.T) {
	var n *InformerName
	if n.Name() != "" {
		t.Error("nil InformerName must have an empty name")
	}
	n.Release() // must not panic
	id := n.WithResource(metricsTestGVR)
	if id.Reserved() || id.GroupVersionResource() != metricsTestGVR {
		t.Errorf("nil name identity = %+v", id)
	}
	if (InformerNameAndResource{}).Reserved() {
		t.Error("the zero identity must not be reserved")
	}
}

type metricsTestProvider struct {
	mu      sync.Mutex
	created []string
}

type metricsTestGauge struct{ v *float64 }

func (g metricsTestGauge) Set(v float64)     { *g.v = v }
func (g metricsTestGauge) Observe(v float64) { *g.v = v }

func (p *metricsTestProvider) record(kind string) metricsTestGauge {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, kind)
	return metricsTestGauge{v: new(float64)}
}

func (p *metricsTestProvider) NewQueuedItemMetric(InformerNameAndResource) GaugeMetric {
	return p.record("queued")
}

func (p *metricsTestProvider) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric {
	return p.record("latency")
}

func (p *metricsTestProvider) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return p.record("rv")
}

func TestMetricsOnlyForReservedIdentities(t *testing.T) {
	t.Cleanup(ResetInformerNamesForTesting)
	n, err := NewInformerName("metrics-reserved")
	if err != nil {
		t.Fatal(err)
	}
	reserved := n.WithResource(metricsTestGVR)

	cases := []struct {
		name string
		id   InformerNameAndResource
		want []string
	}{
		{name: "unreserved identity records nothing", id: InformerNameAndResource{}, want: nil},
		{name: "reserved identity gets every metric", id: reserved, want: []string{"queued", "latency", "rv"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &metricsTestProvider{}
			fm := newFIFOMetrics(tc.id, p)
			sm := newStoreMetrics(tc.id, p)
			// Whatever was returned must be usable.
			fm.numberOfQueuedItem.Set(1)
			fm.processingLatency.Observe(1)
			sm.storeResourceVersion.Set(1)
			if len(p.created) != len(tc.want) {
				t.Fatalf("created %v, want %v", p.created, tc.want)
			}
			for i := range tc.want {
				if p.created[i] != tc.want[i] {
					t.Fatalf("created %v, want %v", p.created, tc.want)
				}
			}
		})
	}
}

func TestSetInformerMetricsProviderFirstCallWins(t *testing.T) {
	saved := informerMetricsProvider
	t.Cleanup(func() { informerMetricsProvider = saved })
	informerMetricsProvider = &informerMetricsProviderState{}

	if _, ok := globalInformerMetricsProvider().(noopInformerMetricsProvider); !ok {
		t.Fatal("the default provider must be the noop one")
	}
	first, second := &metricsTestProvider{}, &metricsTestProvider{}
	SetInformerMetricsProvider(first)
	SetInformerMetricsProvider(second)
	if got := globalInformerMetricsProvider(); got != first {
		t.Fatalf("provider = %v, want the first one set", got)
	}

	// A nil provider passed to the constructors means the global one.
	t.Cleanup(ResetInformerNamesForTesting)
	n, err := NewInformerName("metrics-global")
	if err != nil {
		t.Fatal(err)
	}
	newStoreMetrics(n.WithResource(metricsTestGVR), nil)
	if len(first.created) != 1 || len(second.created) != 0 {
		t.Fatalf("first created %v, second created %v", first.created, second.created)
	}

	// The noop metric accepts every call.
	var m noopMetric
	m.Inc()
	m.Dec()
	m.Set(1)
	m.Observe(1)
}
