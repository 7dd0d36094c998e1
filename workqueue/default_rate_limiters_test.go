package workqueue

import (
	"math"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	cases := []struct {
		name      string
		base, max time.Duration
		want      []time.Duration // successive When("a")
	}{
		{"doubles from base", time.Millisecond, time.Second, []time.Duration{
			1 * time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond}},
		{"capped at max", 300 * time.Millisecond, time.Second, []time.Duration{
			300 * time.Millisecond, 600 * time.Millisecond, time.Second, time.Second}},
		{"zero base never delays", 0, time.Second, []time.Duration{0, 0, 0}},
		{"max below base", time.Second, time.Millisecond, []time.Duration{time.Millisecond, time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewTypedItemExponentialFailureRateLimiter[string](tc.base, tc.max)
			for i, want := range tc.want {
				if got := r.When("a"); got != want {
					t.Fatalf("When #%d = %v, want %v", i, got, want)
				}
				if got := r.NumRequeues("a"); got != i+1 {
					t.Fatalf("NumRequeues after %d Whens = %d", i+1, got)
				}
			}
			if got := r.NumRequeues("b"); got != 0 {
				t.Fatalf("NumRequeues of another item = %d", got)
			}
			if got := r.When("b"); got != tc.want[0] {
				t.Fatalf("another item's first When = %v, want %v", got, tc.want[0])
			}
			r.Forget("a")
			if got := r.NumRequeues("a"); got != 0 {
				t.Fatalf("NumRequeues after Forget = %d", got)
			}
			if got := r.When("a"); got != tc.want[0] {
				t.Fatalf("When after Forget = %v, want %v", got, tc.want[0])
			}
		})
	}
}

// clientGoBackoff is the formula client-go v0.37.2 uses, for comparison.
func clientGoBackoff(base, maxDelay time.Duration, exp int) time.Duration {
	backoff := float64(base.Nanoseconds()) * math.Pow(2, float64(exp))
	if backoff > math.MaxInt64 {
		return maxDelay
	}
	if d := time.Duration(backoff); d <= maxDelay {
		return d
	}
	return maxDelay
}

// TestItemExponentialOverflow checks large failure counts against client-go's formula, and
// the one input where that formula overflows (a product of exactly 2^63).
func TestItemExponentialOverflow(t *testing.T) {
	bases := []time.Duration{1, 3, 7 * time.Millisecond, time.Millisecond, time.Second, 123456789, 1 << 40, math.MaxInt64 / 3, math.MaxInt64}
	maxes := []time.Duration{1000 * time.Second, math.MaxInt64}
	for _, base := range bases {
		for _, maxDelay := range maxes {
			r := NewTypedItemExponentialFailureRateLimiter[int](base, maxDelay).(*TypedItemExponentialFailureRateLimiter[int])
			for _, exp := range []int{0, 1, 2, 10, 30, 40, 52, 53, 61, 62, 63, 64, 100, 1023, 1024, 1100, 5000, math.MaxInt32} {
				r.failures[1] = exp
				got := r.When(1)
				product := float64(base) * math.Pow(2, float64(exp))
				want := clientGoBackoff(base, maxDelay, exp)
				if product >= 1<<63 {
					want = maxDelay // client-go converts 2^63 itself to a negative Duration
				}
				if got != want {
					t.Fatalf("base %v max %v exp %d: When = %v, want %v", base, maxDelay, exp, got, want)
				}
				if got < 0 {
					t.Fatalf("base %v exp %d: negative delay %v", base, exp, got)
				}
			}
		}
	}
}

func TestZeroValueRateLimiters(t *testing.T) {
	cases := []struct {
		name    string
		limiter TypedRateLimiter[string]
	}{
		{"exponential", &TypedItemExponentialFailureRateLimiter[string]{}},
		{"fast slow", &TypedItemFastSlowRateLimiter[string]{}},
		{"max of", &TypedMaxOfRateLimiter[string]{}},
		{"max of nil children", NewTypedMaxOfRateLimiter[string](nil, nil)},
		{"max wait", TypedWithMaxWaitRateLimiter[string]{}},
		{"max wait of nil", NewTypedWithMaxWaitRateLimiter[string](nil, time.Second)},
		{"bucket without limiter", &TypedBucketRateLimiter[string]{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.limiter.When("a"); got != 0 {
				t.Fatalf("When = %v, want 0", got)
			}
			tc.limiter.Forget("a")
			if got := tc.limiter.NumRequeues("a"); got != 0 {
				t.Fatalf("NumRequeues after Forget = %d", got)
			}
		})
	}
}

