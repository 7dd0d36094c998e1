package cache_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// ExampleNewListWatch builds a ListWatch from a client of the shape client-go's typed clients
// have (here the fake source standing in for clientset.CoreV1().Pods("shop")), with a label
// selector, and runs an informer on it.
func ExampleNewListWatch() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}}})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-1", Labels: map[string]string{"app": "db"}}})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web-2", Labels: map[string]string{"app": "web"}}})
	pods := fcache.NewClient[*v1.PodList](src).Namespace("shop") // clientset.CoreV1().Pods("shop")

	lw := cache.NewListWatch(pods, func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
	informer := cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	cache.WaitFor(ctx, "", informer.HasSyncedChecker())
	fmt.Println(informer.GetStore().ListKeys())
	// Output:
	// [shop/web-1]
}
