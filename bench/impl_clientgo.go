package main

// The client-go adapter. impl_kcache.go is the same file with kcache's import paths: keep
// the two in step (diff them), so that both libraries are driven identically.

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/workqueue"
)

var clientgoImpl = &Impl{
	Name: "client-go",
	NewQueue: func() Queue {
		return workqueue.NewTyped[int]()
	},
	NewMeteredQueue: func() Queue {
		return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: "bench", MetricsProvider: clientgoMetrics{}})
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
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "controller", MetricsProvider: clientgoMetrics{}})
	},
	NewIndexer: func(indexes ...string) Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, clientgoIndexers(indexes))
	},
	NewFIFO: func(kind string, known Indexer) FIFO {
		var kl cache.KeyListerGetter
		if known != nil {
			kl = known
		}
		switch kind {
		case "DeltaFIFO":
			return clientgoFIFO{q: cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: kl, EmitDeltaTypeReplaced: true})}
		case "RealFIFO":
			return clientgoFIFO{q: cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KnownObjects: kl})}
		default: // RealFIFO-atomic: the default informer queue, which takes no known objects
			return clientgoFIFO{q: cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})}
		}
	},
	NewInformer: func(lw ListerWatcher, example runtime.Object) Informer {
		return clientgoInformer{cache.NewSharedIndexInformer(lw, example, 0, clientgoIndexers([]string{"namespace"}))}
	},
	ListPaged: func(ctx context.Context, pageSize int64, page PageFunc) (runtime.Object, error) {
		p := pager.New(pager.ListPageFunc(page))
		p.PageSize = pageSize
		obj, _, err := p.List(ctx, metav1.ListOptions{})
		return obj, err
	},
}

func clientgoIndexers(names []string) cache.Indexers {
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

type clientgoFIFO struct{ q cache.Queue }

func (f clientgoFIFO) Add(obj interface{}) error { return f.q.Add(obj) }
func (f clientgoFIFO) Replace(list []interface{}, rv string) error {
	return f.q.Replace(list, rv)
}

func (f clientgoFIFO) Pop() (int, error) {
	n := 0
	_, err := f.q.Pop(func(obj interface{}, _ bool) error {
		n += len(obj.(cache.Deltas))
		return nil
	})
	return n, err
}

func (f clientgoFIFO) PopBatch() (int, bool, error) {
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

type clientgoInformer struct{ inf cache.SharedIndexInformer }

// AddHandler registers h; client-go has no bound on a handler's backlog, so h.ExpectStall
// changes nothing.
func (i clientgoInformer) AddHandler(h Handler) error {
	_, err := i.inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: h.Add, UpdateFunc: h.Update, DeleteFunc: h.Delete,
	})
	return err
}

func (i clientgoInformer) Run(ctx context.Context) { i.inf.RunWithContext(ctx) }
func (i clientgoInformer) HasSynced() bool         { return i.inf.HasSynced() }
func (i clientgoInformer) Indexer() Indexer        { return i.inf.GetIndexer() }

// clientgoMetrics hands out atomic metrics (metrics.go) for every queue metric.
type clientgoMetrics struct{}

func (clientgoMetrics) NewDepthMetric(string) workqueue.GaugeMetric       { return new(benchMetric) }
func (clientgoMetrics) NewAddsMetric(string) workqueue.CounterMetric      { return new(benchMetric) }
func (clientgoMetrics) NewLatencyMetric(string) workqueue.HistogramMetric { return new(benchMetric) }
func (clientgoMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return new(benchMetric)
}
func (clientgoMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return new(benchMetric)
}
func (clientgoMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return new(benchMetric)
}
func (clientgoMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return new(benchMetric) }
