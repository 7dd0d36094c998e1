package workqueue

import "k8s.io/utils/clock"

// RateLimitingInterface is the untyped rate-limited queue interface.
//
// Deprecated: use TypedRateLimitingInterface instead.
type RateLimitingInterface TypedRateLimitingInterface[any]

// TypedRateLimitingInterface is a delaying queue that asks a rate limiter how long an item
// waits before it is added again: the usual way for a controller to retry a failed item.
type TypedRateLimitingInterface[T comparable] interface {
	TypedDelayingInterface[T]

	// AddRateLimited adds item after the delay the rate limiter gives it.
	AddRateLimited(item T)

	// Forget tells the rate limiter to stop tracking item, after a success or a final
	// failure. It only resets the limiter; the caller still has to call Done.
	Forget(item T)

	// NumRequeues returns how many times the rate limiter has delayed item.
	NumRequeues(item T) int
}

// RateLimitingQueueConfig configures an untyped rate-limited queue.
//
// Deprecated: use TypedRateLimitingQueueConfig instead.
type RateLimitingQueueConfig = TypedRateLimitingQueueConfig[any]

// TypedRateLimitingQueueConfig configures a rate-limited queue. The zero value is a valid
// configuration.
type TypedRateLimitingQueueConfig[T comparable] struct {
	// Name is the queue's name in metrics and in Queues. Metrics are only recorded for named
	// queues, unless the provider is an ExtendedMetricsProvider. Defaults to a name derived
	// from the function that creates the queue (see Queues).
	Name string

	// MetricsProvider creates the queue's metrics. Defaults to the provider set with
	// SetProvider.
	MetricsProvider MetricsProvider

	// Clock measures the delays. Defaults to clock.RealClock{}.
	Clock clock.WithTicker

	// DelayingQueue receives the items. Defaults to a new delaying queue with the same Name,
	// MetricsProvider and Clock.
	DelayingQueue TypedDelayingInterface[T]
}

// NewRateLimitingQueue returns an unnamed untyped rate-limited queue.
//
// Deprecated: use NewTypedRateLimitingQueue instead.
func NewRateLimitingQueue(rateLimiter RateLimiter) RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, RateLimitingQueueConfig{})
}

// NewRateLimitingQueueWithConfig returns an untyped rate-limited queue configured by config.
//
// Deprecated: use NewTypedRateLimitingQueueWithConfig instead.
func NewRateLimitingQueueWithConfig(rateLimiter RateLimiter, config RateLimitingQueueConfig) RateLimitingInterface {
	return NewTypedRateLimitingQueueWithConfig[any](rateLimiter, config)
}

// NewNamedRateLimitingQueue returns an untyped rate-limited queue whose metrics are recorded
// under name.
//
// Deprecated: use NewRateLimitingQueueWithConfig instead.
func NewNamedRateLimitingQueue(rateLimiter RateLimiter, name string) RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, RateLimitingQueueConfig{Name: name})
}

// NewRateLimitingQueueWithDelayingInterface returns an untyped rate-limited queue that feeds di.
//
// Deprecated: use NewRateLimitingQueueWithConfig instead.
func NewRateLimitingQueueWithDelayingInterface(di DelayingInterface, rateLimiter RateLimiter) RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, RateLimitingQueueConfig{DelayingQueue: di})
}

// NewTypedRateLimitingQueue returns an unnamed rate-limited queue. It records no metrics.
// Call Forget when an item succeeds, or the limiter keeps tracking it.
func NewTypedRateLimitingQueue[T comparable](rateLimiter TypedRateLimiter[T]) TypedRateLimitingInterface[T] {
	return NewTypedRateLimitingQueueWithConfig(rateLimiter, TypedRateLimitingQueueConfig[T]{})
}

// NewTypedRateLimitingQueueWithConfig returns a rate-limited queue configured by config. Call
// Forget when an item succeeds, or the limiter keeps tracking it. A nil rateLimiter is a
// programming error: AddRateLimited, Forget and NumRequeues then panic, as in client-go.
func NewTypedRateLimitingQueueWithConfig[T comparable](rateLimiter TypedRateLimiter[T], config TypedRateLimitingQueueConfig[T]) TypedRateLimitingInterface[T] {
	if config.Clock == nil {
		config.Clock = clock.RealClock{}
	}
	if config.DelayingQueue == nil {
		config.DelayingQueue = newDelaying(TypedDelayingQueueConfig[T]{
			MetricsProvider: config.MetricsProvider,
			Clock:           config.Clock,
		}, resolveName(config.Name))
	}
	return &rateLimitingType[T]{
		TypedDelayingInterface: config.DelayingQueue,
		rateLimiter:            rateLimiter,
	}
}

// rateLimitingType adds rate-limited adds to a delaying queue.
type rateLimitingType[T comparable] struct {
	TypedDelayingInterface[T]

	rateLimiter TypedRateLimiter[T]
}

// AddRateLimited adds item after rateLimiter.When(item). The limiter is asked even when the
// queue is shutting down or the item is already queued, as in client-go.
func (q *rateLimitingType[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.rateLimiter.When(item))
}

// NumRequeues returns rateLimiter.NumRequeues(item).
func (q *rateLimitingType[T]) NumRequeues(item T) int {
	return q.rateLimiter.NumRequeues(item)
}

// Forget calls rateLimiter.Forget(item).
func (q *rateLimitingType[T]) Forget(item T) {
	q.rateLimiter.Forget(item)
}
