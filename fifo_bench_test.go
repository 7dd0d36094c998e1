package cache_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cache "github.com/kcache/cache"
)

// These benchmarks use only the exported API, so that the same bodies can run against
// client-go's tools/cache (swap the import) for comparison.

func fifoBenchPods(n int) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%06d", i), ResourceVersion: "1"}}
	}
	return out
}

// fifoBenchQueue is a queue under test and how to drain n deltas from it.
type fifoBenchQueue struct {
	name string
	make func(known cache.KeyListerGetter) cache.Queue
	// batch pops with PopBatch (the queue must be a QueueWithBatch).
	batch bool
}

var fifoBenchQueues = []fifoBenchQueue{
	{name: "DeltaFIFO", make: func(known cache.KeyListerGetter) cache.Queue {
		return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
	}},
	{name: "RealFIFO", make: func(known cache.KeyListerGetter) cache.Queue {
		return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KnownObjects: known})
	}},
	{name: "RealFIFO-atomic-unlocked", make: func(cache.KeyListerGetter) cache.Queue {
		return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	}},
	{name: "RealFIFO-atomic-unlocked-PopBatch", batch: true, make: func(cache.KeyListerGetter) cache.Queue {
		return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	}},
}

// BenchmarkFIFOAddPop measures throughput: one goroutine Adds b.N objects (over 1024 keys)
// while the consumer pops until it has seen all b.N deltas.
func BenchmarkFIFOAddPop(b *testing.B) {
	pods := fifoBenchPods(1024)
	for _, q := range fifoBenchQueues {
		b.Run(q.name, func(b *testing.B) {
			f := q.make(cache.NewStore(cache.MetaNamespaceKeyFunc))
			b.ReportAllocs()
			b.ResetTimer()
			errc := make(chan error, 1)
			go func() {
				for i := 0; i < b.N; i++ {
					if err := f.Add(pods[i%len(pods)]); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			seen := 0
			countOne := func(obj interface{}, _ bool) error { seen += len(obj.(cache.Deltas)); return nil }
			countBatch := func(ds []cache.Delta, _ bool) error { seen += len(ds); return nil }
			for seen < b.N {
				var err error
				if q.batch {
					err = f.(cache.QueueWithBatch).PopBatch(countBatch, countOne)
				} else {
					_, err = f.Pop(countOne)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkFIFOReplace100k measures one Replace of 100,000 objects into an empty queue, with
// a KnownObjects store holding the same 100,000 objects (so that every known key is checked)
// or without one.
func BenchmarkFIFOReplace100k(b *testing.B) {
	const n = 100000
	pods := fifoBenchPods(n)
	known := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := known.Replace(append([]interface{}(nil), pods...), "1"); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		make func() cache.Queue
	}{
		{"DeltaFIFO/no-known", func() cache.Queue {
			return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true})
		}},
		{"DeltaFIFO/known", func() cache.Queue {
			return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true, KnownObjects: known})
		}},
		{"RealFIFO-atomic/no-known", func() cache.Queue {
			return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true})
		}},
		{"RealFIFO/known", func() cache.Queue {
			return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KnownObjects: known})
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			// No transformer is set, so Replace leaves the list as it is and it can be
			// reused. Building the empty queue is part of each iteration (it is cheap).
			for i := 0; i < b.N; i++ {
				f := tc.make()
				if err := f.Replace(pods, "2"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
