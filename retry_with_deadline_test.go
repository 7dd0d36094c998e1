package cache

import (
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestRetryWithDeadline(t *testing.T) {
	retryable := errors.New("retryable")
	other := errors.New("other")
	isRetryable := func(err error) bool { return errors.Is(err, retryable) }

	// step is one event on the timeline: advance the clock, record an outcome, ask.
	type step struct {
		advance time.Duration
		err     error // recorded with After unless skip
		skip    bool
		want    bool // ShouldRetry afterwards
	}
	cases := []struct {
		name  string
		max   time.Duration
		steps []step
	}{
		{name: "retries within the window", max: 3 * time.Second, steps: []step{
			{err: retryable, want: true},
			{advance: 2 * time.Second, err: retryable, want: true},
			{advance: time.Second, err: retryable, want: true}, // exactly max after the first
			{advance: time.Second, err: retryable, want: false},
		}},
		{name: "window forgotten after a quiet period", max: 3 * time.Second, steps: []step{
			{err: retryable, want: true},
			{advance: 2 * time.Second, err: retryable, want: true},
			// 5s since the last retryable error >= minReset (5s): a new window opens.
			{advance: 5 * time.Second, err: retryable, want: true},
			{advance: 3 * time.Second, err: retryable, want: true},
			{advance: time.Second, err: retryable, want: false},
		}},
		{name: "other errors do not count", max: 3 * time.Second, steps: []step{
			{err: retryable, want: true},
			{advance: 2 * time.Second, err: other, want: true},
			{advance: 2 * time.Second, err: nil, want: false},
		}},
		{name: "window closes and reopens", max: time.Second, steps: []step{
			{err: retryable, want: true},
			{advance: 2 * time.Second, skip: true, want: false},
			// ShouldRetry false reset the window: the next error starts a new one.
			{err: retryable, want: true},
		}},
		{name: "zero max never retries", max: 0, steps: []step{
			{err: retryable, want: false},
		}},
		{name: "negative max never retries", max: -time.Second, steps: []step{
			{err: retryable, want: false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clocktesting.NewFakeClock(time.Unix(1000, 0))
			r := NewRetryWithDeadline(tc.max, 5*time.Second, isRetryable, c)
			for i, s := range tc.steps {
				c.Step(s.advance)
				if !s.skip {
					r.After(s.err)
				}
				if got := r.ShouldRetry(); got != s.want {
					t.Fatalf("step %d: ShouldRetry = %v, want %v", i, got, s.want)
				}
			}
		})
	}
}

func TestRetryWithDeadlineDefaults(t *testing.T) {
	r := NewRetryWithDeadline(time.Minute, time.Minute, nil, nil)
	r.After(errors.New("x"))
	if r.ShouldRetry() {
		t.Fatalf("ShouldRetry with a nil isRetryable after an error = true, want false (no error is retryable)")
	}
}
