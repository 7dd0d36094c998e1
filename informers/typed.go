package informers

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
)

// Object is what a typed informer caches: a pointer type such as *corev1.Pod, which is both a
// cache.Object (for typed handlers) and a runtime.Object (for listers).
type Object interface {
	cache.Object
	runtime.Object
}

// TypedInformer gives access to one shared informer and a lister over its cache, as
// client-go's generated per-type informers (TypedPodInformer, …) do.
type TypedInformer[T Object] interface {
	// Informer returns the shared informer.
	Informer() cache.SharedIndexInformer
	// TypedInformer returns the shared informer with type-safe handlers and indexers.
	TypedInformer() cache.TypedSharedIndexInformer[T]
	// Lister returns a lister over the informer's cache, across all namespaces. For one
	// namespace, use listers.NewNamespaced(informer.Lister(), namespace); Get of a namespaced
	// object needs that.
	Lister() listers.ResourceIndexer[T]
}

// GenericInformer gives access to one shared informer of a resource and a lister over its
// cache, as client-go's informers.GenericInformer does.
type GenericInformer interface {
	// Informer returns the shared informer.
	Informer() cache.SharedIndexInformer
	// Lister returns a lister over the informer's cache.
	Lister() cache.GenericLister
}

// For returns the factory's shared informer of the namespaced objects of type T and a lister,
// building the informer on the first request for T. newClient returns the client of one
// namespace; the factory calls it once, with its WithNamespace namespace ("" for all), when it
// builds the informer. A client-go typed client's namespace method fits as it is:
//
//	pods := informers.For[*corev1.Pod](factory, clientset.CoreV1().Pods)
//	deployments := informers.For[*appsv1.Deployment](factory, clientset.AppsV1().Deployments)
//
// Only T is written out: the client type C and its list type L are inferred from newClient.
// The informer has the cache.NamespaceIndex index, like client-go's, and lists and watches
// through cache.NewListWatch with the factory's WithTweakListOptions. Its resource, in
// listers' NotFound errors and in metrics (WithInformerName), is T's type name in lower case
// ("pod"), without the group client-go's generated code knows. A nil newClient, or a client
// whose list holds objects of another type than T, builds an informer whose requests fail
// with an error saying so (reported to its watch error handler; it never syncs).
//
// The first request for T decides how its informer is built; later ones (also through
// ForClusterScoped or InformerFor with a T) share it and their newClient is not called. A nil
// f gives an informer of its own, with no namespace, tweak or resync, that nothing starts: run
// it yourself. (The same holds for ForClusterScoped and ForResource.)
func For[T Object, C cache.ListWatchClient[L], L runtime.Object](f SharedInformerFactory, newClient func(namespace string) C) TypedInformer[T] {
	return forType[T](f, func(namespace string) cache.ListWatchClient[L] {
		if newClient == nil {
			return nil
		}
		return newClient(namespace)
	}, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// ForClusterScoped is For for cluster-scoped objects (nodes, namespaces, cluster roles): it
// takes the client itself, the factory's namespace does not apply, and the informer has no
// index.
//
//	nodes := informers.ForClusterScoped[*corev1.Node](factory, clientset.CoreV1().Nodes())
func ForClusterScoped[T Object, C cache.ListWatchClient[L], L runtime.Object](f SharedInformerFactory, client C) TypedInformer[T] {
	return forType[T](f, func(string) cache.ListWatchClient[L] { return client }, cache.Indexers{})
}

// forType builds or finds T's informer. A client whose list holds another type than T gets
// an informer whose requests fail with an error naming both types.
func forType[T Object, L runtime.Object](f SharedInformerFactory, newClient func(string) cache.ListWatchClient[L], indexers cache.Indexers) TypedInformer[T] {
	example := newObject[T]()
	gvr := schema.GroupVersionResource{Resource: typeResource(reflect.TypeFor[T]())}
	informer := informerFor(f, informerKey{objType: reflect.TypeOf(example)}, func(s settings) cache.SharedIndexInformer {
		if item := itemOf[L](); item != nil && reflect.TypeOf(item) != reflect.TypeOf(example) {
			err := fmt.Errorf("informers: the client for %T lists %T, whose items are %T", example, *new(L), item)
			return newInformer[L](failingClient[L]{err}, s, example, gvr, indexers)
		}
		return newInformer(newClient(s.namespace), s, example, gvr, indexers)
	})
	return &typedInformer[T]{informer: informer, resource: gvr.GroupResource()}
}

// ForResource returns the factory's shared informer of the resource gvr and a lister,
// building it on the first request for that resource and object type. newClient returns the
// client of one namespace, as For's does; the dynamic and the metadata client fit as they are:
//
//	widgets := informers.ForResource(factory, gvr, dynamicClient.Resource(gvr).Namespace)  // *unstructured.Unstructured
//	meta := informers.ForResource(factory, gvr, metadataClient.Resource(gvr).Namespace)    // *metav1.PartialObjectMetadata
//
// The object type is the item type of the client's list (UnstructuredList holds Unstructured
// objects), so a dynamic and a metadata informer of the same resource are two informers. The
// informer has the cache.NamespaceIndex index. For typed handlers, wrap Informer() with
// cache.NewTypedSharedIndexInformer[*metav1.PartialObjectMetadata] (or *Unstructured).
func ForResource[C cache.ListWatchClient[L], L runtime.Object](f SharedInformerFactory, gvr schema.GroupVersionResource, newClient func(namespace string) C) GenericInformer {
	example := itemOf[L]()
	objType := reflect.TypeOf(example)
	if example == nil {
		objType = reflect.TypeFor[L]()
	}
	informer := informerFor(f, informerKey{objType: objType, gvr: gvr}, func(s settings) cache.SharedIndexInformer {
		var client cache.ListWatchClient[L]
		if newClient != nil {
			client = newClient(s.namespace)
		}
		return newInformer(client, s, example, gvr, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	})
	return &genericInformer{informer: informer, resource: gvr.GroupResource()}
}

// informerFor asks f for the informer of key; a nil f gets one of its own, built with the
// default settings, that nothing shares or starts.
func informerFor(f SharedInformerFactory, key informerKey, build func(settings) cache.SharedIndexInformer) cache.SharedIndexInformer {
	if f == nil {
		return build(settings{})
	}
	return f.informerFor(key, build)
}

// newInformer builds an informer over client with the factory's settings.
func newInformer[L runtime.Object](client cache.ListWatchClient[L], s settings, example runtime.Object, gvr schema.GroupVersionResource, indexers cache.Indexers) cache.SharedIndexInformer {
	var lw *cache.ListWatch
	if s.tweak != nil {
		lw = cache.NewListWatch(client, s.tweak)
	} else {
		lw = cache.NewListWatch(client)
	}
	var semantics any = client
	switch {
	case s.watchListClient != nil:
		semantics = s.watchListClient
	case isClientGoFake(client):
		semantics = noWatchList{}
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, semantics), example,
		cache.SharedIndexInformerOptions{
			ResyncPeriod:             s.resync,
			Indexers:                 indexers,
			Identifier:               s.informerName.WithResource(gvr),
			DefaultHandlerMaxPending: s.defaultHandlerMaxPending,
			Compact:                  s.compact,
		})
}

// clientGoFake is implemented by client-go's generated fake typed clients (those of
// k8s.io/client-go/kubernetes/fake, and of the fake clientsets generated for other API groups),
// which embed *k8s.io/client-go/testing.Fake. Their watches ignore SendInitialEvents and never
// end a watch-list's initial events. client-go's generated factory learns this from the fake
// clientset it is given; kcache's factory is given only the typed client, so it looks for this
// method, which no real client has.
type clientGoFake interface{ ClearActions() }

func isClientGoFake(client any) bool {
	_, ok := client.(clientGoFake)
	return ok
}

// noWatchList says that its client cannot serve streaming watch-lists.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// failingClient is a client whose calls fail with err.
type failingClient[L runtime.Object] struct{ err error }

func (c failingClient[L]) List(context.Context, metav1.ListOptions) (L, error) {
	return *new(L), c.err
}

func (c failingClient[L]) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, c.err
}

// typedInformer implements TypedInformer.
type typedInformer[T Object] struct {
	informer cache.SharedIndexInformer
	resource schema.GroupResource
}

func (t *typedInformer[T]) Informer() cache.SharedIndexInformer { return t.informer }

func (t *typedInformer[T]) TypedInformer() cache.TypedSharedIndexInformer[T] {
	return cache.NewTypedSharedIndexInformer[T](t.informer)
}

func (t *typedInformer[T]) Lister() listers.ResourceIndexer[T] {
	return listers.New[T](t.informer.GetIndexer(), t.resource)
}

// genericInformer implements GenericInformer.
type genericInformer struct {
	informer cache.SharedIndexInformer
	resource schema.GroupResource
}

func (g *genericInformer) Informer() cache.SharedIndexInformer { return g.informer }

func (g *genericInformer) Lister() cache.GenericLister {
	return cache.NewGenericLister(g.informer.GetIndexer(), g.resource)
}

// newObject returns a new empty T: for a pointer type, a pointer to a new zero value.
func newObject[T runtime.Object]() runtime.Object {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		if obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object); ok {
			return obj
		}
	}
	var zero T
	return zero
}

// itemOf returns a new empty item of the list type L (a pointer to a struct whose Items field
// is a slice of objects, as every Kubernetes list is), or nil if L is not like that.
func itemOf[L runtime.Object]() runtime.Object {
	t := reflect.TypeFor[L]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	items, ok := t.Elem().FieldByName("Items")
	if !ok || items.Type.Kind() != reflect.Slice {
		return nil
	}
	item := items.Type.Elem()
	if item.Kind() == reflect.Pointer {
		item = item.Elem()
	}
	obj, _ := reflect.New(item).Interface().(runtime.Object)
	return obj
}

// typeResource returns the resource name For uses for t: its type name in lower case.
func typeResource(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.ToLower(t.Name())
}
