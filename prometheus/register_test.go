package prometheus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
	"github.com/kcache/cache/workqueue"
)

// runPodsInformer runs an unnamed informer of pods, as the informers factory builds it, over a
// fake source holding one pod, with one handler, until the test ends.
func runPodsInformer(t *testing.T) {
	t.Helper()
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	inf := cache.NewSharedIndexInformerWithOptions(src, &v1.Pod{}, cache.SharedIndexInformerOptions{
		Identifier: (*cache.InformerName)(nil).WithResource(gvr),
	})
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onAdd})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if !cache.WaitForCacheSync(waitCtx.Done(), inf.HasSynced, reg.HasSynced) {
		t.Fatal("informer did not sync")
	}
}

func onAdd(interface{}) {}

// TestRegister checks the names, labels and values a registry gathers after Register.
func TestRegister(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := Register(reg); err != nil {
		t.Fatalf("second Register with the same registry: %v", err)
	}
	runPodsInformer(t)
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "pods-controller"})
	q.Add("ns/a")
	q.Add("ns/b")
	item, _ := q.Get()
	q.Done(item)
	q.ShutDown() // sets depth and adds, which the queue otherwise sets every 500ms

	const want = `
# HELP kcache_informer_synced 1 when the informer has synced (HasSynced), else 0.
# TYPE kcache_informer_synced gauge
kcache_informer_synced{group="",name="pods",resource="pods",version="v1"} 1
# HELP kcache_informer_objects Objects in the informer's store.
# TYPE kcache_informer_objects gauge
kcache_informer_objects{group="",name="pods",resource="pods",version="v1"} 1
# HELP kcache_informer_lists_total Full listings (LIST or streaming watch-list) started.
# TYPE kcache_informer_lists_total counter
kcache_informer_lists_total{group="",name="pods",resource="pods",version="v1"} 1
# HELP kcache_informer_relists_total Full listings after the first, by cause: expired (410), watch_list_fallback, error.
# TYPE kcache_informer_relists_total counter
kcache_informer_relists_total{cause="error",group="",name="pods",resource="pods",version="v1"} 0
kcache_informer_relists_total{cause="expired",group="",name="pods",resource="pods",version="v1"} 0
kcache_informer_relists_total{cause="watch_list_fallback",group="",name="pods",resource="pods",version="v1"} 0
# HELP kcache_informer_events_total Changes applied to the store (each object of a list counts).
# TYPE kcache_informer_events_total counter
kcache_informer_events_total{group="",name="pods",resource="pods",version="v1"} 1
# HELP kcache_informer_handler_processed_total Handler calls that returned (or panicked).
# TYPE kcache_informer_handler_processed_total counter
kcache_informer_handler_processed_total{handler="github.com/kcache/cache/prometheus",name="pods"} 1
# HELP kcache_informer_handler_pending Notifications waiting for the handler (object keys while coalescing).
# TYPE kcache_informer_handler_pending gauge
kcache_informer_handler_pending{handler="github.com/kcache/cache/prometheus",name="pods"} 0
# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="pods-controller"} 1
# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="pods-controller"} 2
`
	names := []string{"kcache_informer_synced", "kcache_informer_objects", "kcache_informer_lists_total",
		"kcache_informer_relists_total", "kcache_informer_events_total", "kcache_informer_handler_processed_total",
		"kcache_informer_handler_pending", "workqueue_depth", "workqueue_adds_total"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// Every other metric is present with its labels.
	for _, name := range []string{"kcache_informer_startup_latency_seconds", "kcache_informer_watch_restarts_total",
		"kcache_informer_handler_lag_seconds", "kcache_informer_handler_coalesced_total",
		"kcache_informer_handler_coalescing_episodes_total", "kcache_informer_handler_panics_total",
		"kcache_informer_handler_duration_seconds", "workqueue_queue_duration_seconds",
		"workqueue_work_duration_seconds", "workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds", "workqueue_oldest_waiting_seconds"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n == 0 {
			t.Errorf("%s: %d series, err %v", name, n, err)
		}
	}
}

