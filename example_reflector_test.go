package cache_test

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// exampleReflectorStore is a Store that also reports, on a channel, the writes a Reflector
// makes, so the example can wait for them.
type exampleReflectorStore struct {
	cache.Store
	writes chan string
}

func (s exampleReflectorStore) Replace(list []interface{}, rv string) error {
	err := s.Store.Replace(list, rv)
	s.writes <- fmt.Sprintf("replaced with %d objects at resource version %s", len(list), rv)
	return err
}

func (s exampleReflectorStore) Update(obj interface{}) error {
	err := s.Store.Update(obj)
	s.writes <- "updated " + obj.(*v1.ConfigMap).Name
	return err
}

func (s exampleReflectorStore) Delete(obj interface{}) error {
	err := s.Store.Delete(obj)
	s.writes <- "deleted " + obj.(*v1.ConfigMap).Name
	return err
}

// A Reflector keeps a Store in step with an API server: here, the fake source from the
// testing package.
func ExampleReflector() {
	src := fcache.NewFakeControllerSource()
	for _, name := range []string{"alpha", "beta"} {
		src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}})
	}

	store := exampleReflectorStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), writes: make(chan string, 10)}
	r := cache.NewReflectorWithOptions(src, &v1.ConfigMap{}, store, cache.ReflectorOptions{Name: "configmaps"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()

	// The first write fills the store (by a streaming watch-list, or a LIST on servers
	// without one); then the reflector watches.
	fmt.Println(<-store.writes)
	keys := store.ListKeys()
	sort.Strings(keys)
	fmt.Println(keys)

	src.Modify(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "alpha"}, Data: map[string]string{"k": "v"}})
	fmt.Println(<-store.writes)
	src.Delete(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "beta"}})
	fmt.Println(<-store.writes)
	fmt.Println(store.ListKeys())

	cancel()
	<-done
	// Output:
	// replaced with 2 objects at resource version 2
	// [demo/alpha demo/beta]
	// updated alpha
	// deleted beta
	// [demo/alpha]
}

// A ListWatch adapts any client's list and watch calls into a ListerWatcher, for example to
// narrow what a Reflector sees with a label selector.
func ExampleListWatch() {
	src := fcache.NewFakeControllerSource()
	src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web", Labels: map[string]string{"tier": "web"}}})
	src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "db", Labels: map[string]string{"tier": "db"}}})

	onlyWeb := func(o *metav1.ListOptions) { o.LabelSelector = "tier=web" }
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			onlyWeb(&o)
			return src.ListWithContext(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			onlyWeb(&o)
			return src.WatchWithContext(ctx, o)
		},
	}

	store := exampleReflectorStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), writes: make(chan string, 10)}
	r := cache.NewReflector(lw, &v1.ConfigMap{}, store, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()

	<-store.writes
	fmt.Println(store.ListKeys())
	cancel()
	<-done
	// Output:
	// [demo/web]
}
