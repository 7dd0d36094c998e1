package main

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	for _, handlers := range []int{1, 10} {
		register(workload{
			group: "informer",
			name:  fmt.Sprintf("events/handlers=%d", handlers),
			doc:   "watch Modify events for 1000 cached small pods, through the informer to every handler; one op is one event (the workload deep-copies a pod per event, as a decoding client would); cpu-ns/op is the process's CPU time per event",
			run:   func(b *testing.B, impl *Impl) { benchInformerEvents(b, impl, handlers, false) },
		})
		register(workload{
			group: "informer",
			name:  fmt.Sprintf("events-prebuilt/handlers=%d", handlers),
			doc:   "the same, with every event's object made before the clock starts (4000 distinct copies, sent in turn): the informer's own rate, not the cost of making a pod",
			run:   func(b *testing.B, impl *Impl) { benchInformerEvents(b, impl, handlers, true) },
		})
	}
	for _, kind := range []string{"small", "realistic"} {
		register(workload{
			group: "informer",
			name:  "sync/" + kind + "-pods",
			doc:   "start an informer over N pods (namespace index, one handler) until synced and the handler has every add; heap-B is the live heap it adds beyond the listed objects",
			heavy: true,
			run:   func(b *testing.B, impl *Impl) { benchInformerSync(b, impl, kind == "realistic", scale(100_000)) },
		})
	}
	register(workload{
		group: "informer",
		name:  "readers-during-writes",
		doc:   "10 goroutines list one namespace of 1000 pods (ListAllByNamespace) while one writer streams updates; reads/s and writes/s (updates the watch took)",
		run:   func(b *testing.B, impl *Impl) { benchReadersDuringWrites(b, impl, false) },
	})
	register(workload{
		group: "informer",
		name:  "readers-during-writes/delivered",
		doc:   "the same with a writer that stays at most 10 updates ahead of the informer's handler, as client-go's BenchmarkSharedIndexInformer does; writes/s counts updates delivered to the handler",
		run:   func(b *testing.B, impl *Impl) { benchReadersDuringWrites(b, impl, true) },
	})
}

func podList(n, namespaces int, realistic bool) *v1.PodList {
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	list.Items = make([]v1.Pod, n)
	for i := range list.Items {
		if realistic {
			list.Items[i] = *realisticPod(i, namespaces, "1")
		} else {
			list.Items[i] = *smallPod(i, namespaces, "1")
		}
	}
	return list
}

// runInformer starts inf, waits until it has synced and returns a function that stops it and
// waits until Run has returned.
func runInformer(b *testing.B, inf Informer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	for !inf.HasSynced() {
		time.Sleep(100 * time.Microsecond)
	}
	return func() {
		cancel()
		<-done
	}
}

// waitFor polls until cond holds; the polling interval is far below any measured time.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(50 * time.Microsecond)
	}
}

// prebuiltEventObjects is how many objects the events-prebuilt workloads make before the
// clock starts: four per cached pod, so that every update of a pod brings another object with
// another resource version.
const prebuiltEventObjects = 4000

