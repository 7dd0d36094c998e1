package cache_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// An informer built from NewInformerWithOptions keeps a store in step with a source (here the
// in-memory fake API server) and tells a handler about every change.
func ExampleNewInformerWithOptions() {
	source := fcache.NewFakeControllerSource()
	defer source.Shutdown()
	source.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one"}})
	source.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "two"}})

	deleted := make(chan string, 1)
	store, controller := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: source,
		ObjectType:    &v1.ConfigMap{},
		Handler: cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj interface{}, isInInitialList bool) {
				fmt.Printf("added %s (initial list: %v)\n", obj.(*v1.ConfigMap).Name, isInInitialList)
			},
			DeleteFunc: func(obj interface{}) {
				deleted <- obj.(*v1.ConfigMap).Name
			},
		},
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		controller.RunWithContext(ctx)
	}()
	waitCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if !cache.WaitFor(waitCtx, "initial list", controller.HasSyncedChecker()) {
		fmt.Println("not synced")
	}
	fmt.Println("synced, cached objects:", len(store.List()))

	source.Delete(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one"}})
	fmt.Println("deleted", <-deleted)

	cancel()
	<-done
	// Output:
	// added one (initial list: true)
	// added two (initial list: true)
	// synced, cached objects: 2
	// deleted one
}
