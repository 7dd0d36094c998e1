package debugpage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache"
	"github.com/kcache/cache/debugpage"
	fcache "github.com/kcache/cache/testing"
	"github.com/kcache/cache/workqueue"
)

// New mounts the page next to pprof; here a request reads the overview as JSON while an
// informer and a workqueue run.
func ExampleNew() {
	mux := http.NewServeMux()
	mux.Handle("/debug/kcache/", debugpage.New(debugpage.Options{}))

	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	for _, name := range []string{"web-1", "web-2", "db-1"} {
		src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}})
	}
	informer := cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{})
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})
	defer queue.ShutDown()
	registration, _ := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(key)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	cache.WaitFor(ctx, "", informer.HasSyncedChecker(), registration.HasSyncedChecker())

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/kcache/?format=json", nil))
	var page struct {
		Informers []struct {
			Name, State string
			Objects     int
			Handlers    []struct{ Processed int }
		}
		Queues []struct {
			Name        string
			Depth, Adds int
		}
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &page)
	for _, i := range page.Informers {
		fmt.Printf("informer %s: %s, %d objects, %d handler(s), %d processed\n", i.Name, i.State, i.Objects, len(i.Handlers), i.Handlers[0].Processed)
	}
	for _, q := range page.Queues {
		if q.Name == "pods" {
			fmt.Printf("queue %s: %d waiting, %d adds\n", q.Name, q.Depth, q.Adds)
		}
	}
	// Output:
	// informer v1.Pod: synced, 3 objects, 1 handler(s), 3 processed
	// queue pods: 3 waiting, 3 adds
}
