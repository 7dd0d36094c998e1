package cache_test

import (
	"context"
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// ExampleNewSharedIndexInformer runs an informer against the fake API source: it waits for
// the cache and the handler to sync, reacts to a change, and reads the namespace index.
func ExampleNewSharedIndexInformer() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	for _, name := range []string{"web-1", "web-2", "db-1"} {
		src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}})
	}

	informer := cache.NewSharedIndexInformer(src, &v1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var mu sync.Mutex
	var seen []string
	updated := make(chan string, 1)
	registration, _ := informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, initial bool) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, fmt.Sprintf("add %s (initial list: %v)", obj.(*v1.Pod).Name, initial))
		},
		UpdateFunc: func(_, obj interface{}) {
			updated <- "update " + obj.(*v1.Pod).Name + " phase " + string(obj.(*v1.Pod).Status.Phase)
		},
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()

	// No polling: WaitFor returns as soon as both are done.
	cache.WaitFor(ctx, "", informer.HasSyncedChecker(), registration.HasSyncedChecker())
	mu.Lock()
	sort.Strings(seen)
	for _, s := range seen {
		fmt.Println(s)
	}
	mu.Unlock()

	src.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-1"}, Status: v1.PodStatus{Phase: v1.PodRunning}})
	fmt.Println(<-updated)

	pods, _ := informer.GetIndexer().ByIndex(cache.NamespaceIndex, "shop")
	fmt.Println("pods in shop:", len(pods))
	// Output:
	// add db-1 (initial list: true)
	// add web-1 (initial list: true)
	// add web-2 (initial list: true)
	// update db-1 phase Running
	// pods in shop: 3
}

// ExampleWaitFor waits for several things at once without polling.
func ExampleWaitFor() {
	first, second := newInfExampleDone("first"), newInfExampleDone("second")
	go first.finish()
	go second.finish()
	fmt.Println(cache.WaitFor(context.Background(), "", first, second))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(cache.WaitFor(ctx, "", newInfExampleDone("never")))
	// Output:
	// true
	// false
}

// infExampleDone is a DoneChecker finished by a call.
type infExampleDone struct {
	name string
	ch   chan struct{}
}

func newInfExampleDone(name string) *infExampleDone {
	return &infExampleDone{name: name, ch: make(chan struct{})}
}
func (d *infExampleDone) Name() string          { return d.name }
func (d *infExampleDone) Done() <-chan struct{} { return d.ch }
func (d *infExampleDone) finish()               { close(d.ch) }
