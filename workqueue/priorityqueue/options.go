package priorityqueue

import (
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/workqueue"
)

// Opts configures a PriorityQueue. The zero value is a valid configuration.
type Opts[T comparable] struct {
	// RateLimiter gives the delay of AddRateLimited and of AddWithOpts with RateLimited set.
	// Defaults to a per-item exponential backoff from 5ms to 1000s, as in controller-runtime.
	RateLimiter workqueue.TypedRateLimiter[T]

	// MetricProvider creates the queue's metrics; they are recorded only when the queue has a
	// name. If it implements MetricsProviderWithPriority, depth is recorded per priority.
	// Defaults to none: unlike controller-runtime, kcache has no Prometheus registry of its
	// own, so a queue without a MetricProvider records nothing.
	MetricProvider workqueue.MetricsProvider

	// Log receives the queue's few log messages (shutdown, at verbosity 4). Defaults to
	// klog's global logger.
	Log klog.Logger

	// Clock measures delays, waiting times and metrics. Defaults to clock.RealClock{}.
	// kcache extension, mainly for tests (a k8s.io/utils/clock/testing.FakeClock).
	Clock clock.Clock

	// Aging configures the rule that keeps low-priority items from starving. kcache
	// extension; see the package documentation.
	Aging Aging
}

// Aging configures the no-starvation rule: once the oldest ready item has been ready for
// After, at least one of every Every handouts goes to it. The zero value selects the defaults.
// kcache extension.
type Aging struct {
	// After is how long a ready item waits before it counts as aged. Defaults to 10s.
	After time.Duration
	// Every is K: an aged item gets at least one of every K handouts. Defaults to 4. 1 serves
	// aged items strictly oldest first.
	Every int
	// Disabled turns the rule off: items are handed out strictly by priority, then FIFO, as
	// in controller-runtime, and a low-priority item can wait forever under steady load.
	Disabled bool
}

// DefaultAgingAfter and DefaultAgingEvery are the defaults of Aging.
const (
	DefaultAgingAfter = 10 * time.Second
	DefaultAgingEvery = 4
)

// Opt sets an option of a PriorityQueue.
type Opt[T comparable] func(*Opts[T])

// WithRateLimiter sets Opts.RateLimiter.
func WithRateLimiter[T comparable](rl workqueue.TypedRateLimiter[T]) Opt[T] {
	return func(o *Opts[T]) { o.RateLimiter = rl }
}

// WithMetricsProvider sets Opts.MetricProvider.
func WithMetricsProvider[T comparable](mp workqueue.MetricsProvider) Opt[T] {
	return func(o *Opts[T]) { o.MetricProvider = mp }
}

// WithLogger sets Opts.Log.
func WithLogger[T comparable](logger klog.Logger) Opt[T] {
	return func(o *Opts[T]) { o.Log = logger }
}

// WithClock sets Opts.Clock. kcache extension.
func WithClock[T comparable](c clock.Clock) Opt[T] {
	return func(o *Opts[T]) { o.Clock = c }
}

// WithAging sets Opts.Aging. kcache extension.
func WithAging[T comparable](a Aging) Opt[T] {
	return func(o *Opts[T]) { o.Aging = a }
}

func (o *Opts[T]) defaults() {
	if o.RateLimiter == nil {
		o.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Log.GetSink() == nil {
		o.Log = klog.Background()
	}
	if o.Aging.After <= 0 {
		o.Aging.After = DefaultAgingAfter
	}
	if o.Aging.Every <= 0 {
		o.Aging.Every = DefaultAgingEvery
	}
}