// benchInformerEvents sends Modify events for 1000 cached pods. Each event's object is a fresh
// deep copy made in the loop, or, with prebuilt, one of prebuiltEventObjects copies made
// beforehand and sent in turn: copying a small pod costs about as much as kcache's informer
// spends on the event, so without prebuilt the rate is bounded by the loop that makes them.
func benchInformerEvents(b *testing.B, impl *Impl, handlers int, prebuilt bool) {
	list := podList(1000, 10, false)
	src := newSource(func() runtime.Object { return list.DeepCopy() })
	inf := impl.NewInformer(src, &v1.Pod{})
	counts := make([]atomic.Int64, handlers)
	for i := range counts {
		c := &counts[i]
		if err := inf.AddHandler(Handler{Update: func(_, _ interface{}) { c.Add(1) }}); err != nil {
			b.Fatal(err)
		}
	}
	stop := runInformer(b, inf)
	defer stop()
	<-src.watched
	w := src.current()
	pods := make([]*v1.Pod, len(list.Items))
	for i := range pods {
		pods[i] = &list.Items[i]
	}
	var ready []*v1.Pod
	if prebuilt {
		ready = make([]*v1.Pod, prebuiltEventObjects)
		for i := range ready {
			ready[i] = pods[i%len(pods)].DeepCopy()
			ready[i].ResourceVersion = strconv.Itoa(i + 2)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := range b.N {
		if prebuilt {
			w.Modify(ready[i%len(ready)])
			continue
		}
		p := pods[i%len(pods)].DeepCopy()
		p.ResourceVersion = strconv.Itoa(i + 2)
		w.Modify(p)
	}
	waitFor(func() bool {
		for i := range counts {
			if counts[i].Load() < int64(b.N) {
				return false
			}
		}
		return true
	})
	cpu.report(b)
}

func benchInformerSync(b *testing.B, impl *Impl, realistic bool, n int) {
	list := podList(n, 100, realistic)
	// The copy the LIST returns is made before the clock starts: decoding is the client's
	// cost, the same for both libraries.
	fresh := list.DeepCopy()
	src := newSource(func() runtime.Object { return fresh })
	before := liveHeap()
	b.ReportAllocs()
	b.ResetTimer()
	inf := impl.NewInformer(src, &v1.Pod{})
	var adds atomic.Int64
	if err := inf.AddHandler(Handler{Add: func(interface{}, bool) { adds.Add(1) }}); err != nil {
		b.Fatal(err)
	}
	stop := runInformer(b, inf)
	waitFor(func() bool { return adds.Load() >= int64(n) })
	b.StopTimer()
	<-src.watched
	after := liveHeap()
	b.ReportMetric(float64(after-before), "heap-B")
	stop()
	goruntime.KeepAlive(inf)
}

// benchReadersDuringWrites: one op is one read. With delivered, the writer waits whenever it is
// 10 updates ahead of the handler, so writes/s is the rate at which updates reach the handler
// while the readers run; otherwise it is the rate at which the watch takes them.
func benchReadersDuringWrites(b *testing.B, impl *Impl, delivered bool) {
	const readers = 10
	list := podList(10_000, 10, false)
	src := newSource(func() runtime.Object { return list.DeepCopy() })
	inf := impl.NewInformer(src, &v1.Pod{})
	// handled counts updates the handler saw; the writer waits on caughtUp until handled
	// reaches want.
	var handled, want atomic.Int64
	caughtUp := make(chan struct{}, 1)
	if delivered {
		err := inf.AddHandler(Handler{Update: func(_, _ interface{}) {
			if n := handled.Add(1); n >= want.Load() {
				select {
				case caughtUp <- struct{}{}:
				default:
				}
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	stop := runInformer(b, inf)
	defer stop()
	<-src.watched
	w := src.current()
	idx := inf.Indexer()

	ctx, cancel := context.WithCancel(context.Background())
	var writes atomic.Int64
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			p := list.Items[i%len(list.Items)].DeepCopy()
			p.ResourceVersion = strconv.Itoa(i + 2)
			w.Modify(p)
			writes.Add(1)
			if delivered && i%10 == 9 {
				want.Store(int64(i - 9)) // before reading handled: see the handler
				for handled.Load() < int64(i-9) && ctx.Err() == nil {
					select {
					case <-caughtUp:
					case <-ctx.Done():
					}
				}
			}
		}
	})
	var reads atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for r := range readers {
		wg.Go(func() {
			ns := "ns-" + strconv.Itoa(r%10)
			for reads.Add(1) <= int64(b.N) {
				objs, err := idx.ByIndex("namespace", ns)
				if err != nil || len(objs) != 1000 {
					b.Errorf("listed %d pods in %s: %v", len(objs), ns, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	writer.Wait()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reads/s")
	if delivered {
		b.ReportMetric(float64(handled.Load())/elapsed.Seconds(), "writes/s")
	} else {
		b.ReportMetric(float64(writes.Load())/elapsed.Seconds(), "writes/s")
	}
}
