package cache_test

// BenchmarkInformerRelist100k uses only the public API, so that the same body runs against
// client-go's tools/cache by swapping the import.

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	cache "github.com/kcache/cache"
)

// relistSource is a ListerWatcher over a changing set of pods that hands out fresh copies on
// every call, page by page (LIST) or event by event (streaming watch-list), as a client that
// decodes the server's answer does.
type relistSource struct {
	watchList bool

	// sample, if set, runs at every 40th page and every 20,000th streamed event, while the
	// Reflector waits for the source.
	sample func()
	calls  int

	mu   sync.Mutex
	pods []*v1.Pod // nil: deleted
	rv   int
	cur  *relistWatcher
}

func relistBenchPod(i, rv int) *v1.Pod {
	name := fmt.Sprintf("pod-%06d", i)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("ns-%d", i%100), Name: name, UID: types.UID("uid-" + name),
			ResourceVersion: strconv.Itoa(rv),
			Labels:          map[string]string{"app": "bench", "tier": "backend", "pod-template-hash": "5d8f7c9b6"},
			Annotations:     map[string]string{"kubernetes.io/created-by": "bench", "note": "a pod for the relist benchmark"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + name, UID: "rs-uid"}},
		},
		Spec: v1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", i%500),
			Containers: []v1.Container{{
				Name: "main", Image: "registry.example/bench/app:v1.2.3",
				Args: []string{"--port=8080", "--verbose"},
				Env:  []v1.EnvVar{{Name: "MODE", Value: "bench"}, {Name: "POD", Value: name}},
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi"),
				}},
			}},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, PodIP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.PodScheduled, Status: v1.ConditionTrue}},
		},
	}
}

func newRelistSource(n int, watchList bool) *relistSource {
	s := &relistSource{watchList: watchList, rv: 1, pods: make([]*v1.Pod, n)}
	for i := range s.pods {
		s.pods[i] = relistBenchPod(i, 1)
	}
	return s
}

// change modifies every changeEvery-th pod and deletes every deleteEvery-th (0: none).
func (s *relistSource) change(changeEvery, deleteEvery int) (changed, deleted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pods {
		switch {
		case p == nil:
		case deleteEvery > 0 && i%deleteEvery == deleteEvery-1:
			s.pods[i] = nil
			deleted++
		case changeEvery > 0 && i%changeEvery == 0:
			s.rv++
			s.pods[i] = relistBenchPod(i, s.rv)
			s.pods[i].Labels["changed"] = "yes"
			changed++
		}
	}
	s.rv++
	return changed, deleted
}

func (s *relistSource) List(options metav1.ListOptions) (runtime.Object, error) {
	if s.calls++; s.sample != nil && s.calls%40 == 0 {
		s.sample()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	start := 0
	if options.Continue != "" {
		start, _ = strconv.Atoi(options.Continue)
	}
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	i := start
	for ; i < len(s.pods) && (options.Limit == 0 || int64(len(list.Items)) < options.Limit); i++ {
		if p := s.pods[i]; p != nil {
			list.Items = append(list.Items, *p.DeepCopy())
		}
	}
	if i < len(s.pods) {
		list.Continue = strconv.Itoa(i)
	}
	return list, nil
}

func (s *relistSource) Watch(options metav1.ListOptions) (watch.Interface, error) {
	initial := options.SendInitialEvents != nil && *options.SendInitialEvents
	if initial && !s.watchList {
		return nil, errors.New("streaming lists are not supported")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &relistWatcher{ch: make(chan watch.Event, 100), stop: make(chan struct{}), sample: s.sample}
	s.cur = w
	if initial {
		pods := append([]*v1.Pod(nil), s.pods...)
		rv := strconv.Itoa(s.rv)
		go w.stream(pods, rv)
	}
	return w, nil
}

// expire ends the current watch with 410 Gone, which makes the Reflector relist.
func (s *relistSource) expire() {
	s.mu.Lock()
	w := s.cur
	s.mu.Unlock()
	w.send(watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}})
}

type relistWatcher struct {
	ch     chan watch.Event
	stop   chan struct{}
	once   sync.Once
	sample func()
}

func (w *relistWatcher) ResultChan() <-chan watch.Event { return w.ch }
func (w *relistWatcher) Stop()                          { w.once.Do(func() { close(w.stop) }) }

func (w *relistWatcher) send(ev watch.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.stop:
		return false
	}
}

func (w *relistWatcher) stream(pods []*v1.Pod, rv string) {
	for i, p := range pods {
		if w.sample != nil && i%20000 == 19999 {
			w.sample()
		}
		if p != nil && !w.send(watch.Event{Type: watch.Added, Object: p.DeepCopy()}) {
			return
		}
	}
	w.send(watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: rv, Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}}})
}

// relistLatencies is a histogram of reader latencies in microseconds.
type relistLatencies struct {
	buckets [20001]atomic.Int64 // the last counts everything from 20ms up
	max     atomic.Int64
}

