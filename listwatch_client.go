package cache

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListWatchClient is the shape of a client for one resource in one namespace (or all): a
// List that returns the resource's list type L and a Watch. client-go's typed clients, its
// dynamic client and its metadata client all have it, so kcache can list and watch through
// them without importing client-go:
//
//	clientset.CoreV1().Pods(namespace)              // L = *corev1.PodList
//	clientset.CoreV1().Nodes()                      // L = *corev1.NodeList (cluster-scoped)
//	dynamicClient.Resource(gvr).Namespace(namespace) // L = *unstructured.UnstructuredList
//	metadataClient.Resource(gvr).Namespace(namespace) // L = *metav1.PartialObjectMetadataList
//
// kcache extension.
type ListWatchClient[L runtime.Object] interface {
	List(ctx context.Context, options metav1.ListOptions) (L, error)
	Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// errNilClient is returned by the calls of a ListWatch that NewListWatch built from a nil
// client.
var errNilClient = errors.New("cache: NewListWatch was given a nil client")

// NewListWatch returns a ListWatch that lists and watches through client, any value with
// client-go's List(ctx, metav1.ListOptions) and Watch(ctx, metav1.ListOptions) methods. It
// replaces client-go's REST-bound NewListWatchFromClient and NewFilteredListWatchFromClient,
// which kcache does not offer. The list type is inferred from client; one line per client
// kind:
//
//	lw := cache.NewListWatch(clientset.CoreV1().Pods(namespace))           // typed client
//	lw := cache.NewListWatch(clientset.CoreV1().Nodes())                   // cluster-scoped typed client
//	lw := cache.NewListWatch(dynamicClient.Resource(gvr).Namespace(namespace))  // unstructured objects
//	lw := cache.NewListWatch(metadataClient.Resource(gvr).Namespace(namespace)) // metadata only
//
// Each tweak, if any, runs in order on a copy of the options of every List and Watch call
// before it reaches client — the place for label and field selectors:
//
//	cache.NewListWatch(pods, func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
//
// All four functions of the ListWatch are set; the ones without a context use
// context.Background(). A nil client gives a ListWatch whose calls return an error instead of
// panicking. client-go's fake clientsets cannot serve streaming watch-lists and their typed
// clients do not say so: wrap the result with ToListWatcherWithWatchListSemantics(lw,
// fakeClientset) when testing against one.
//
// kcache extension.
func NewListWatch[L runtime.Object](client ListWatchClient[L], tweaks ...func(*metav1.ListOptions)) *ListWatch {
	if client == nil {
		return &ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return nil, errNilClient
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return nil, errNilClient
			},
		}
	}
	tweak := func(options *metav1.ListOptions) {
		for _, t := range tweaks {
			if t != nil {
				t(options)
			}
		}
	}
	list := func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
		tweak(&options)
		l, err := client.List(ctx, options)
		if err != nil {
			// A typed client returns a non-nil empty list beside an error; drop it so the
			// caller sees only the error.
			return nil, err
		}
		return l, nil
	}
	watchFn := func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
		tweak(&options)
		return client.Watch(ctx, options)
	}
	return &ListWatch{
		ListFunc: func(options metav1.ListOptions) (runtime.Object, error) {
			return list(context.Background(), options)
		},
		WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			return watchFn(context.Background(), options)
		},
		ListWithContextFunc:  list,
		WatchFuncWithContext: watchFn,
	}
}
