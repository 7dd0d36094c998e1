package workqueue

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// The declarations below spell out, by hand, the signature client-go v0.37.2 gives each
// exported identifier of k8s.io/client-go/util/workqueue. They fail to compile if ours
// differ, which is what source compatibility needs.

// Functions.
var (
	_ func(context.Context, int, int, DoWorkPieceFunc, ...Options) = ParallelizeUntil
	_ func(MetricsProvider)                                        = SetProvider
	_ func(int) func(*options)                                     = WithChunkSize
	_ Options                                                      = WithChunkSize(1)

	_ func() *Type                                    = New
	_ func(string) *Type                              = NewNamed
	_ func(QueueConfig) *Type                         = NewWithConfig
	_ func() *Typed[string]                           = NewTyped[string]
	_ func(TypedQueueConfig[string]) *Typed[string]   = NewTypedWithConfig[string]
	_ func() Queue[string]                            = DefaultQueue[string]
	_ func(*Typed[string], string)                    = (*Typed[string]).Add
	_ func(*Typed[string], string)                    = (*Typed[string]).Done
	_ func(*Typed[string]) (string, bool)             = (*Typed[string]).Get
	_ func(*Typed[string]) int                        = (*Typed[string]).Len
	_ func(*Typed[string])                            = (*Typed[string]).ShutDown
	_ func(*Typed[string])                            = (*Typed[string]).ShutDownWithDrain
	_ func(*Typed[string]) bool                       = (*Typed[string]).ShuttingDown
	_ TypedInterface[string]                          = (*Typed[string])(nil)
	_ Interface                                       = (*Type)(nil)
	_ func(TypedInterface[any]) Interface             = func(i TypedInterface[any]) Interface { return i }
	_ func(TypedDelayingInterface[any]) Interface     = func(i TypedDelayingInterface[any]) Interface { return i }
	_ func(TypedRateLimitingInterface[any]) Interface = func(i TypedRateLimitingInterface[any]) Interface { return i }

	_ func() DelayingInterface                                                = NewDelayingQueue
	_ func(DelayingQueueConfig) DelayingInterface                             = NewDelayingQueueWithConfig
	_ func(clock.WithTicker, string) DelayingInterface                        = NewDelayingQueueWithCustomClock
	_ func(Interface, string) DelayingInterface                               = NewDelayingQueueWithCustomQueue
	_ func(string) DelayingInterface                                          = NewNamedDelayingQueue
	_ func() TypedDelayingInterface[string]                                   = NewTypedDelayingQueue[string]
	_ func(TypedDelayingQueueConfig[string]) TypedDelayingInterface[string]   = NewTypedDelayingQueueWithConfig[string]
	_ func() TypedDelayingInterface[string]                                   = TypedNewDelayingQueue[string]
	_ func(TypedDelayingInterface[any]) DelayingInterface                     = func(i TypedDelayingInterface[any]) DelayingInterface { return i }
	_ func(DelayingInterface, time.Duration)                                  = func(i DelayingInterface, d time.Duration) { i.AddAfter(nil, d) }
	_ func(TypedDelayingInterface[string]) TypedInterface[string]             = func(i TypedDelayingInterface[string]) TypedInterface[string] { return i }
	_ func(TypedRateLimitingInterface[string]) TypedDelayingInterface[string] = func(i TypedRateLimitingInterface[string]) TypedDelayingInterface[string] { return i }
	_ func(TypedRateLimitingInterface[any]) RateLimitingInterface             = func(i TypedRateLimitingInterface[any]) RateLimitingInterface { return i }
	_ func(TypedRateLimitingInterface[string], string)                        = TypedRateLimitingInterface[string].AddRateLimited
	_ func(TypedRateLimitingInterface[string], string)                        = TypedRateLimitingInterface[string].Forget
	_ func(TypedRateLimitingInterface[string], string) int                    = TypedRateLimitingInterface[string].NumRequeues
	_ func(TypedDelayingInterface[string], string, time.Duration)             = TypedDelayingInterface[string].AddAfter
	_ func(Queue[string], string)                                             = Queue[string].Touch
	_ func(Queue[string], string)                                             = Queue[string].Push
	_ func(Queue[string]) int                                                 = Queue[string].Len
	_ func(Queue[string]) string                                              = Queue[string].Pop

	_ func(RateLimiter) RateLimitingInterface                                                                 = NewRateLimitingQueue
	_ func(RateLimiter, string) RateLimitingInterface                                                         = NewNamedRateLimitingQueue
	_ func(RateLimiter, RateLimitingQueueConfig) RateLimitingInterface                                        = NewRateLimitingQueueWithConfig
	_ func(DelayingInterface, RateLimiter) RateLimitingInterface                                              = NewRateLimitingQueueWithDelayingInterface
	_ func(TypedRateLimiter[string]) TypedRateLimitingInterface[string]                                       = NewTypedRateLimitingQueue[string]
	_ func(TypedRateLimiter[string], TypedRateLimitingQueueConfig[string]) TypedRateLimitingInterface[string] = NewTypedRateLimitingQueueWithConfig[string]

	_ func() RateLimiter                                                     = DefaultControllerRateLimiter
	_ func() RateLimiter                                                     = DefaultItemBasedRateLimiter
	_ func(time.Duration, time.Duration) RateLimiter                         = NewItemExponentialFailureRateLimiter
	_ func(time.Duration, time.Duration, int) RateLimiter                    = NewItemFastSlowRateLimiter
	_ func(...TypedRateLimiter[any]) RateLimiter                             = NewMaxOfRateLimiter
	_ func(RateLimiter, time.Duration) RateLimiter                           = NewWithMaxWaitRateLimiter
	_ func() TypedRateLimiter[string]                                        = DefaultTypedControllerRateLimiter[string]
	_ func() TypedRateLimiter[string]                                        = DefaultTypedItemBasedRateLimiter[string]
	_ func(time.Duration, time.Duration) TypedRateLimiter[string]            = NewTypedItemExponentialFailureRateLimiter[string]
	_ func(time.Duration, time.Duration, int) TypedRateLimiter[string]       = NewTypedItemFastSlowRateLimiter[string]
	_ func(...TypedRateLimiter[string]) TypedRateLimiter[string]             = NewTypedMaxOfRateLimiter[string]
	_ func(TypedRateLimiter[string], time.Duration) TypedRateLimiter[string] = NewTypedWithMaxWaitRateLimiter[string]
	_ func(TypedRateLimiter[any]) RateLimiter                                = func(r TypedRateLimiter[any]) RateLimiter { return r }
	_ func(TypedRateLimiter[string], string) time.Duration                   = TypedRateLimiter[string].When
	_ func(TypedRateLimiter[string], string)                                 = TypedRateLimiter[string].Forget
	_ func(TypedRateLimiter[string], string) int                             = TypedRateLimiter[string].NumRequeues

	_ func(*TypedBucketRateLimiter[string], string) time.Duration                 = (*TypedBucketRateLimiter[string]).When
	_ func(*TypedBucketRateLimiter[string], string) int                           = (*TypedBucketRateLimiter[string]).NumRequeues
	_ func(*TypedBucketRateLimiter[string], string)                               = (*TypedBucketRateLimiter[string]).Forget
	_ func(*TypedItemExponentialFailureRateLimiter[string], string) time.Duration = (*TypedItemExponentialFailureRateLimiter[string]).When
	_ func(*TypedItemExponentialFailureRateLimiter[string], string) int           = (*TypedItemExponentialFailureRateLimiter[string]).NumRequeues
	_ func(*TypedItemExponentialFailureRateLimiter[string], string)               = (*TypedItemExponentialFailureRateLimiter[string]).Forget
	_ func(*TypedItemFastSlowRateLimiter[string], string) time.Duration           = (*TypedItemFastSlowRateLimiter[string]).When
	_ func(*TypedItemFastSlowRateLimiter[string], string) int                     = (*TypedItemFastSlowRateLimiter[string]).NumRequeues
	_ func(*TypedItemFastSlowRateLimiter[string], string)                         = (*TypedItemFastSlowRateLimiter[string]).Forget
	_ func(*TypedMaxOfRateLimiter[string], string) time.Duration                  = (*TypedMaxOfRateLimiter[string]).When
	_ func(*TypedMaxOfRateLimiter[string], string) int                            = (*TypedMaxOfRateLimiter[string]).NumRequeues
	_ func(*TypedMaxOfRateLimiter[string], string)                                = (*TypedMaxOfRateLimiter[string]).Forget
	_ func(TypedWithMaxWaitRateLimiter[string], string) time.Duration             = TypedWithMaxWaitRateLimiter[string].When
	_ func(TypedWithMaxWaitRateLimiter[string], string) int                       = TypedWithMaxWaitRateLimiter[string].NumRequeues
	_ func(TypedWithMaxWaitRateLimiter[string], string)                           = TypedWithMaxWaitRateLimiter[string].Forget

	_ RateLimiter = &BucketRateLimiter{}
	_ RateLimiter = &ItemExponentialFailureRateLimiter{}
	_ RateLimiter = &ItemFastSlowRateLimiter{}
	_ RateLimiter = &MaxOfRateLimiter{}
	_ RateLimiter = WithMaxWaitRateLimiter{}
	_ RateLimiter = &WithMaxWaitRateLimiter{}
)

