package main

import (
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func init() {
	for _, mode := range []string{watchList, paged, onePage} {
		register(workload{
			group: "memory",
			name:  "initial-sync/" + mode,
			doc: "start an informer (namespace index, one handler) over N realistic pods that a " + mode +
				" source made before the start, until synced and the handler has every add; sync-peak-B is the most " +
				"live heap the informer adds beyond those objects during the sync (GOGC=2 marks and forced collections " +
				"at LIST pages, streamed objects and handler adds), own-peak-B the same less the object copies it " +
				"caches (a LIST's items are copied out of the list; a watch-list caches the pods themselves), heap-B what it " +
				"keeps and own-heap-B the same less those copies: the store's own overhead",
			heavy: true,
			run:   func(b *testing.B, impl *Impl) { benchInitialSyncMemory(b, impl, realisticPods, mode, scale(100_000)) },
		})
	}
	for _, mode := range []string{watchList, paged, onePage} {
		register(workload{
			group: "memory",
			name:  "initial-sync/configmaps/" + mode,
			doc: "initial-sync/" + mode + " over N realistic configmaps (labels, kubectl's last-applied annotation, " +
				"managedFields, a config file and two settings; about 4 KB as JSON) instead of pods",
			heavy: true,
			run: func(b *testing.B, impl *Impl) {
				benchInitialSyncMemory(b, impl, realisticConfigMaps, mode, scale(100_000))
			},
		})
	}
}

// prebuiltPodSource serves n realistic pods made before it is returned, so that the live heap
// measured with it in place already holds every object the informer will cache: a LIST
// returns the lists (one, or pages of the reflector's 500), a streaming watch-list sends the
// pods of those lists by pointer. copiesCached counts the objects an informer caches that are
// copies, not those pods.
func prebuiltPodSource(mode string, n int) (s *source, copiesCached func(Informer) int) {
	return prebuiltPodSourceOf(mode, n, func(i int) *v1.Pod { return realisticPod(i, 100, "1") })
}

// prebuiltPodSourceOf is prebuiltPodSource with pod i made by pod.
func prebuiltPodSourceOf(mode string, n int, pod func(i int) *v1.Pod) (s *source, copiesCached func(Informer) int) {
	return prebuiltSource(mode, n, pod, func(items []v1.Pod, lm metav1.ListMeta) runtime.Object {
		return &v1.PodList{ListMeta: lm, Items: items}
	})
}

// prebuiltSource is prebuiltPodSourceOf for objects of any kind: object i is made by item,
// and list wraps a page of them in their list type.
func prebuiltSource[T any, PT interface {
	*T
	metav1.Object
	runtime.Object
}](mode string, n int, item func(i int) PT, list func(items []T, lm metav1.ListMeta) runtime.Object) (s *source, copiesCached func(Informer) int) {
	pageSize := n
	if mode == paged {
		pageSize = 500
	}
	var pages [][]T
	var lists []runtime.Object
	for start := 0; start < n; start += pageSize {
		items := make([]T, min(pageSize, n-start))
		for i := range items {
			items[i] = *item(start + i)
		}
		lm := metav1.ListMeta{ResourceVersion: "1"}
		if start+pageSize < n {
			// As a kube-apiserver does for a LIST with a limit and no selector.
			lm.Continue = strconv.Itoa(len(pages) + 1)
			lm.RemainingItemCount = ptr.To(int64(n - start - pageSize))
		}
		pages = append(pages, items)
		lists = append(lists, list(items, lm))
	}
	copiesCached = func(inf Informer) int {
		own := make(map[PT]bool, n)
		for _, items := range pages {
			for i := range items {
				own[&items[i]] = true
			}
		}
		copies := 0
		for _, obj := range inf.Indexer().List() {
			if p, ok := obj.(PT); !ok || !own[p] {
				copies++
			}
		}
		return copies
	}
	s = &source{watched: make(chan struct{}, 16)}
	s.list = func(options metav1.ListOptions) runtime.Object {
		page, _ := strconv.Atoi(options.Continue)
		if mode == paged && options.Limit != int64(pageSize) {
			panic("bench: the reflector did not page by 500")
		}
		return lists[page]
	}
	if mode == watchList {
		// As newPodSource streams: the objects by pointer, then the bookmark that ends the
		// initial events.
		s.stream = func(w *watch.FakeWatcher) {
			for i := range n {
				if i > 0 && int64(i)%(max(1, s.sampleEvery.Load())*500) == 0 {
					s.sample()
				}
				w.Add(PT(&pages[i/pageSize][i%pageSize]))
			}
			bookmark := PT(new(T))
			bookmark.SetResourceVersion("1")
			bookmark.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			w.Action(watch.Bookmark, bookmark)
		}
	}
	return s, copiesCached
}

// podCopyBytes is the heap one v1.Pod struct takes (its size class), measured once: a reflector
// that copies the items out of a LIST response, as both implementations do (client-go's
// ExtractListWithAlloc), caches one such copy per object.
var podCopyBytes = sync.OnceValue(structBytes[v1.Pod])

// configMapCopyBytes is podCopyBytes for a v1.ConfigMap.
var configMapCopyBytes = sync.OnceValue(structBytes[v1.ConfigMap])

// structBytes measures the heap one new T takes (its size class).
func structBytes[T any]() float64 {
	const n = 1000
	keep := make([]*T, n)
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = new(T)
	}
	goruntime.ReadMemStats(&after)
	goruntime.KeepAlive(keep)
	return float64(after.TotalAlloc-before.TotalAlloc) / n
}

