package cache

import (
	"time"

	"k8s.io/utils/clock"
)

// RetryWithDeadline decides whether to keep retrying after errors of one kind: retries are
// allowed for a window that starts at the first such error and is forgotten once no such error
// has been seen for a while.
type RetryWithDeadline interface {
	// After records the outcome of an attempt; errors that are not retryable (nil included)
	// are ignored.
	After(err error)
	// ShouldRetry reports whether the window that started at the first retryable error is
	// still open. Once it has closed the window is forgotten, so a later error opens a new one.
	ShouldRetry() bool
}

// retryWithDeadline implements RetryWithDeadline. It is not safe for concurrent use.
type retryWithDeadline struct {
	maxRetryDuration time.Duration
	minResetPeriod   time.Duration
	isRetryable      func(error) bool
	clock            clock.Clock

	// firstErrorTime and lastErrorTime bound the current run of retryable errors; zero when
	// there is none.
	firstErrorTime time.Time
	lastErrorTime  time.Time
}

// NewRetryWithDeadline returns a RetryWithDeadline that allows retries for maxRetryDuration after
// the first error isRetryable accepts, and starts a new window when such an error comes at
// least minResetPeriod after the previous one. maxRetryDuration <= 0 never allows a retry. A nil
// clock means clock.RealClock{}; a nil isRetryable accepts no error.
func NewRetryWithDeadline(maxRetryDuration, minResetPeriod time.Duration, isRetryable func(error) bool, c clock.Clock) RetryWithDeadline {
	if c == nil {
		c = clock.RealClock{}
	}
	if isRetryable == nil {
		isRetryable = func(error) bool { return false }
	}
	return &retryWithDeadline{
		maxRetryDuration: maxRetryDuration,
		minResetPeriod:   minResetPeriod,
		isRetryable:      isRetryable,
		clock:            c,
	}
}

func (r *retryWithDeadline) reset() {
	r.firstErrorTime = time.Time{}
	r.lastErrorTime = time.Time{}
}

// After implements RetryWithDeadline.
func (r *retryWithDeadline) After(err error) {
	if !r.isRetryable(err) {
		return
	}
	now := r.clock.Now()
	if now.Sub(r.lastErrorTime) >= r.minResetPeriod {
		r.reset()
	}
	if r.firstErrorTime.IsZero() {
		r.firstErrorTime = now
	}
	r.lastErrorTime = now
}

// ShouldRetry implements RetryWithDeadline.
func (r *retryWithDeadline) ShouldRetry() bool {
	if r.maxRetryDuration <= 0 {
		return false
	}
	if r.clock.Now().Sub(r.firstErrorTime) <= r.maxRetryDuration {
		return true
	}
	r.reset()
	return false
}