func (h *relistLatencies) observe(d time.Duration) {
	us := d.Microseconds()
	h.buckets[min(us, int64(len(h.buckets)-1))].Add(1)
	for m := h.max.Load(); us > m && !h.max.CompareAndSwap(m, us); m = h.max.Load() {
	}
}

func (h *relistLatencies) quantile(q float64) int64 {
	var total int64
	for i := range h.buckets {
		total += h.buckets[i].Load()
	}
	want, seen := int64(q*float64(total)), int64(0)
	for i := range h.buckets {
		if seen += h.buckets[i].Load(); seen > want {
			return int64(i)
		}
	}
	return int64(len(h.buckets) - 1)
}

func relistHeapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func relistLiveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkInformerRelist100k syncs an informer over 100k pods, then relists it (the watch
// ends with 410 Gone) after (a) no change, (b) 1% of the pods changed and 0.1% deleted,
// through a paged LIST and through a streaming watch-list, while two readers call GetByKey.
// During the relist it samples the live heap after forced collections and reports the most
// the relist retains beyond the synced informer, as a fraction of the informer's live heap
// (retained/cache), and the peak heap in use with GOGC at 10, which adds garbage the collector
// has not reached yet (inuse-gogc10/cache); then the live heap after the relist minus before
// (MiB-kept); and the readers'
// GetByKey latency during the relist (p99 and max, in µs: a reader waits for the store's
// write lock, so max approximates the longest write-lock hold).
func BenchmarkInformerRelist100k(b *testing.B) {
	const pods = 100000
	for _, mode := range []string{"list", "watchlist"} {
		for _, c := range []struct {
			name                     string
			changeEvery, deleteEvery int
		}{{"unchanged", 0, 0}, {"1pct-changed", 100, 1000}} {
			b.Run(mode+"/"+c.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					relistBenchOnce(b, pods, mode == "watchlist", c.changeEvery, c.deleteEvery)
				}
			})
		}
	}
}

func relistBenchOnce(b *testing.B, pods int, watchList bool, changeEvery, deleteEvery int) {
	b.StopTimer()
	src := newRelistSource(pods, watchList)
	base := relistLiveHeap()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{ListFunc: src.List, WatchFunc: src.Watch}, &v1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var updates, deletes atomic.Int64
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ interface{}) { updates.Add(1) },
		DeleteFunc: func(interface{}) { deletes.Add(1) },
	}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("informer did not sync")
	}
	indexer := inf.GetIndexer()
	for indexer.LastStoreSyncResourceVersion() != "1" {
		<-time.After(time.Millisecond)
	}
	var lat relistLatencies
	keys := make([]string, pods) // so that readers allocate nothing
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/pod-%06d", i%100, i)
	}
	synced := relistLiveHeap()
	cacheSize := synced - base

	changed, deleted := src.change(changeEvery, deleteEvery)
	src.mu.Lock()
	wantRV := strconv.Itoa(src.rv)
	src.mu.Unlock()

	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// The live heap is sampled after forced collections while the Reflector waits for the
	// source (sampling while it allocates would count what it allocates during the
	// collection as live), and the heap in use, garbage included, every 200µs.
	var peak, livePeak atomic.Uint64
	src.sample = func() {
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		if ms.HeapAlloc > livePeak.Load() {
			livePeak.Store(ms.HeapAlloc)
			if path := os.Getenv("RELIST_HEAP_PROFILE"); path != "" {
				if f, err := os.Create(path); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			}
		}
	}
	wg.Go(func() {
		for {
			if h := relistHeapInUse(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	})
	for r := 0; r < 2; r++ {
		wg.Go(func() {
			for i := r; ; i += 7919 {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				_, _, _ = indexer.GetByKey(keys[i%pods])
				lat.observe(time.Since(t0))
			}
		})
	}
	b.StartTimer()
	start := time.Now()
	src.expire()
	for indexer.LastStoreSyncResourceVersion() != wantRV || updates.Load() < int64(changed) || deletes.Load() < int64(deleted) {
		<-time.After(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	src.sample = nil
	close(stop)
	wg.Wait()
	debug.SetGCPercent(old)
	after := relistLiveHeap()
	if n := len(indexer.ListKeys()); n != pods-deleted {
		b.Fatalf("%d objects after the relist, want %d", n, pods-deleted)
	}
	b.ReportMetric(float64(cacheSize)/(1<<20), "MiB-cache")
	b.ReportMetric((float64(livePeak.Load())-float64(synced))/float64(cacheSize), "retained/cache")
	b.ReportMetric((float64(peak.Load())-float64(synced))/float64(cacheSize), "inuse-gogc10/cache")
	b.ReportMetric((float64(after)-float64(synced))/(1<<20), "MiB-kept")
	b.ReportMetric(float64(lat.quantile(0.99)), "p99-read-µs")
	b.ReportMetric(float64(lat.max.Load()), "max-read-µs")
	b.ReportMetric(elapsed.Seconds()*1000, "relist-ms")
}
