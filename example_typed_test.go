package cache_test

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// ExampleNewTypedSharedIndexInformer registers a typed handler: it receives *v1.Pod instead of
// interface{}, and deletions as a DeletedObject whose GetKey works whether or not the informer
// still had the object.
func ExampleNewTypedSharedIndexInformer() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}})

	informer := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
	events := make(chan string, 10)
	registration, _ := informer.AddTypedEventHandler(cache.TypedResourceEventHandlerDetailedFuncs[*v1.Pod]{
		AddFunc: func(pod *v1.Pod, initial bool) {
			events <- fmt.Sprintf("add %s/%s (initial list: %v)", pod.Namespace, pod.Name, initial)
		},
		UpdateFunc: func(_, pod *v1.Pod) {
			events <- fmt.Sprintf("update %s/%s: %s", pod.Namespace, pod.Name, pod.Status.Phase)
		},
		DeleteFunc: func(deleted cache.DeletedObject[*v1.Pod]) {
			events <- "delete " + deleted.GetKey()
		},
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	cache.WaitFor(ctx, "", informer.HasSyncedChecker(), registration.HasSyncedChecker())

	src.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}, Status: v1.PodStatus{Phase: v1.PodRunning}})
	src.Delete(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}})
	for range 3 {
		fmt.Println(<-events)
	}
	// Output:
	// add shop/web-1 (initial list: true)
	// update shop/web-1: Running
	// delete shop/web-1
}

// ExampleTypedIndexer indexes pods by node with a typed index function and queries the index
// for typed objects.
func ExampleTypedIndexer() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	for _, p := range []struct{ name, node string }{{"web-1", "node-a"}, {"web-2", "node-b"}, {"db-1", "node-a"}} {
		src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: p.name}, Spec: v1.PodSpec{NodeName: p.node}})
	}

	informer := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
	_ = informer.AddTypedIndexers(cache.TypedIndexers[*v1.Pod]{
		"node": func(pod *v1.Pod) ([]string, error) { return []string{pod.Spec.NodeName}, nil },
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	cache.WaitFor(ctx, "", informer.HasSyncedChecker())

	pods, _ := informer.GetTypedIndexer().ByTypedIndex("node", "node-a")
	var onNodeA []string
	for _, pod := range pods { // pods is a []*v1.Pod
		onNodeA = append(onNodeA, pod.Name)
	}
	sort.Strings(onNodeA)
	fmt.Println("on node-a:", onNodeA)
	// Output:
	// on node-a: [db-1 web-1]
}
