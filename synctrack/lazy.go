package synctrack

import (
	"errors"
	"sync"
	"sync/atomic"
)

// errNoEvaluate is returned by Get when Evaluate is nil.
var errNoEvaluate = errors.New("synctrack: Lazy.Evaluate is nil")

// Lazy caches the result of Evaluate until Notify says that its inputs changed. Get evaluates
// on demand: after a Notify, the first Get calls Evaluate and concurrent Gets wait for that one
// call. A successful result is cached; an error is returned but not cached, so the next Get
// calls Evaluate again.
//
// Set Evaluate before the first Get and do not change it afterwards. Evaluate may run on any
// goroutine that calls Get; it is never called under a lock that Notify needs, so it may call
// Notify. The zero value (with Evaluate set) is ready to use; a nil Evaluate makes Get return
// an error.
type Lazy[T any] struct {
	Evaluate func() (T, error)

	// current is the generation Get reads; Notify replaces it.
	current atomic.Pointer[lazyGeneration[T]]
}

// lazyGeneration holds the value computed for one generation of inputs.
type lazyGeneration[T any] struct {
	evaluate func() (T, error)

	// ready turns true once value is set; it lets Get skip the mutex.
	ready atomic.Bool

	// mu serialises evaluations of this generation and guards value.
	mu    sync.Mutex
	value T
}

// get returns the generation's value, computing it on first use.
func (g *lazyGeneration[T]) get() (T, error) {
	if g.ready.Load() {
		return g.value, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ready.Load() {
		return g.value, nil
	}
	if g.evaluate == nil {
		var zero T
		return zero, errNoEvaluate
	}
	v, err := g.evaluate()
	if err != nil {
		return v, err
	}
	g.value = v
	g.ready.Store(true)
	return v, nil
}

// Notify marks the cached value as stale: the next Get calls Evaluate. Gets already running
// finish with the previous generation.
func (z *Lazy[T]) Notify() {
	z.current.Store(&lazyGeneration[T]{evaluate: z.Evaluate})
}

// Get returns the cached value, calling Evaluate first if nothing is cached since the last
// Notify (or ever).
func (z *Lazy[T]) Get() (T, error) {
	g := z.current.Load()
	if g == nil {
		z.current.CompareAndSwap(nil, &lazyGeneration[T]{evaluate: z.Evaluate})
		g = z.current.Load()
	}
	return g.get()
}
