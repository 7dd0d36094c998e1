package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Impl is one implementation under test: kcache or client-go. Every workload is written once
// against these constructors and the small interfaces below, which both libraries satisfy
// through thin adapters (impl_kcache.go, impl_clientgo.go). The adapters only convert between
// the two packages' named types; they add no work of their own to the measured paths.
type Impl struct {
	Name string

	// NewQueue returns a plain work queue of ints.
	NewQueue func() Queue
	// NewMeteredQueue returns a plain work queue of ints named "bench" whose metrics go to a
	// provider of cheap atomic metrics, as with a Prometheus provider installed.
	NewMeteredQueue func() Queue
	// NewDelayingQueue returns a delaying work queue of ints on clk.
	NewDelayingQueue func(clk clock.WithTicker) DelayingQueue
	// NewRateLimitingQueue returns a rate-limited work queue of ints on clk with an
	// exponential per-item limiter (1ms base, 1000s max).
	NewRateLimitingQueue func(clk clock.WithTicker) RateLimitingQueue

	// NewControllerQueue returns a named, rate-limited work queue of keys with the default
	// controller rate limiter, its metrics going to a provider of cheap atomic metrics: the
	// queue of a typical controller.
	NewControllerQueue func() KeyQueue

	// NewIndexer returns an indexer keyed by namespace/name with the given indexes, each
	// taking a label's value ("namespace" is the namespace index).
	NewIndexer func(indexes ...string) Indexer

	// NewFIFO returns the named FIFO (see fifoKinds); known may be nil.
	NewFIFO func(kind string, known Indexer) FIFO

	// NewInformer returns a shared index informer over lw for pods or configmaps (example is
	// the object type) with a namespace index.
	NewInformer func(lw ListerWatcher, example runtime.Object) Informer

	// ListPaged lists through the implementation's pager with the given page size.
	ListPaged func(ctx context.Context, pageSize int64, page PageFunc) (runtime.Object, error)
}

// Queue is the part of workqueue.TypedInterface[int] the workloads use.
type Queue interface {
	Add(item int)
	Get() (item int, shutdown bool)
	Done(item int)
	Len() int
	ShutDown()
}

// DelayingQueue is a Queue with AddAfter.
type DelayingQueue interface {
	Queue
	AddAfter(item int, d time.Duration)
}

// RateLimitingQueue is a Queue with per-item rate limiting.
type RateLimitingQueue interface {
	Queue
	AddRateLimited(item int)
	Forget(item int)
}

// KeyQueue is the part of workqueue.TypedRateLimitingInterface[string] a controller uses.
type KeyQueue interface {
	Add(key string)
	AddRateLimited(key string)
	Forget(key string)
	Get() (key string, shutdown bool)
	Done(key string)
	Len() int
	ShutDown()
}

// Indexer is the part of cache.Indexer the workloads use. Both libraries' indexers satisfy it
// as they are; it is also a KeyListerGetter for the FIFOs.
type Indexer interface {
	Add(obj interface{}) error
	Update(obj interface{}) error
	Delete(obj interface{}) error
	Replace(list []interface{}, resourceVersion string) error
	List() []interface{}
	ListKeys() []string
	GetByKey(key string) (item interface{}, exists bool, err error)
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
}

// FIFO is a DeltaFIFO or RealFIFO; Pop hands over the deltas of one key (or one delta) and
// PopBatch, when the queue has it, several.
type FIFO interface {
	Add(obj interface{}) error
	Replace(list []interface{}, resourceVersion string) error
	// Pop pops one entry and reports how many deltas it held.
	Pop() (deltas int, err error)
	// PopBatch pops a batch and reports how many deltas it held; ok is false when the queue
	// has no PopBatch.
	PopBatch() (deltas int, ok bool, err error)
}

// ListerWatcher is what informers list and watch; both libraries' ListerWatcher interfaces
// are this method set.
type ListerWatcher interface {
	List(options metav1.ListOptions) (runtime.Object, error)
	Watch(options metav1.ListOptions) (watch.Interface, error)
}

// PageFunc serves one page of a list.
type PageFunc func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)

// Handler is an event handler as plain functions; nil functions are not called.
type Handler struct {
	Add    func(obj interface{}, isInInitialList bool)
	Update func(oldObj, newObj interface{})
	Delete func(obj interface{})
	// ExpectStall says the workload makes this handler fall far behind on purpose. An
	// implementation with a way to bound a slow handler's backlog uses it: kcache sets
	// HandlerOptions.MaxPending to 1000 (a kcache extension); client-go has no such bound.
	ExpectStall bool
}

// Informer is the part of cache.SharedIndexInformer the workloads use.
type Informer interface {
	AddHandler(h Handler) error
	Run(ctx context.Context)
	HasSynced() bool
	Indexer() Indexer
}

// fifoKinds are the FIFO setups the FIFO workloads run, named as client-go's feature gates
// select them.
var fifoKinds = []string{"DeltaFIFO", "RealFIFO", "RealFIFO-atomic"}