// syncSubject is what an initial-sync memory workload syncs: a source of n objects made
// before the start (see prebuiltSource), the informer's example object and the heap of one
// cached copy.
type syncSubject struct {
	prebuilt  func(mode string, n int) (*source, func(Informer) int)
	example   func() runtime.Object
	copyBytes func() float64
}

var (
	realisticPods = syncSubject{
		prebuilt:  prebuiltPodSource,
		example:   func() runtime.Object { return &v1.Pod{} },
		copyBytes: podCopyBytes,
	}
	realisticConfigMaps = syncSubject{
		prebuilt: func(mode string, n int) (*source, func(Informer) int) {
			return prebuiltSource(mode, n, func(i int) *v1.ConfigMap { return realisticConfigMap(i, 100, "1") },
				func(items []v1.ConfigMap, lm metav1.ListMeta) runtime.Object {
					return &v1.ConfigMapList{ListMeta: lm, Items: items}
				})
		},
		example:   func() runtime.Object { return &v1.ConfigMap{} },
		copyBytes: configMapCopyBytes,
	}
)

func benchInitialSyncMemory(b *testing.B, impl *Impl, subject syncSubject, mode string, n int) {
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		src, copiesCached := subject.prebuilt(mode, n)
		// Besides the GOGC=2 marks, forced collections sample the heap where the sync is
		// busiest: at the first and every eighth LIST page and every 4000 streamed objects
		// (while the reflector waits for the source), at the Watch call, and at every eighth
		// of the handler's adds.
		var forced forcedSampler
		src.setSample(forced.sample, 8)
		every := int64(max(1, n/8))
		base := liveHeap()
		b.StartTimer()
		sampler := startPeakSamplerAt(2)
		inf := impl.NewInformer(src, subject.example())
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
		peak := max(sampler.finish(), forced.peak)
		b.StopTimer()
		src.setSample(nil, 0)
		<-src.watched
		synced := liveHeap()
		if got := len(inf.Indexer().ListKeys()); got != n {
			b.Fatalf("%d objects cached, want %d", got, n)
		}
		copies := float64(copiesCached(inf)) * subject.copyBytes()
		b.ReportMetric(float64(peak)-float64(base), "sync-peak-B")
		b.ReportMetric(float64(peak)-float64(base)-copies, "own-peak-B")
		b.ReportMetric(float64(synced)-float64(base), "heap-B")
		b.ReportMetric(float64(synced)-float64(base)-copies, "own-heap-B")
		stop()
		goruntime.KeepAlive(inf)
		goruntime.KeepAlive(src)
		b.StartTimer()
	}
}
