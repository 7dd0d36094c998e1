package cache_test

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// ExampleShutDownEventHandler removes a handler and waits until its last callback has
// returned, after which what the handler uses can be released. Called from the handler's own
// callback it does not wait for itself.
func ExampleShutDownEventHandler() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}})
	informer := cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{})

	results := make(chan string, 1) // what the handler writes to; closed once it has stopped
	registration, _ := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { results <- "added " + obj.(*v1.Pod).Name },
	})
	var self cache.ResourceEventHandlerRegistration
	selfErr := make(chan error, 1)
	self, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) { selfErr <- cache.ShutDownEventHandler(informer, self) },
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()

	fmt.Println(<-results)
	if err := cache.ShutDownEventHandler(informer, registration); err != nil {
		fmt.Println(err)
	}
	close(results) // safe: the handler will not be called again
	fmt.Println("from its own callback:", errors.Is(<-selfErr, cache.ErrShutDownFromOwnHandler))
	// Output:
	// added web-1
	// from its own callback: true
}

// ExampleHandlerOptions_maxPending bounds what a slow, level-triggered handler can queue: once
// more than MaxPending notifications wait, they are coalesced per object, so the handler gets
// the newest state of each object (OnUpdate's old object being the one it last received) instead
// of every intermediate one, and memory stays O(objects) however many events arrive.
func ExampleHandlerOptions_maxPending() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}})
	informer := cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{})

	gate := make(chan struct{})       // holds the handler in its first call
	entered := make(chan struct{}, 1) // the handler is in its first call
	updates := make(chan string, 10)
	registration, _ := informer.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-gate
		},
		UpdateFunc: func(oldObj, newObj interface{}) {
			updates <- fmt.Sprintf("%s: phase %q -> %q", newObj.(*v1.Pod).Name,
				oldObj.(*v1.Pod).Status.Phase, newObj.(*v1.Pod).Status.Phase)
		},
	}, cache.HandlerOptions{MaxPending: ptr.To(1)})

	// A second handler tells when a marker object arrived: by then every earlier change was
	// queued for the first handler too.
	marker := make(chan struct{})
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		if obj.(*v1.Pod).Name == "marker" {
			close(marker)
		}
	}})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	<-entered

	for _, phase := range []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded} {
		src.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}, Status: v1.PodStatus{Phase: phase}})
	}
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "marker"}})
	<-marker
	close(gate)
	cache.WaitFor(ctx, "", registration.HasSyncedChecker())
	fmt.Println(<-updates)
	// Output:
	// web-1: phase "" -> "Succeeded"
}