func TestItemFastSlowRateLimiter(t *testing.T) {
	cases := []struct {
		name     string
		maxFast  int
		want     []time.Duration
		forgetAt int // Forget("a") before this When; -1 for never
	}{
		{"fast then slow", 3, []time.Duration{5, 5, 5, 10, 10}, -1},
		{"no fast attempts", 0, []time.Duration{10, 10}, -1},
		{"negative fast attempts", -1, []time.Duration{10}, -1},
		{"forget makes it fast again", 2, []time.Duration{5, 5, 10, 5, 5, 10}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewTypedItemFastSlowRateLimiter[string](5, 10, tc.maxFast)
			n := 0
			for i, want := range tc.want {
				if i == tc.forgetAt {
					r.Forget("a")
					n = 0
				}
				if got := r.When("a"); got != want {
					t.Fatalf("When #%d = %v, want %v", i, got, want)
				}
				n++
				if got := r.NumRequeues("a"); got != n {
					t.Fatalf("NumRequeues = %d, want %d", got, n)
				}
			}
			if r.When("b") != tc.want[0] {
				t.Fatal("items share failure counts")
			}
		})
	}
}

func TestBucketRateLimiter(t *testing.T) {
	// One token per 1000s and a burst of 2: two free calls, then a long wait.
	r := &TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(0.001), 2)}
	for i, item := range []string{"a", "b"} {
		if got := r.When(item); got != 0 {
			t.Fatalf("When #%d = %v, want 0", i, got)
		}
	}
	if got := r.When("a"); got < 900*time.Second {
		t.Fatalf("When after the burst = %v, want about 1000s", got)
	}
	r.Forget("a")
	if got := r.NumRequeues("a"); got != 0 {
		t.Fatalf("NumRequeues = %d, want 0", got)
	}
}

func TestMaxOfRateLimiter(t *testing.T) {
	r := NewTypedMaxOfRateLimiter(
		NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
		NewTypedItemFastSlowRateLimiter[string](3*time.Millisecond, time.Second, 2),
		nil,
	)
	cases := []struct {
		want     time.Duration
		requeues int
	}{
		{3 * time.Millisecond, 1}, // max(1ms, fast 3ms)
		{3 * time.Millisecond, 2}, // max(2ms, fast 3ms)
		{time.Second, 3},          // max(4ms, slow 1s)
	}
	for i, tc := range cases {
		if got := r.When("a"); got != tc.want {
			t.Fatalf("When #%d = %v, want %v", i, got, tc.want)
		}
		if got := r.NumRequeues("a"); got != tc.requeues {
			t.Fatalf("NumRequeues #%d = %d, want %d", i, got, tc.requeues)
		}
	}
	r.Forget("a")
	if got := r.NumRequeues("a"); got != 0 {
		t.Fatalf("NumRequeues after Forget = %d: not every child forgot", got)
	}
	if got := r.When("a"); got != 3*time.Millisecond {
		t.Fatalf("When after Forget = %v", got)
	}
}

func TestWithMaxWaitRateLimiter(t *testing.T) {
	r := NewTypedWithMaxWaitRateLimiter(NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Hour), 3*time.Second)
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
		if got := r.When("a"); got != want {
			t.Fatalf("When #%d = %v, want %v", i, got, want)
		}
	}
	if got := r.NumRequeues("a"); got != 4 {
		t.Fatalf("NumRequeues = %d, want 4", got)
	}
	r.Forget("a")
	if got := r.NumRequeues("a"); got != 0 {
		t.Fatalf("NumRequeues after Forget = %d", got)
	}
}

func TestDefaultRateLimiters(t *testing.T) {
	cases := []struct {
		name    string
		limiter RateLimiter
		want    []time.Duration
	}{
		{"controller", DefaultControllerRateLimiter(), []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}},
		{"item based", DefaultItemBasedRateLimiter(), []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				if got := tc.limiter.When("a"); got != want {
					t.Fatalf("When #%d = %v, want %v", i, got, want)
				}
			}
			if got := tc.limiter.NumRequeues("a"); got != len(tc.want) {
				t.Fatalf("NumRequeues = %d", got)
			}
		})
	}
	// The controller limiter's bucket allows bursts of 100 at 10 per second: after 100
	// fresh items, the next one waits for a token.
	r := DefaultTypedControllerRateLimiter[int]()
	for i := range 100 {
		if got := r.When(i); got != 5*time.Millisecond {
			t.Fatalf("item %d: When = %v, want 5ms", i, got)
		}
	}
	if got := r.When(100); got < 50*time.Millisecond {
		t.Fatalf("item 101: When = %v, want about 100ms from the bucket", got)
	}
}

func TestRateLimitersConcurrent(t *testing.T) {
	limiters := map[string]TypedRateLimiter[int]{
		"exponential": NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second),
		"fast slow":   NewTypedItemFastSlowRateLimiter[int](time.Millisecond, time.Second, 3),
		"controller":  DefaultTypedControllerRateLimiter[int](),
	}
	for name, r := range limiters {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for range 100 {
						r.When(g % 2)
					}
				})
			}
			wg.Wait()
			if got := r.NumRequeues(0) + r.NumRequeues(1); got != 800 {
				t.Fatalf("NumRequeues total = %d, want 800", got)
			}
		})
	}
}
