package informers_test

import (
	"context"
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/listers"
	fcache "github.com/kcache/cache/testing"
)

// Two controllers share one factory: both ask for the pod informer and get the same one. The
// fake source stands in for clientset.CoreV1().Pods and clientset.CoreV1().ConfigMaps.
func ExampleNewSharedInformerFactory() {
	podSrc := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	podSrc.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}})
	podSrc.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-1"}})
	cmSrc := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	cmSrc.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}})
	podsClient := fcache.NewClient[*v1.PodList](podSrc).Namespace    // clientset.CoreV1().Pods
	cmClient := fcache.NewClient[*v1.ConfigMapList](cmSrc).Namespace // clientset.CoreV1().ConfigMaps

	factory := informers.NewSharedInformerFactoryWithOptions(0,
		informers.WithTransform(cache.TransformStripManagedFields()))

	// Controller one watches pods and config maps.
	pods := informers.For[*v1.Pod](factory, podsClient)
	configMaps := informers.For[*v1.ConfigMap](factory, cmClient)
	var mu sync.Mutex
	var seen []string
	registration, _ := pods.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*v1.Pod]{
		AddFunc: func(p *v1.Pod) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "add "+p.Name)
		},
	})
	// Controller two reads pods too: same informer, no second LIST.
	podsAgain := informers.For[*v1.Pod](factory, podsClient)
	fmt.Println("shared:", pods.Informer() == podsAgain.Informer())

	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown() // runs after cancel: waits for every informer goroutine
	defer cancel()
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		fmt.Println(err)
		return
	}
	cache.WaitFor(ctx, "", registration.HasSyncedChecker())

	mu.Lock()
	sort.Strings(seen)
	fmt.Println(seen)
	mu.Unlock()
	inShop, _ := listers.NewNamespaced(podsAgain.Lister(), "shop").List(labels.Everything())
	cm, _ := listers.NewNamespaced(configMaps.Lister(), "shop").Get("settings")
	fmt.Println(len(inShop), "pods in shop; config map", cm.Name)
	// Output:
	// shared: true
	// [add db-1 add web-1]
	// 2 pods in shop; config map settings
}

// ForResource gives a metadata-only informer, keyed by resource: the fake source stands in for
// metadataClient.Resource(gvr).Namespace. Handlers and listers see PartialObjectMetadata —
// names, labels, owners — without the objects' spec and status.
func ExampleForResource() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &metav1.PartialObjectMetadataList{} }})
	for _, name := range []string{"web-1", "web-2"} {
		src.Add(&metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{"app": "web"}},
		})
	}
	metadataPods := fcache.NewClient[*metav1.PartialObjectMetadataList](src).Namespace

	factory := informers.NewSharedInformerFactory(0)
	gvr := v1.SchemeGroupVersion.WithResource("pods")
	pods := informers.ForResource(factory, gvr, metadataPods)

	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	synced := factory.WaitForCacheSyncWithContext(ctx)
	fmt.Println("synced:", synced.Synced)

	obj, _ := pods.Lister().ByNamespace("shop").Get("web-2")
	pod := obj.(*metav1.PartialObjectMetadata)
	fmt.Println(pod.Name, pod.Labels["app"])
	_, err := pods.Lister().ByNamespace("shop").Get("web-3")
	fmt.Println(err)
	// Output:
	// synced: map[*v1.PartialObjectMetadata:true]
	// web-2 web
	// pods "web-3" not found
}
