package cache

import (
	"context"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkResourceVersionTracking is what an informer adds per processed item for
// WaitForResourceVersion: finding the item's resourceVersion and recording it, with nobody
// waiting and with waits pending for versions not reached yet.
func BenchmarkResourceVersionTracking(b *testing.B) {
	const n = 256 // few enough to stay in the CPU cache, as a just-decoded object is
	deltas := make([]Deltas, n)
	for i := range deltas {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: strconv.Itoa(1_000_000 + i)}}
		deltas[i] = Deltas{{Type: Updated, Object: pod}}
	}
	run := func(b *testing.B, tr *resourceVersionTracker) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			tr.advance(deltasResourceVersion(deltas[i%n]))
			i++
			if i%n == 0 {
				tr.last = "" // start over with rising versions
			}
		}
	}
	b.Run("no waiters", func(b *testing.B) { run(b, &resourceVersionTracker{}) })
	b.Run("100 waiters ahead", func(b *testing.B) {
		tr := &resourceVersionTracker{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		for i := range 100 {
			go func() { tr.wait(ctx, strconv.Itoa(9_000_000+i)); done <- struct{}{} }()
		}
		for {
			tr.mu.Lock()
			l := 0
			if tr.waiters != nil {
				l = tr.waiters.Len()
			}
			tr.mu.Unlock()
			if l == 100 {
				break
			}
		}
		run(b, tr)
		cancel()
		for range 100 {
			<-done
		}
	})
}