// Metric interfaces and the provider.
var (
	_ func(GaugeMetric)                  = GaugeMetric.Inc
	_ func(GaugeMetric)                  = GaugeMetric.Dec
	_ func(SettableGaugeMetric, float64) = SettableGaugeMetric.Set
	_ func(CounterMetric)                = CounterMetric.Inc
	_ func(SummaryMetric, float64)       = SummaryMetric.Observe
	_ func(HistogramMetric, float64)     = HistogramMetric.Observe

	_ func(MetricsProvider, string) GaugeMetric         = MetricsProvider.NewDepthMetric
	_ func(MetricsProvider, string) CounterMetric       = MetricsProvider.NewAddsMetric
	_ func(MetricsProvider, string) HistogramMetric     = MetricsProvider.NewLatencyMetric
	_ func(MetricsProvider, string) HistogramMetric     = MetricsProvider.NewWorkDurationMetric
	_ func(MetricsProvider, string) SettableGaugeMetric = MetricsProvider.NewUnfinishedWorkSecondsMetric
	_ func(MetricsProvider, string) SettableGaugeMetric = MetricsProvider.NewLongestRunningProcessorSecondsMetric
	_ func(MetricsProvider, string) CounterMetric       = MetricsProvider.NewRetriesMetric
)

// Aliases must be aliases: a value of the generic type must be assignable without conversion,
// which for two named struct types only holds if they are the same type.
var (
	_ Type                               = Typed[any]{}
	_ QueueConfig                        = TypedQueueConfig[any]{}
	_ DelayingQueueConfig                = TypedDelayingQueueConfig[any]{}
	_ RateLimitingQueueConfig            = TypedRateLimitingQueueConfig[any]{}
	_ BucketRateLimiter                  = TypedBucketRateLimiter[any]{}
	_ *ItemExponentialFailureRateLimiter = (*TypedItemExponentialFailureRateLimiter[any])(nil)
	_ *ItemFastSlowRateLimiter           = (*TypedItemFastSlowRateLimiter[any])(nil)
	_ *MaxOfRateLimiter                  = (*TypedMaxOfRateLimiter[any])(nil)
	_ WithMaxWaitRateLimiter             = TypedWithMaxWaitRateLimiter[any]{}
)

