package listers

import (
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
)

// errNilIndexer is returned by List and Get of a ResourceIndexer that wraps no indexer.
var errNilIndexer = errors.New("listers: nil indexer")

// ResourceIndexer is a typed lister: it lists and gets objects of type T from an indexer,
// across all namespaces or, when made by NewNamespaced, in one namespace. The indexer must
// hold objects of type T stored under cache.MetaNamespaceKeyFunc keys ("namespace/name", or
// "name" for cluster-scoped objects), as informers do.
//
// A ResourceIndexer is a small value that only reads the indexer; it is safe for concurrent
// use as far as the indexer is. The zero value wraps no indexer: its List and Get return an
// error.
type ResourceIndexer[T runtime.Object] struct {
	indexer   cache.Indexer
	resource  schema.GroupResource
	namespace string // "" lists across all namespaces and gets cluster-scoped keys
}

// New returns a ResourceIndexer over indexer for all namespaces. resource names the resource
// in the NotFound errors of Get.
func New[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource) ResourceIndexer[T] {
	return ResourceIndexer[T]{indexer: indexer, resource: resource}
}

// NewNamespaced returns a ResourceIndexer over parent's indexer and resource, restricted to
// namespace. An empty namespace means all namespaces, as for New.
func NewNamespaced[T runtime.Object](parent ResourceIndexer[T], namespace string) ResourceIndexer[T] {
	return ResourceIndexer[T]{indexer: parent.indexer, resource: parent.resource, namespace: namespace}
}

// List returns the objects whose labels match selector, in the lister's namespace or in all
// namespaces, in no particular order. It is cache.ListAllByNamespace: a namespaced List uses
// the indexer's cache.NamespaceIndex when there is one, and otherwise logs a warning
// ("Warning: can not retrieve list of objects using index") and scans every object, as
// client-go does. A nil selector is an error; labels.Everything() selects all objects.
//
// kcache difference: if a selected object is not a T, List returns no objects and an error
// naming the expected and the actual type; client-go panics.
func (l ResourceIndexer[T]) List(selector labels.Selector) (ret []T, err error) {
	if l.indexer == nil {
		return nil, errNilIndexer
	}
	var wrong error
	err = cache.ListAllByNamespace(l.indexer, l.namespace, selector, func(obj interface{}) {
		typed, ok := obj.(T)
		if !ok {
			if wrong == nil {
				wrong = wrongTypeError[T]("List", obj)
			}
			return
		}
		ret = append(ret, typed)
	})
	if err != nil {
		return nil, err
	}
	if wrong != nil {
		return nil, wrong
	}
	return ret, nil
}

// Get returns the object called name in the lister's namespace (for a lister made by New: the
// cluster-scoped object called name). If there is none, the error is a NotFound API error for
// the lister's resource (apierrors.IsNotFound reports true for it).
//
// For a namespaced type, call Get on a lister made by NewNamespaced. Get on the all-namespaces
// lister of a namespaced type compiles but always returns NotFound, since it looks up the key
// of a cluster-scoped object; client-go's generated listers have no such method.
//
// kcache difference: if the stored object is not a T, Get returns an error naming the expected
// and the actual type; client-go panics.
func (l ResourceIndexer[T]) Get(name string) (T, error) {
	var zero T
	if l.indexer == nil {
		return zero, errNilIndexer
	}
	key := name
	if l.namespace != "" {
		key = l.namespace + "/" + name
	}
	obj, exists, err := l.indexer.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(l.resource, name)
	}
	typed, ok := obj.(T)
	if !ok {
		return zero, wrongTypeError[T]("Get", obj)
	}
	return typed, nil
}

// wrongTypeError reports that method found obj where it expected a T.
func wrongTypeError[T any](method string, obj interface{}) error {
	return fmt.Errorf("listers: %s: expected an object of type %s, got %T", method, reflect.TypeFor[T](), obj)
}