// TestControllerRuntimeRegistry: a registry that holds controller-runtime's workqueue metrics
// (name, controller labels) gets kcache's queues in them, not a conflicting second family.
func TestControllerRuntimeRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	crDepth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth",
		Help: depthMetric.crHelp}, []string{"name", "controller", "priority"})
	reg.MustRegister(crDepth)
	for _, m := range []queueMetric{addsMetric, unfinishedMetric, longestMetric} {
		reg.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: m.name, Help: m.crHelp}, m.crLabels))
	}
	if _, err := newQueueProvider(reg); err == nil {
		t.Fatal("mixed forms: no error") // adds_total registered above as a gauge, not a counter
	}
	reg = prometheus.NewRegistry()
	reg.MustRegister(crDepth)
	p, err := newQueueProvider(reg)
	if err == nil {
		t.Fatalf("depth in controller-runtime's form, the rest in client-go's: no error (%+v)", p)
	}

	reg = prometheus.NewRegistry()
	crVecs := []prometheus.Collector{crDepth}
	for _, m := range []queueMetric{addsMetric, retriesMetric} {
		crVecs = append(crVecs, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: m.name, Help: m.crHelp}, m.crLabels))
	}
	for _, m := range []queueMetric{latencyMetric, workDurationMetric} {
		crVecs = append(crVecs, prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: m.name, Help: m.crHelp, Buckets: queueBuckets}, m.crLabels))
	}
	for _, m := range []queueMetric{unfinishedMetric, longestMetric} {
		crVecs = append(crVecs, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: m.name, Help: m.crHelp}, m.crLabels))
	}
	reg.MustRegister(crVecs...)
	p, err = newQueueProvider(reg)
	if err != nil {
		t.Fatal(err)
	}
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "kcache-queue", MetricsProvider: p})
	q.Add("x")
	q.ShutDown() // sets depth, which the queue otherwise sets every 500ms
	const want = `
# HELP workqueue_depth Current depth of workqueue by workqueue and priority
# TYPE workqueue_depth gauge
workqueue_depth{controller="kcache-queue",name="kcache-queue",priority=""} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "workqueue_depth"); err != nil {
		t.Fatal(err)
	}
}

// TestWeightedHistogram: a weighted observation counts as that many in the exposed histogram,
// and the same queue name gets the same histogram.
func TestWeightedHistogram(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p, err := newQueueProvider(reg)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := p.NewLatencyMetric("q").(workqueue.WeightedHistogramMetric)
	if !ok {
		t.Fatal("the latency histogram takes no weighted observations")
	}
	h.ObserveWeighted(2e-6, 64)
	p.NewLatencyMetric("q").Observe(0.5)
	const want = `
# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue before being requested.
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="q",le="1e-08"} 0
workqueue_queue_duration_seconds_bucket{name="q",le="1e-07"} 0
workqueue_queue_duration_seconds_bucket{name="q",le="1e-06"} 0
workqueue_queue_duration_seconds_bucket{name="q",le="9.999999999999999e-06"} 64
workqueue_queue_duration_seconds_bucket{name="q",le="9.999999999999999e-05"} 64
workqueue_queue_duration_seconds_bucket{name="q",le="0.001"} 64
workqueue_queue_duration_seconds_bucket{name="q",le="0.01"} 64
workqueue_queue_duration_seconds_bucket{name="q",le="0.1"} 64
workqueue_queue_duration_seconds_bucket{name="q",le="1"} 65
workqueue_queue_duration_seconds_bucket{name="q",le="10"} 65
workqueue_queue_duration_seconds_bucket{name="q",le="100"} 65
workqueue_queue_duration_seconds_bucket{name="q",le="1000"} 65
workqueue_queue_duration_seconds_bucket{name="q",le="+Inf"} 65
workqueue_queue_duration_seconds_sum{name="q"} 0.500128
workqueue_queue_duration_seconds_count{name="q"} 65
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "workqueue_queue_duration_seconds"); err != nil {
		t.Fatal(err)
	}
}
