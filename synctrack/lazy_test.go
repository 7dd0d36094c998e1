package synctrack

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestLazy(t *testing.T) {
	errBoom := errors.New("boom")
	type step struct {
		op      string // "get", "notify", "set"
		value   int    // for "set": what Evaluate returns next; for "get": expected value
		fail    bool   // for "set": Evaluate fails
		wantErr bool   // for "get"
		evals   int    // for "get": expected total Evaluate calls afterwards
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{
			name: "value is cached until Notify",
			steps: []step{
				{op: "set", value: 1},
				{op: "get", value: 1, evals: 1},
				{op: "set", value: 2},
				{op: "get", value: 1, evals: 1},
				{op: "notify"},
				{op: "get", value: 2, evals: 2},
				{op: "get", value: 2, evals: 2},
			},
		},
		{
			name: "errors are not cached",
			steps: []step{
				{op: "set", fail: true},
				{op: "get", wantErr: true, evals: 1},
				{op: "get", wantErr: true, evals: 2},
				{op: "set", value: 7},
				{op: "get", value: 7, evals: 3},
				{op: "get", value: 7, evals: 3},
			},
		},
		{
			name: "notify before any get",
			steps: []step{
				{op: "set", value: 3},
				{op: "notify"},
				{op: "notify"},
				{op: "get", value: 3, evals: 1},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var (
				next  int
				fail  bool
				evals int
			)
			z := Lazy[int]{Evaluate: func() (int, error) {
				evals++
				if fail {
					return 0, errBoom
				}
				return next, nil
			}}
			for i, s := range tc.steps {
				switch s.op {
				case "set":
					next, fail = s.value, s.fail
				case "notify":
					z.Notify()
				case "get":
					got, err := z.Get()
					if s.wantErr {
						if !errors.Is(err, errBoom) {
							t.Fatalf("step %d: err = %v, want %v", i, err, errBoom)
						}
					} else if err != nil || got != s.value {
						t.Fatalf("step %d: Get() = %d, %v; want %d", i, got, err, s.value)
					}
					if evals != s.evals {
						t.Fatalf("step %d: %d evaluations, want %d", i, evals, s.evals)
					}
				}
			}
		})
	}
}

func TestLazyNilEvaluate(t *testing.T) {
	var z Lazy[string]
	if _, err := z.Get(); !errors.Is(err, errNoEvaluate) {
		t.Fatalf("Get with nil Evaluate: err = %v, want %v", err, errNoEvaluate)
	}
}

// TestLazyConcurrent checks that a Get that starts after a Notify never returns a value older
// than the state at the time of that Notify.
func TestLazyConcurrent(t *testing.T) {
	var reality atomic.Int64
	z := Lazy[int64]{Evaluate: func() (int64, error) { return reality.Load(), nil }}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for i := 0; i < 200; i++ {
				set := reality.Add(1)
				z.Notify()
				got, err := z.Get()
				if err != nil {
					t.Errorf("Get: %v", err)
					return
				}
				if got < set {
					t.Errorf("Get returned %d after Notify at %d", got, set)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLazyEvaluatesOncePerGeneration checks that concurrent Gets share one evaluation.
func TestLazyEvaluatesOncePerGeneration(t *testing.T) {
	var evals atomic.Int32
	release := make(chan struct{})
	z := Lazy[int]{Evaluate: func() (int, error) {
		evals.Add(1)
		<-release
		return 42, nil
	}}
	var wg sync.WaitGroup
	results := make([]int, 10)
	for i := range results {
		wg.Go(func() {
			v, _ := z.Get()
			results[i] = v
		})
	}
	close(release)
	wg.Wait()
	if n := evals.Load(); n != 1 {
		t.Fatalf("%d evaluations for one generation, want 1", n)
	}
	for i, v := range results {
		if v != 42 {
			t.Fatalf("result %d = %d, want 42", i, v)
		}
	}
}