// Config fields: a pointer to a field has the field's exact type.
var (
	qc  TypedQueueConfig[string]
	_   *string           = &qc.Name
	_   *MetricsProvider  = &qc.MetricsProvider
	_   *clock.WithTicker = &qc.Clock
	_   *Queue[string]    = &qc.Queue
	dqc TypedDelayingQueueConfig[string]
	_   **klog.Logger           = &dqc.Logger
	_   *string                 = &dqc.Name
	_   *MetricsProvider        = &dqc.MetricsProvider
	_   *clock.WithTicker       = &dqc.Clock
	_   *TypedInterface[string] = &dqc.Queue
	rqc TypedRateLimitingQueueConfig[string]
	_   *string                         = &rqc.Name
	_   *MetricsProvider                = &rqc.MetricsProvider
	_   *clock.WithTicker               = &rqc.Clock
	_   *TypedDelayingInterface[string] = &rqc.DelayingQueue
	brl TypedBucketRateLimiter[string]
	_   **rate.Limiter = &brl.Limiter
	_   func(int)      = DoWorkPieceFunc(nil)
	_   func(*options) = Options(nil)
)

// TestAPIDefinedTypes checks that the untyped interfaces are defined types over the generic
// ones (not aliases), as in client-go: a method set identical to the generic interface, so
// values convert both ways.
func TestAPIDefinedTypes(t *testing.T) {
	var q Interface = New()
	var back TypedInterface[any] = q
	back.ShutDown()
	var d DelayingInterface = NewDelayingQueue()
	d.ShutDown()
	var r RateLimitingInterface = NewRateLimitingQueue(DefaultControllerRateLimiter())
	r.ShutDown()
	var l RateLimiter = DefaultItemBasedRateLimiter()
	if got := l.When("x"); got != time.Millisecond {
		t.Fatalf("DefaultItemBasedRateLimiter().When = %v, want 1ms", got)
	}
}
