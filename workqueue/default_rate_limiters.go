package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter is the untyped rate limiter interface.
//
// Deprecated: use TypedRateLimiter instead.
type RateLimiter TypedRateLimiter[any]

// TypedRateLimiter decides how long an item waits before it is retried. Implementations are
// safe for concurrent use.
type TypedRateLimiter[T comparable] interface {
	// When records one more failure of item and returns how long it should wait.
	When(item T) time.Duration
	// Forget stops tracking item, after a success or a final failure.
	Forget(item T)
	// NumRequeues returns how many failures of item are tracked.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter returns the untyped DefaultTypedControllerRateLimiter.
//
// Deprecated: use DefaultTypedControllerRateLimiter instead.
func DefaultControllerRateLimiter() RateLimiter {
	return DefaultTypedControllerRateLimiter[any]()
}

// DefaultTypedControllerRateLimiter returns the limiter most controllers use: the larger of a
// per-item exponential backoff (5ms doubling up to 1000s) and an overall token bucket (10 per
// second, bursts of 100).
func DefaultTypedControllerRateLimiter[T comparable]() TypedRateLimiter[T] {
	return NewTypedMaxOfRateLimiter(
		NewTypedItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		&TypedBucketRateLimiter[T]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// DefaultItemBasedRateLimiter returns the untyped DefaultTypedItemBasedRateLimiter.
//
// Deprecated: use DefaultTypedItemBasedRateLimiter instead.
func DefaultItemBasedRateLimiter() RateLimiter {
	return DefaultTypedItemBasedRateLimiter[any]()
}

// DefaultTypedItemBasedRateLimiter returns a per-item exponential backoff from 1ms doubling up
// to 1000s.
func DefaultTypedItemBasedRateLimiter[T comparable]() TypedRateLimiter[T] {
	return NewTypedItemExponentialFailureRateLimiter[T](time.Millisecond, 1000*time.Second)
}

// BucketRateLimiter is the untyped TypedBucketRateLimiter.
//
// Deprecated: use TypedBucketRateLimiter instead.
type BucketRateLimiter = TypedBucketRateLimiter[any]

// TypedBucketRateLimiter limits the overall retry rate with a token bucket, whatever the item.
// Every When takes a token, also for an item that the queue then finds already queued (as in
// client-go). With a nil Limiter it does not limit.
type TypedBucketRateLimiter[T comparable] struct {
	*rate.Limiter
}

// When reserves a token and returns how long to wait for it.
func (r *TypedBucketRateLimiter[T]) When(item T) time.Duration {
	if r.Limiter == nil {
		return 0
	}
	return r.Limiter.Reserve().Delay()
}

// NumRequeues returns 0: the bucket does not track items.
func (r *TypedBucketRateLimiter[T]) NumRequeues(item T) int {
	return 0
}

// Forget does nothing: the bucket does not track items.
func (r *TypedBucketRateLimiter[T]) Forget(item T) {}

// ItemExponentialFailureRateLimiter is the untyped TypedItemExponentialFailureRateLimiter.
//
// Deprecated: use TypedItemExponentialFailureRateLimiter instead.
type ItemExponentialFailureRateLimiter = TypedItemExponentialFailureRateLimiter[any]

// TypedItemExponentialFailureRateLimiter delays an item by baseDelay·2^failures, where
// failures counts the item's earlier When calls since its last Forget, capped at maxDelay. A
// delay too large for a time.Duration is maxDelay. Its zero value never delays.
type TypedItemExponentialFailureRateLimiter[T comparable] struct {
	// mu guards failures.
	mu       sync.Mutex
	failures map[T]int

	baseDelay time.Duration
	maxDelay  time.Duration
}

// NewItemExponentialFailureRateLimiter returns an untyped exponential per-item limiter.
//
// Deprecated: use NewTypedItemExponentialFailureRateLimiter instead.
func NewItemExponentialFailureRateLimiter(baseDelay time.Duration, maxDelay time.Duration) RateLimiter {
	return NewTypedItemExponentialFailureRateLimiter[any](baseDelay, maxDelay)
}

// NewTypedItemExponentialFailureRateLimiter returns a limiter that delays the n-th failure of
// an item (counting from 0) by baseDelay·2^n, at most maxDelay.
func NewTypedItemExponentialFailureRateLimiter[T comparable](baseDelay time.Duration, maxDelay time.Duration) TypedRateLimiter[T] {
	return &TypedItemExponentialFailureRateLimiter[T]{
		failures:  make(map[T]int),
		baseDelay: baseDelay,
		maxDelay:  maxDelay,
	}
}

// maxDurationFloat is 2^63, the first float64 past the largest time.Duration.
const maxDurationFloat = float64(1 << 63)

// When counts one more failure of item and returns baseDelay·2^(earlier failures), capped at
// maxDelay. The product is computed in float64 as client-go does; where client-go would
// convert an out-of-range float (exactly 2^63) to a negative Duration, the result is maxDelay.
func (r *TypedItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	if r.failures == nil {
		r.failures = make(map[T]int)
	}
	exp := r.failures[item]
	r.failures[item] = exp + 1
	r.mu.Unlock()

	// Ldexp(b, e) is b·2^e, exactly what client-go's b·math.Pow(2, e) computes, without Pow.
	backoff := math.Ldexp(float64(r.baseDelay.Nanoseconds()), exp)
	switch {
	case backoff >= maxDurationFloat:
		return r.maxDelay
	case backoff < -maxDurationFloat:
		return math.MinInt64
	}
	if d := time.Duration(backoff); d < r.maxDelay {
		return d
	}
	return r.maxDelay
}

// NumRequeues returns the number of failures of item since its last Forget.
func (r *TypedItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget clears the failures of item.
func (r *TypedItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// ItemFastSlowRateLimiter is the untyped TypedItemFastSlowRateLimiter.
//
// Deprecated: use TypedItemFastSlowRateLimiter instead.
type ItemFastSlowRateLimiter = TypedItemFastSlowRateLimiter[any]

// TypedItemFastSlowRateLimiter retries an item quickly a few times, then slowly. Its zero
// value never delays.
type TypedItemFastSlowRateLimiter[T comparable] struct {
	// mu guards failures.
	mu       sync.Mutex
	failures map[T]int

	maxFastAttempts int
	fastDelay       time.Duration
	slowDelay       time.Duration
}

// NewItemFastSlowRateLimiter returns an untyped fast/slow per-item limiter.
//
// Deprecated: use NewTypedItemFastSlowRateLimiter instead.
func NewItemFastSlowRateLimiter(fastDelay, slowDelay time.Duration, maxFastAttempts int) RateLimiter {
	return NewTypedItemFastSlowRateLimiter[any](fastDelay, slowDelay, maxFastAttempts)
}

// NewTypedItemFastSlowRateLimiter returns a limiter that delays the first maxFastAttempts
// failures of an item by fastDelay and later ones by slowDelay.
func NewTypedItemFastSlowRateLimiter[T comparable](fastDelay, slowDelay time.Duration, maxFastAttempts int) TypedRateLimiter[T] {
	return &TypedItemFastSlowRateLimiter[T]{
		failures:        make(map[T]int),
		fastDelay:       fastDelay,
		slowDelay:       slowDelay,
		maxFastAttempts: maxFastAttempts,
	}
}

// When counts one more failure of item and returns fastDelay while the count is at most
// maxFastAttempts, slowDelay after that.
func (r *TypedItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = make(map[T]int)
	}
	n := r.failures[item] + 1
	r.failures[item] = n
	if n <= r.maxFastAttempts {
		return r.fastDelay
	}
	return r.slowDelay
}

// NumRequeues returns the number of failures of item since its last Forget.
func (r *TypedItemFastSlowRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget clears the failures of item.
func (r *TypedItemFastSlowRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// MaxOfRateLimiter is the untyped TypedMaxOfRateLimiter.
//
// Deprecated: use TypedMaxOfRateLimiter instead.
type MaxOfRateLimiter = TypedMaxOfRateLimiter[any]

// TypedMaxOfRateLimiter asks every child limiter and uses the longest delay. Combined with a
// token bucket, an item delayed longer by another child still takes a bucket token, so the
// bucket's burst can look exceeded. Nil children are skipped (client-go panics on them). Its
// zero value never delays.
type TypedMaxOfRateLimiter[T comparable] struct {
	limiters []TypedRateLimiter[T]
}

// NewMaxOfRateLimiter returns an untyped max-of limiter.
//
// Deprecated: use NewTypedMaxOfRateLimiter instead.
func NewMaxOfRateLimiter(limiters ...TypedRateLimiter[any]) RateLimiter {
	return NewTypedMaxOfRateLimiter(limiters...)
}

// NewTypedMaxOfRateLimiter returns a limiter whose delay and requeue count are the largest of
// limiters'. Every child's When is called, so every child counts the failure.
func NewTypedMaxOfRateLimiter[T comparable](limiters ...TypedRateLimiter[T]) TypedRateLimiter[T] {
	return &TypedMaxOfRateLimiter[T]{limiters: limiters}
}

// When calls When on every child and returns the largest delay, or 0 without children.
func (r *TypedMaxOfRateLimiter[T]) When(item T) time.Duration {
	var longest time.Duration
	for _, l := range r.limiters {
		if l != nil {
			longest = max(longest, l.When(item))
		}
	}
	return longest
}

// NumRequeues returns the largest NumRequeues of the children, or 0 without children.
func (r *TypedMaxOfRateLimiter[T]) NumRequeues(item T) int {
	most := 0
	for _, l := range r.limiters {
		if l != nil {
			most = max(most, l.NumRequeues(item))
		}
	}
	return most
}

// Forget calls Forget on every child.
func (r *TypedMaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		if l != nil {
			l.Forget(item)
		}
	}
}

// WithMaxWaitRateLimiter is the untyped TypedWithMaxWaitRateLimiter.
//
// Deprecated: use TypedWithMaxWaitRateLimiter instead.
type WithMaxWaitRateLimiter = TypedWithMaxWaitRateLimiter[any]

// TypedWithMaxWaitRateLimiter caps the delays of another limiter. Its zero value, or one
// wrapping a nil limiter, never delays (client-go panics).
type TypedWithMaxWaitRateLimiter[T comparable] struct {
	limiter  TypedRateLimiter[T]
	maxDelay time.Duration
}

// NewWithMaxWaitRateLimiter returns an untyped max-wait limiter.
//
// Deprecated: use NewTypedWithMaxWaitRateLimiter instead.
func NewWithMaxWaitRateLimiter(limiter RateLimiter, maxDelay time.Duration) RateLimiter {
	return NewTypedWithMaxWaitRateLimiter[any](limiter, maxDelay)
}

// NewTypedWithMaxWaitRateLimiter returns a limiter that delays like limiter, but never longer
// than maxDelay.
func NewTypedWithMaxWaitRateLimiter[T comparable](limiter TypedRateLimiter[T], maxDelay time.Duration) TypedRateLimiter[T] {
	return &TypedWithMaxWaitRateLimiter[T]{limiter: limiter, maxDelay: maxDelay}
}

// When returns the wrapped limiter's delay, at most maxDelay.
func (w TypedWithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	if w.limiter == nil {
		return 0
	}
	return min(w.limiter.When(item), w.maxDelay)
}

// Forget calls Forget on the wrapped limiter.
func (w TypedWithMaxWaitRateLimiter[T]) Forget(item T) {
	if w.limiter != nil {
		w.limiter.Forget(item)
	}
}

// NumRequeues returns the wrapped limiter's NumRequeues.
func (w TypedWithMaxWaitRateLimiter[T]) NumRequeues(item T) int {
	if w.limiter == nil {
		return 0
	}
	return w.limiter.NumRequeues(item)
}
