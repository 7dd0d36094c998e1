package workqueue

import (
	"context"
	"sync"
	"sync/atomic"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// DoWorkPieceFunc processes piece number piece of a ParallelizeUntil call.
type DoWorkPieceFunc func(piece int)

type options struct {
	chunkSize int
}

// Options configures ParallelizeUntil.
type Options func(*options)

// WithChunkSize makes each worker take c consecutive pieces at a time instead of one, which
// pays off when there are many more pieces than workers and each piece is cheap. A c below 1
// means 1.
func WithChunkSize(c int) func(*options) {
	return func(o *options) {
		o.chunkSize = c
	}
}

// ParallelizeUntil calls doWorkPiece(p) for every p in [0, pieces) from up to workers
// goroutines, and returns when all calls have returned or ctx is done. Pieces are handed out
// in chunks (see WithChunkSize); a worker checks ctx before every piece and stops once it is
// done, so after a cancellation no new piece starts. A nil ctx never cancels.
//
// Nothing is done if pieces < 1 or workers < 1 (client-go also returns at once for
// workers < 1, and panics for negative pieces). A panic in doWorkPiece goes through
// utilruntime.HandleCrashWithContext in the worker's goroutine: by default it crashes the
// program; if utilruntime.ReallyCrash is false, that worker stops, the others go on, and the
// panic handlers have run by the time ParallelizeUntil returns.
func ParallelizeUntil(ctx context.Context, workers, pieces int, doWorkPiece DoWorkPieceFunc, opts ...Options) {
	if pieces < 1 || workers < 1 {
		return
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	chunkSize := max(o.chunkSize, 1)
	chunks := pieces/chunkSize + min(pieces%chunkSize, 1)
	workers = min(workers, chunks)

	crashCtx := ctx
	var stop <-chan struct{}
	if ctx != nil {
		stop = ctx.Done()
	} else {
		crashCtx = context.Background()
	}

	// Chunks are claimed from a shared counter instead of a channel filled up front.
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			// Done runs after the crash handling (client-go has them the other way round),
			// so that the panic handlers have finished when ParallelizeUntil returns.
			defer wg.Done()
			defer utilruntime.HandleCrashWithContext(crashCtx)
			for {
				chunk := int(next.Add(1) - 1)
				if chunk >= chunks {
					return
				}
				start := chunk * chunkSize
				end := start + min(chunkSize, pieces-start)
				for p := start; p < end; p++ {
					select {
					case <-stop:
						return
					default:
					}
					doWorkPiece(p)
				}
			}
		}()
	}
	wg.Wait()
}
