package main

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The cache-size workloads: what a cache of realistic pods costs to hold, to fill and to read,
// meant for comparing kcache's memory variants (impl_compact.go) with client-go.
func init() {
	for _, mode := range []string{watchList, paged} {
		register(workload{
			group: "cache",
			name:  "sync/" + mode,
			doc: "start an informer (namespace index, one handler) over N realistic pods served afresh by a " + mode +
				" source, until synced and the handler has every add: ns/op is the time to synced (a restart), heap-B " +
				"the live heap it keeps (the cache with its objects), peak-B the most live heap during the sync " +
				"(GOGC=2 marks and forced collections at LIST pages, streamed objects and handler adds)",
			heavy: true,
			run:   func(b *testing.B, impl *Impl) { benchCacheSync(b, impl, mode, scale(100_000)) },
		})
	}
	for _, read := range []string{"Get", "ByIndex-250"} {
		for _, temp := range []string{"cold", "hot"} {
			register(workload{
				group: "cache",
				name:  read + "/" + temp,
				doc: "latency of " + read + " (one pod by key, or a namespace of 250 pods) in an indexer of N realistic " +
					"pods: p50-ns and p99-ns; cold reads a random pod or namespace each time, hot the same 8 pods or " +
					"the same namespace again and again",
				heavy: true,
				run:   func(b *testing.B, impl *Impl) { benchCacheRead(b, impl, read, temp == "hot", scale(100_000)) },
			})
		}
	}
}

// benchCacheSync is one initial sync per op from a source of fresh pods (as decoded from the
// server), reporting time, kept heap and peak heap.
func benchCacheSync(b *testing.B, impl *Impl, mode string, n int) {
	set := &podSet{n: n, rv: "1", pod: func(i int) *v1.Pod { return realisticPod(i, 100, "1") }}
	benchCacheSyncFrom(b, impl, func() *source { return newPodSource(mode, func() *podSet { return set }) }, &v1.Pod{}, n)
}

// benchCacheSyncFrom is benchCacheSync over the n objects of example's type that the sources
// newSource makes serve.
func benchCacheSyncFrom(b *testing.B, impl *Impl, newSource func() *source, example runtime.Object, n int) {
	var heap, peak float64
	for range b.N {
		b.StopTimer()
		src := newSource()
		var forced forcedSampler
		src.setSample(forced.sample, 8)
		every := int64(max(1, n/8))
		base := liveHeap()
		b.StartTimer()
		sampler := startPeakSamplerAt(2)
		inf := impl.NewInformer(src, example)
		var adds atomic.Int64
		if err := inf.AddHandler(Handler{Add: func(interface{}, bool) {
			if adds.Add(1)%every == 0 {
				forced.sample()
			}
		}}); err != nil {
			b.Fatal(err)
		}
		stop := runInformer(b, inf)
		waitUntil(b, "every initial add", func() bool { return adds.Load() >= int64(n) })
		b.StopTimer()
		peak += float64(max(sampler.finish(), forced.peak)) - float64(base)
		src.setSample(nil, 0)
		<-src.watched
		heap += float64(liveHeap()) - float64(base)
		if got := len(inf.Indexer().ListKeys()); got != n {
			b.Fatalf("%d objects cached, want %d", got, n)
		}
		stop()
		goruntime.KeepAlive(inf)
		b.StartTimer()
	}
	b.ReportMetric(heap/float64(b.N), "heap-B")
	b.ReportMetric(peak/float64(b.N), "peak-B")
	b.ReportMetric(heap/float64(b.N)/float64(n), "heap-B/pod")
}

// cacheReadSamples is how many reads a latency workload times, whatever b.N: fewer of
// ByIndex, whose reads each return 250 pods.
func cacheReadSamples(read string) int {
	if read == "Get" {
		return 4000
	}
	return 400
}

// benchCacheRead times reads of an indexer holding n realistic pods in namespaces of 250.
func benchCacheRead(b *testing.B, impl *Impl, read string, hot bool, n int) {
	namespaces := max(1, n/250)
	indexer := impl.NewIndexer("namespace")
	list := make([]interface{}, n)
	for i := range list {
		list[i] = realisticPod(i, namespaces, "1")
	}
	if err := indexer.Replace(list, "1"); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n)
	for i, obj := range list {
		p := obj.(*v1.Pod)
		keys[i] = p.Namespace + "/" + p.Name
	}
	list = nil
	goruntime.GC()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(i int) int {
		if hot {
			return i % 8
		}
		return rng.IntN(n)
	}
	samples := make([]float64, 0, cacheReadSamples(read))
	b.ResetTimer()
	for range b.N {
		samples = samples[:0]
		for i := range cacheReadSamples(read) {
			j := pick(i)
			start := time.Now()
			switch read {
			case "Get":
				if _, ok, _ := indexer.GetByKey(keys[j]); !ok {
					b.Fatalf("%s missing", keys[j])
				}
			default:
				ns := fmt.Sprintf("ns-%d", j%namespaces)
				if hot {
					ns = "ns-0"
				}
				if objs, _ := indexer.ByIndex("namespace", ns); len(objs) != n/namespaces {
					b.Fatalf("ByIndex(%s) = %d pods, want %d", ns, len(objs), n/namespaces)
				}
			}
			samples = append(samples, float64(time.Since(start).Nanoseconds()))
		}
	}
	b.StopTimer()
	slices.Sort(samples)
	b.ReportMetric(samples[len(samples)/2], "p50-ns")
	b.ReportMetric(samples[len(samples)*99/100], "p99-ns")
	goruntime.KeepAlive(indexer)
}
