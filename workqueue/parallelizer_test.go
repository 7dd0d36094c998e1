package workqueue

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

func TestParallelizeUntil(t *testing.T) {
	cases := []struct {
		name                   string
		workers, pieces, chunk int
		wantPieces, maxWorkers int
	}{
		{"one per worker", 4, 4, 0, 4, 4},
		{"more pieces than workers", 3, 100, 1, 100, 3},
		{"chunks", 10, 1000, 10, 1000, 10},
		{"uneven chunks", 10, 999, 13, 999, 10},
		{"fewer chunks than workers", 10, 20, 7, 20, 3},
		{"chunk larger than pieces", 4, 5, 100, 5, 1},
		{"negative chunk means one", 2, 6, -5, 6, 2},
		{"no pieces", 4, 0, 1, 0, 0},
		{"negative pieces", 4, -3, 1, 0, 0},
		{"no workers", 0, 10, 1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			counts := make([]atomic.Int32, max(tc.pieces, 0))
			var running, peak atomic.Int32
			var gate sync.WaitGroup // hold the first pieces until every expected worker runs one
			gate.Add(tc.maxWorkers)
			var entered atomic.Int32
			ParallelizeUntil(context.Background(), tc.workers, tc.pieces, func(p int) {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				if entered.Add(1) <= int32(tc.maxWorkers) {
					gate.Done()
					gate.Wait()
				}
				counts[p].Add(1)
			}, WithChunkSize(tc.chunk))
			done := 0
			for p := range counts {
				switch counts[p].Load() {
				case 0:
				case 1:
					done++
				default:
					t.Fatalf("piece %d ran %d times", p, counts[p].Load())
				}
			}
			if done != tc.wantPieces {
				t.Fatalf("%d pieces ran, want %d", done, tc.wantPieces)
			}
			if got := int(peak.Load()); got != tc.maxWorkers {
				t.Fatalf("%d pieces ran at once, want %d", got, tc.maxWorkers)
			}
		})
	}
}

func TestParallelizeUntilCancel(t *testing.T) {
	cases := []struct {
		name     string
		ctx      func() (context.Context, context.CancelFunc)
		cancelAt int // the piece that cancels; -1 for none
		want     int // pieces that run with one worker
	}{
		{"canceled before start", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, -1, 0},
		{"canceled by piece 3 stops before piece 4", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, 3, 4},
		{"nil context runs everything", func() (context.Context, context.CancelFunc) {
			return nil, func() {}
		}, -1, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			ran := 0
			ParallelizeUntil(ctx, 1, 10, func(p int) {
				ran++
				if p == tc.cancelAt {
					cancel()
				}
			}, WithChunkSize(5))
			if ran != tc.want {
				t.Fatalf("%d pieces ran, want %d", ran, tc.want)
			}
		})
	}
}

// TestParallelizeUntilPanic turns utilruntime's crash off: the panic then reaches the panic
// handlers, the panicking worker stops, the other workers finish, and the call returns.
func TestParallelizeUntilPanic(t *testing.T) {
	oldCrash, oldHandlers := utilruntime.ReallyCrash, utilruntime.PanicHandlers
	t.Cleanup(func() { utilruntime.ReallyCrash, utilruntime.PanicHandlers = oldCrash, oldHandlers })
	utilruntime.ReallyCrash = false
	var handled atomic.Value
	utilruntime.PanicHandlers = []func(context.Context, any){func(_ context.Context, r any) { handled.Store(r) }}

	cases := []struct {
		name    string
		workers int
		want    int // pieces that ran to completion
	}{
		{"single worker stops at the panic", 1, 3},
		{"other workers go on", 2, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			handled.Store("")
			var ran atomic.Int32
			ParallelizeUntil(context.Background(), tc.workers, 10, func(p int) {
				if p == 3 {
					panic("piece 3")
				}
				ran.Add(1)
			})
			if got := handled.Load(); got != "piece 3" {
				t.Fatalf("panic handler got %v", got)
			}
			if got := int(ran.Load()); got != tc.want {
				t.Fatalf("%d pieces completed, want %d", got, tc.want)
			}
		})
	}
}
