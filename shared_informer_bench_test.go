package cache_test

// The benchmarks in this file use only the public API, so that the same bodies can run
// against client-go's tools/cache by swapping the import (see the informer report).

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	cache "github.com/kcache/cache"
)

// infBenchSource is a ListerWatcher serving a fixed list and then a FakeWatcher the benchmark
// writes to. It refuses streaming lists, so reflectors use LIST.
type infBenchSource struct {
	list    *v1.PodList
	watcher *watch.FakeWatcher
	watches atomic.Int32
	ready   chan struct{} // closed at the first watch
	once    sync.Once
}

func newInfBenchSource(pods int, namespaces int) *infBenchSource {
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	list.Items = make([]v1.Pod, pods)
	for i := range list.Items {
		list.Items[i] = v1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       fmt.Sprintf("ns-%d", i%namespaces),
			Name:            fmt.Sprintf("pod-%d", i),
			ResourceVersion: "1",
			Labels:          map[string]string{"app": "bench"},
		}}
	}
	return &infBenchSource{list: list, watcher: watch.NewFakeWithChanSize(1000, false), ready: make(chan struct{})}
}

func (s *infBenchSource) List(metav1.ListOptions) (runtime.Object, error) {
	return s.list.DeepCopy(), nil
}

func (s *infBenchSource) Watch(options metav1.ListOptions) (watch.Interface, error) {
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return nil, errors.New("streaming lists are not supported")
	}
	if s.watches.Add(1) > 1 {
		return nil, errors.New("only one watch")
	}
	s.once.Do(func() { close(s.ready) })
	return s.watcher, nil
}

// infBenchInformer starts a synced informer over src with n counting handlers and returns
// a function that waits until every handler has received total updates.
func infBenchInformer(b *testing.B, src *infBenchSource, handlers int) (cache.SharedIndexInformer, func(total int64)) {
	b.Helper()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{ListFunc: src.List, WatchFunc: src.Watch}, &v1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	counts := make([]atomic.Int64, handlers)
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	for i := 0; i < handlers; i++ {
		c := &counts[i]
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ interface{}) {
			c.Add(1)
			mu.Lock()
			cond.Broadcast()
			mu.Unlock()
		}}); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("informer did not sync")
	}
	<-src.ready
	wait := func(total int64) {
		mu.Lock()
		defer mu.Unlock()
		for i := range counts {
			for counts[i].Load() < total {
				cond.Wait()
			}
		}
	}
	return inf, wait
}

// BenchmarkInformerEventThroughput measures watch events per second from the watch to every
// handler, for 1 and 10 handlers over 1000 cached pods.
func BenchmarkInformerEventThroughput(b *testing.B) {
	for _, handlers := range []int{1, 10} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			src := newInfBenchSource(1000, 10)
			_, wait := infBenchInformer(b, src, handlers)
			pods := make([]*v1.Pod, len(src.list.Items))
			for i := range pods {
				pods[i] = src.list.Items[i].DeepCopy()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := pods[i%len(pods)].DeepCopy()
				p.ResourceVersion = strconv.Itoa(i + 2)
				src.watcher.Modify(p)
			}
			wait(int64(b.N))
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkInformerInitialSync100k measures a full start of an informer over 100k pods: list,
// FIFO, indexer (with a namespace index) and one handler's initial adds, and the heap the
// synced informer holds.
func BenchmarkInformerInitialSync100k(b *testing.B) {
	const pods = 100000
	src := newInfBenchSource(pods, 100)
	var heap uint64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var before goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		b.StartTimer()

		lw := &cache.ListWatch{ListFunc: src.List, WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			if options.SendInitialEvents != nil && *options.SendInitialEvents {
				return nil, errors.New("streaming lists are not supported")
			}
			return watch.NewFake(), nil
		}}
		inf := cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		var added atomic.Int64
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(interface{}) { added.Add(1) }})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			inf.RunWithContext(ctx)
		}()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced, reg.HasSynced) {
			b.Fatal("informer did not sync")
		}

		b.StopTimer()
		var after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		if added.Load() != pods || len(inf.GetStore().ListKeys()) != pods {
			b.Fatalf("handler saw %d adds, store has %d", added.Load(), len(inf.GetStore().ListKeys()))
		}
		cancel()
		<-done
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "MiB-heap")
}

// BenchmarkListAllByNamespaceWhileEventsFlow runs readers calling ListAllByNamespace on a
// synced 10k-pod informer while a writer streams updates through it, like client-go's
// BenchmarkSharedIndexInformer; it reports reads/s and writes/s.
func BenchmarkListAllByNamespaceWhileEventsFlow(b *testing.B) {
	for _, readers := range []int{1, 10} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			src := newInfBenchSource(10000, 100)
			inf, wait := infBenchInformer(b, src, 1)
			var reads atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for r := 0; r < readers; r++ {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						n := 0
						_ = cache.ListAllByNamespace(inf.GetIndexer(), fmt.Sprintf("ns-%d", (i*7+r)%100), labels.Everything(), func(interface{}) { n++ })
						reads.Add(1)
					}
				})
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := src.list.Items[i%len(src.list.Items)].DeepCopy()
				p.ResourceVersion = strconv.Itoa(i + 2)
				src.watcher.Modify(p)
				if i%10 == 9 { // keep the writer at most 10 events ahead, as client-go's benchmark does
					wait(int64(i - 9))
				}
			}
			wait(int64(b.N))
			b.StopTimer()
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(reads.Load())/b.Elapsed().Seconds(), "reads/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// BenchmarkStalledHandler streams 200k updates over 10k pods while one of two handlers is
// blocked, then releases it, and reports the heap held while it is stalled and after it has
// caught up (client-go's per-handler buffer never shrinks).
func BenchmarkStalledHandler(b *testing.B) {
	const events = 200000
	var stalled, drained uint64
	for i := 0; i < b.N; i++ {
		src := newInfBenchSource(10000, 100)
		inf := cache.NewSharedIndexInformer(&cache.ListWatch{ListFunc: src.List, WatchFunc: src.Watch}, &v1.Pod{}, 0, cache.Indexers{})
		gate := make(chan struct{})
		var slow, fast atomic.Int64
		inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ interface{}) {
			<-gate
			slow.Add(1)
		}})
		fastDone := make(chan struct{})
		inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ interface{}) {
			if fast.Add(1) == events {
				close(fastDone)
			}
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			inf.RunWithContext(ctx)
		}()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			b.Fatal("informer did not sync")
		}
		<-src.ready
		for j := 0; j < events; j++ {
			p := src.list.Items[j%len(src.list.Items)].DeepCopy()
			p.ResourceVersion = strconv.Itoa(j + 2)
			src.watcher.Modify(p)
		}
		<-fastDone
		var ms goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&ms)
		stalled = ms.HeapAlloc
		close(gate)
		for slow.Load() < events {
			goruntime.Gosched()
		}
		goruntime.GC()
		goruntime.ReadMemStats(&ms)
		drained = ms.HeapAlloc
		cancel()
		<-done
	}
	b.ReportMetric(float64(stalled)/(1<<20), "MiB-heap-stalled")
	b.ReportMetric(float64(drained)/(1<<20), "MiB-heap-drained")
}
