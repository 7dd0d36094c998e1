package main

// The kcache adapter. impl_clientgo.go is the same file with client-go's import paths: keep
// the two in step (diff them), so that both libraries are driven identically.

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	cache "github.com/kcache/cache"
	"github.com/kcache/cache/pager"
	"github.com/kcache/cache/workqueue"
)

var kcacheImpl = &Impl{
	Name: "kcache",
	NewQueue: func() Queue {
		return workqueue.NewTyped[int]()
	},
	NewMeteredQueue: func() Queue {
		return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: "bench", MetricsProvider: kcacheMetrics{}})
	},
	NewDelayingQueue: func(clk clock.WithTicker) DelayingQueue {
		return workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[int]{Clock: clk})
	},
	NewRateLimitingQueue: func(clk clock.WithTicker) RateLimitingQueue {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, 1000*time.Second),
			workqueue.TypedRateLimitingQueueConfig[int]{Clock: clk})
	},
	NewControllerQueue: func() KeyQueue {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "controller", MetricsProvider: kcacheMetrics{}})
	},
	NewIndexer: func(indexes ...string) Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, kcacheIndexers(indexes))
	},
	NewFIFO: func(kind string, known Indexer) FIFO {
		var kl cache.KeyListerGetter
		if known != nil {
			kl = known
		}
		switch kind {
		case "DeltaFIFO":
			return kcacheFIFO{q: cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: kl, EmitDeltaTypeReplaced: true})}
		case "RealFIFO":
			return kcacheFIFO{q: cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KnownObjects: kl})}
		default: // RealFIFO-atomic: the default informer queue, which takes no known objects
			return kcacheFIFO{q: cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})}
		}
	},
	NewInformer: func(lw ListerWatcher, example runtime.Object) Informer {
		return kcacheInformer{cache.NewSharedIndexInformer(lw, example, 0, kcacheIndexers([]string{"namespace"}))}
	},
	ListPaged: func(ctx context.Context, pageSize int64, page PageFunc) (runtime.Object, error) {
		p := pager.New(pager.ListPageFunc(page))
		p.PageSize = pageSize
		obj, _, err := p.List(ctx, metav1.ListOptions{})
		return obj, err
	},
}

func kcacheIndexers(names []string) cache.Indexers {
	out := cache.Indexers{}
	for _, name := range names {
		if name == "namespace" {
			out[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
			continue
		}
		out[name] = labelIndexFunc(name)
	}
	return out
}

type kcacheFIFO struct{ q cache.Queue }

func (f kcacheFIFO) Add(obj interface{}) error { return f.q.Add(obj) }
func (f kcacheFIFO) Replace(list []interface{}, rv string) error {
	return f.q.Replace(list, rv)
}

func (f kcacheFIFO) Pop() (int, error) {
	n := 0
	_, err := f.q.Pop(func(obj interface{}, _ bool) error {
		n += len(obj.(cache.Deltas))
		return nil
	})
	return n, err
}

func (f kcacheFIFO) PopBatch() (int, bool, error) {
	bq, ok := f.q.(cache.QueueWithBatch)
	if !ok {
		return 0, false, nil
	}
	n := 0
	err := bq.PopBatch(func(ds []cache.Delta, _ bool) error {
		n += len(ds)
		return nil
	}, func(obj interface{}, _ bool) error {
		n += len(obj.(cache.Deltas))
		return nil
	})
	return n, true, err
}

type kcacheInformer struct{ inf cache.SharedIndexInformer }

// stallMaxPending is the HandlerOptions.MaxPending (a kcache extension) of a handler added with
// Handler.ExpectStall: past 1000 queued notifications its listener coalesces per object.
const stallMaxPending = 1000

// AddHandler registers h; a handler expected to stall gets MaxPending stallMaxPending (kcache
// only: client-go has no bound and keeps every notification).
func (i kcacheInformer) AddHandler(h Handler) error {
	var opts cache.HandlerOptions
	if h.ExpectStall {
		maxPending := stallMaxPending
		opts.MaxPending = &maxPending
	}
	_, err := i.inf.AddEventHandlerWithOptions(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: h.Add, UpdateFunc: h.Update, DeleteFunc: h.Delete,
	}, opts)
	return err
}

func (i kcacheInformer) Run(ctx context.Context) { i.inf.RunWithContext(ctx) }
func (i kcacheInformer) HasSynced() bool         { return i.inf.HasSynced() }
func (i kcacheInformer) Indexer() Indexer        { return i.inf.GetIndexer() }

// kcacheMetrics hands out atomic metrics (metrics.go) for every queue metric.
type kcacheMetrics struct{}

func (kcacheMetrics) NewDepthMetric(string) workqueue.GaugeMetric            { return new(benchMetric) }
func (kcacheMetrics) NewAddsMetric(string) workqueue.CounterMetric           { return new(benchMetric) }
func (kcacheMetrics) NewLatencyMetric(string) workqueue.HistogramMetric      { return new(benchMetric) }
func (kcacheMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric { return new(benchMetric) }
func (kcacheMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return new(benchMetric)
}
func (kcacheMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return new(benchMetric)
}
func (kcacheMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return new(benchMetric) }
