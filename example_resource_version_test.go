package cache_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// ExampleGetByKeyAtLeast reads an object back right after writing it: the read waits until the
// informer's store reflects the write's resourceVersion, so it never returns the state from
// before the write. A version the informer never sees ends at the context's deadline with
// ErrResourceVersionNotReached.
func ExampleGetByKeyAtLeast() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"color": "red"}})
	informer := cache.NewSharedIndexInformer(src, &v1.ConfigMap{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	// The write: what a client's Update returns carries the new resourceVersion.
	written := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"color": "blue"}}
	src.Modify(written)

	obj, exists, err := cache.GetByKeyAtLeast(ctx, informer, "shop/settings", written.ResourceVersion)
	fmt.Println(obj.(*v1.ConfigMap).Data["color"], exists, err)
	fmt.Println("processed:", informer.(cache.ResourceVersionWaiter).LastProcessedResourceVersion() == written.ResourceVersion)

	// A write the informer never sees (here: dropped from its watch).
	hidden := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "other"}}
	src.AddDropWatch(hidden)
	short, cancelShort := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancelShort()
	err = cache.WaitForResourceVersion(short, informer, hidden.ResourceVersion)
	fmt.Println(errors.Is(err, cache.ErrResourceVersionNotReached), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// blue true <nil>
	// processed: true
	// true true
}
