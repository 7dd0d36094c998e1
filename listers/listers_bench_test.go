package listers_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/listers"
)

// BenchmarkList lists one namespace of 10 out of 10,000 pods, with the namespace index and by
// the scan client-go also falls back to without one, and lists everything.
func BenchmarkList(b *testing.B) {
	objs := make([]runtime.Object, 0, 10_000)
	for i := range 10_000 {
		objs = append(objs, pod(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("p-%05d", i), "web"))
	}
	for _, indexed := range []bool{true, false} {
		idx := newIndexer(b, indexed, objs...)
		l := listers.New[*v1.Pod](idx, v1.Resource("pods"))
		b.Run(fmt.Sprintf("namespace index %v/one namespace", indexed), func(b *testing.B) {
			captureKlog(b) // the scan logs a warning per call
			ns := listers.NewNamespaced(l, "ns-3")
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := ns.List(labels.Everything()); len(got) != 1000 {
					b.Fatalf("listed %d", len(got))
				}
			}
		})
	}
	b.Run("all namespaces", func(b *testing.B) {
		l := listers.New[*v1.Pod](newIndexer(b, false, objs...), v1.Resource("pods"))
		b.ReportAllocs()
		for b.Loop() {
			if got, _ := l.List(labels.Everything()); len(got) != 10_000 {
				b.Fatalf("listed %d", len(got))
			}
		}
	})
}
