package ring

import (
	"runtime"
	"testing"

	"k8s.io/utils/buffer"
)

// benchItem has the size of a handler notification (a kind plus two interface values).
type benchItem struct {
	kind     int
	old, new interface{}
}

// benchObj is what every benchItem points to, so that filling items does not allocate.
var benchObj interface{} = &struct{ x int }{}

// BenchmarkSteadyState pushes and pops with a small constant backlog: the common case of a
// handler that keeps up.
func BenchmarkSteadyState(b *testing.B) {
	b.Run("kcache", func(b *testing.B) {
		r := New[benchItem](16)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.Push(benchItem{kind: i, old: benchObj, new: benchObj})
			if r.Len() > 8 {
				r.Pop()
			}
		}
	})
	b.Run("client-go-RingGrowing", func(b *testing.B) {
		r := buffer.NewTypedRingGrowing[benchItem](buffer.RingGrowingOptions{InitialSize: 16})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.WriteOne(benchItem{kind: i, old: benchObj, new: benchObj})
			if r.Len() > 8 {
				r.ReadOne()
			}
		}
	})
}

// BenchmarkBurstThenDrain queues 1M items (a stalled handler), drains them, and reports the
// heap still held by the buffer afterwards.
func BenchmarkBurstThenDrain(b *testing.B) {
	const burst = 1 << 20
	run := func(b *testing.B, mk func() (push func(benchItem), pop func())) {
		b.ReportAllocs()
		var retained uint64
		for b.Loop() {
			push, pop := mk()
			for i := 0; i < burst; i++ {
				push(benchItem{kind: i, old: benchObj, new: benchObj})
			}
			for i := 0; i < burst; i++ {
				pop()
			}
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			retained = after.HeapAlloc
			runtime.KeepAlive(push)
		}
		b.ReportMetric(float64(retained)/(1<<20), "MiB-heap-after-drain")
	}
	b.Run("kcache", func(b *testing.B) {
		run(b, func() (func(benchItem), func()) {
			r := New[benchItem](1024)
			return r.Push, func() { r.Pop() }
		})
	})
	b.Run("client-go-RingGrowing", func(b *testing.B) {
		run(b, func() (func(benchItem), func()) {
			r := buffer.NewTypedRingGrowing[benchItem](buffer.RingGrowingOptions{InitialSize: 1024})
			return r.WriteOne, func() { r.ReadOne() }
		})
	})
}
