package cache

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache/internal/features"
)

// reflBenchPods returns n pods spread over 100 namespaces.
func reflBenchPods(n int) []v1.Pod {
	pods := make([]v1.Pod, n)
	for i := range pods {
		pods[i].ObjectMeta = metav1.ObjectMeta{
			Namespace:       fmt.Sprintf("ns-%d", i%100),
			Name:            fmt.Sprintf("pod-%d", i),
			ResourceVersion: strconv.Itoa(i + 1),
			Labels:          map[string]string{"app": "bench"},
		}
	}
	return pods
}

// reflBenchPagedLister serves pods in pages: the continue token is the index of the next pod.
func reflBenchPagedLister(pods []v1.Pod) ListWithContextFunc {
	rv := strconv.Itoa(len(pods))
	return func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		start := 0
		if opts.Continue != "" {
			var err error
			if start, err = strconv.Atoi(opts.Continue); err != nil {
				return nil, err
			}
		}
		end := len(pods)
		if opts.Limit > 0 && int64(end-start) > opts.Limit {
			end = start + int(opts.Limit)
		}
		list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: pods[start:end]}
		if end < len(pods) {
			list.Continue = strconv.Itoa(end)
		}
		return list, nil
	}
}

// BenchmarkReflectorList measures one initial LIST of 100k pods through the pager into a
// Store: paging, list extraction and Store.Replace.
func BenchmarkReflectorList(b *testing.B) {
	const n = 100_000
	pods := reflBenchPods(n)
	cases := []struct {
		name            string
		disableChunking bool
	}{
		{name: "pages_of_500"},
		{name: "one_page", disableChunking: true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			features.SetForTesting(b, features.WatchListClient, false)
			lw := &ListWatch{ListWithContextFunc: reflBenchPagedLister(pods), DisableChunking: tc.disableChunking,
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewEmptyWatch(), nil }}
			store := NewStore(MetaNamespaceKeyFunc)
			r := NewReflectorWithOptions(lw, &v1.Pod{}, store, ReflectorOptions{Name: "bench"})
			r.metrics = newReflectorMetricsFrom(noopMetricsProvider{}, r.name)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				r.setLastSyncResourceVersion("") // every round is an initial list
				if err := r.list(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if got := len(store.ListKeys()); got != n {
				b.Fatalf("store holds %d objects, want %d", got, n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
		})
	}
}

// BenchmarkReflectorWatchEvents measures the watch event path: b.N Modified events over 10k
// pods, from a watch channel through the type checks into a Store, with the resource version
// recorded after each.
func BenchmarkReflectorWatchEvents(b *testing.B) {
	const objects = 10_000
	pods := reflBenchPods(objects)
	events := make([]watch.Event, objects)
	for i := range pods {
		events[i] = watch.Event{Type: watch.Modified, Object: &pods[i]}
	}
	store := NewStore(MetaNamespaceKeyFunc)
	r := NewReflectorWithOptions(&ListWatch{}, &v1.Pod{}, store, ReflectorOptions{Name: "bench"})
	// Measure the reflector, not a metrics provider a test may have installed.
	r.metrics = newReflectorMetricsFrom(noopMetricsProvider{}, r.name)
	ch := make(chan watch.Event, 1024)
	w := watch.NewProxyWatcher(ch)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for i := 0; i < b.N; i++ {
			ch <- events[i%objects]
		}
		close(ch)
	}()
	h := r.newWatchHandler(store, false)
	err := h.run(context.Background(), time.Now(), w, nil, func(rv string, _ bool) { r.setLastSyncResourceVersion(rv) })
	if err != nil && b.N > 0 {
		if _, short := err.(*VeryShortWatchError); !short {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
