package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// storeN is the number of objects in the store and FIFO workloads.
const storeN = 10_000

func init() {
	for _, indexes := range [][]string{{"namespace"}, {"namespace", "app", "tier"}} {
		register(workload{
			group: "store",
			name:  fmt.Sprintf("Add/indexes=%d", len(indexes)),
			doc:   "Add of a new small pod to an indexer (a fresh indexer every 10k pods)",
			run:   func(b *testing.B, impl *Impl) { benchStoreAdd(b, impl, indexes) },
		})
	}
	register(workload{
		group: "store",
		name:  "Update/indexes=3",
		doc:   "Update of one of 10k pods to a new version whose labels move it between index values",
		run:   benchStoreUpdate,
	})
	register(workload{
		group: "store",
		name:  "Replace/10k",
		doc:   "Replace of 10k pods (new versions) into an indexer holding 10k",
		run:   benchStoreReplace,
	})
	register(workload{
		group: "store",
		name:  "ByIndex/namespace",
		doc:   "ByIndex of one namespace (100 pods) in an indexer of 10k pods",
		run:   benchStoreByIndex,
	})
	for _, kind := range fifoKinds {
		register(workload{
			group: "fifo",
			name:  kind + "/AddPop",
			doc:   "one goroutine Adds (1024 keys) while one pops; one op is one delta",
			run:   func(b *testing.B, impl *Impl) { benchFIFOAddPop(b, impl, kind) },
		})
		register(workload{
			group: "fifo",
			name:  kind + "/Replace10k",
			doc:   "Replace of 10k pods into an empty queue whose known objects hold the same 10k (none for RealFIFO-atomic, which takes none)",
			run:   func(b *testing.B, impl *Impl) { benchFIFOReplace(b, impl, kind) },
		})
	}
	register(workload{
		group: "pager",
		name:  "List/10k-pods/page=500",
		doc:   "a paginated list of 10k small pods in pages of 500, joined into one list",
		run:   benchPager,
	})
}

func smallPods(n int, rv string) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = smallPod(i, 100, rv)
	}
	return out
}

func benchStoreAdd(b *testing.B, impl *Impl, indexes []string) {
	pods := smallPods(storeN, "1")
	var idx Indexer
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%storeN == 0 {
			b.StopTimer()
			idx = impl.NewIndexer(indexes...)
			b.StartTimer()
		}
		if err := idx.Add(pods[i%storeN]); err != nil {
			b.Fatal(err)
		}
	}
}

func benchStoreUpdate(b *testing.B, impl *Impl) {
	versions := [2][]interface{}{smallPods(storeN, "1"), smallPods(storeN, "2")}
	for i, obj := range versions[1] {
		p := obj.(*v1.Pod)
		p.Labels = map[string]string{"app": "app-" + strconv.Itoa((i+1)%100), "tier": "tier-" + strconv.Itoa((i+1)%7)}
	}
	idx := impl.NewIndexer("namespace", "app", "tier")
	for _, obj := range versions[0] {
		if err := idx.Add(obj); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := idx.Update(versions[(i/storeN+1)%2][i%storeN]); err != nil {
			b.Fatal(err)
		}
	}
}

func benchStoreReplace(b *testing.B, impl *Impl) {
	versions := [2][]interface{}{smallPods(storeN, "1"), smallPods(storeN, "2")}
	idx := impl.NewIndexer("namespace")
	if err := idx.Replace(versions[0], "1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := idx.Replace(versions[(i+1)%2], strconv.Itoa(i+2)); err != nil {
			b.Fatal(err)
		}
	}
}

func benchStoreByIndex(b *testing.B, impl *Impl) {
	idx := impl.NewIndexer("namespace")
	if err := idx.Replace(smallPods(storeN, "1"), "1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		objs, err := idx.ByIndex("namespace", "ns-"+strconv.Itoa(i%100))
		if err != nil || len(objs) != storeN/100 {
			b.Fatalf("ByIndex: %d objects, %v", len(objs), err)
		}
	}
}

func benchFIFOAddPop(b *testing.B, impl *Impl, kind string) {
	pods := smallPods(1024, "1")
	f := impl.NewFIFO(kind, impl.NewIndexer())
	b.ReportAllocs()
	b.ResetTimer()
	errc := make(chan error, 1)
	go func() {
		for i := range b.N {
			if err := f.Add(pods[i%len(pods)]); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	pops := 0
	for seen := 0; seen < b.N; pops++ {
		n, ok, err := f.PopBatch()
		if !ok {
			n, err = f.Pop()
		}
		if err != nil {
			b.Fatal(err)
		}
		seen += n
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	// How many deltas one Pop hands out depends on how far the producer got ahead, which
	// scheduling decides; every Pop allocates, so allocs/op follows it.
	b.ReportMetric(float64(b.N)/float64(max(1, pops)), "deltas/pop")
}

func benchFIFOReplace(b *testing.B, impl *Impl, kind string) {
	pods := smallPods(storeN, "1")
	known := impl.NewIndexer()
	if err := known.Replace(append([]interface{}(nil), pods...), "1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f := impl.NewFIFO(kind, known)
		if err := f.Replace(pods, "2"); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPager(b *testing.B, impl *Impl) {
	const n, page = 10_000, 500
	list := podList(n, 100, false)
	pageFn := func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		start := 0
		if opts.Continue != "" {
			var err error
			if start, err = strconv.Atoi(opts.Continue); err != nil {
				return nil, err
			}
		}
		end := min(start+int(opts.Limit), n)
		out := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: list.Items[start:end]}
		if end < n {
			out.Continue = strconv.Itoa(end)
		}
		return out, nil
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		obj, err := impl.ListPaged(context.Background(), page, pageFn)
		if err != nil {
			b.Fatal(err)
		}
		if got := meta.LenList(obj); got != n {
			b.Fatalf("listed %d pods, want %d", got, n)
		}
	}
}
