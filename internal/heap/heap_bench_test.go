package heap

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPushPop pushes 100k values with random int64 keys and pops them all, as a delaying
// queue's waiting set does with due times; one op is one push and one pop.
func BenchmarkPushPop(b *testing.B) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = rng.Int64N(1 << 40)
	}
	h := New[int](nil, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		for j := range min(n, b.N-i) {
			h.Push(keys[j], j)
		}
		for h.Len() > 0 {
			h.Pop()
		}
	}
}
