package cache

import (
	goerrors "errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// errNilSelector is returned by ListAll and ListAllByNamespace for a nil selector.
var errNilSelector = goerrors.New("cache: nil label selector; use labels.Everything() to select all")

// AppendFunc receives each object a ListAll or ListAllByNamespace call selects.
type AppendFunc func(interface{})

// ListAll calls appendFn on every object of store whose labels match selector. A selector that
// matches nothing returns at once; an empty selector (labels.Everything()) selects every object
// without reading labels. With any other selector, an object without metadata stops the walk
// with the error from meta.Accessor (objects before it have been passed to appendFn). A nil
// selector is an error (client-go panics).
func ListAll(store Store, selector labels.Selector, appendFn AppendFunc) error {
	if selector == nil {
		return errNilSelector
	}
	if labels.MatchesNothing(selector) {
		return nil
	}
	return appendSelected(store.List(), selector, appendFn)
}

// appendSelected passes the objects of items that match selector to appendFn.
func appendSelected(items []interface{}, selector labels.Selector, appendFn AppendFunc) error {
	if selector.Empty() {
		for _, m := range items {
			appendFn(m)
		}
		return nil
	}
	for _, m := range items {
		metadata, err := meta.Accessor(m)
		if err != nil {
			return err
		}
		if selector.Matches(labels.Set(metadata.GetLabels())) {
			appendFn(m)
		}
	}
	return nil
}

// ListAllByNamespace calls appendFn on every object of indexer in namespace whose labels match
// selector; metav1.NamespaceAll ("") means ListAll. It looks the namespace up in the
// NamespaceIndex; an indexer without one is scanned in full, after a logged warning, as in
// client-go. Selector handling and errors are those of ListAll.
//
// For an Indexer made by this package whose NamespaceIndex is MetaNamespaceIndexFunc, the
// lookup goes straight to the index value, without building the probe object client-go passes
// to Indexer.Index; the result is the same.
func ListAllByNamespace(indexer Indexer, namespace string, selector labels.Selector, appendFn AppendFunc) error {
	if selector == nil {
		return errNilSelector
	}
	if labels.MatchesNothing(selector) {
		return nil
	}
	if namespace == metav1.NamespaceAll {
		return ListAll(indexer, selector, appendFn)
	}

	var items []interface{}
	var err error
	if c, ok := indexer.(*cache); ok && c.storage.indexers.Load().metaNamespaceIndex {
		items, err = c.storage.ByIndex(NamespaceIndex, namespace)
	} else {
		items, err = indexer.Index(NamespaceIndex, &metav1.ObjectMeta{Namespace: namespace})
	}
	if err != nil {
		klog.TODO().Info("Warning: can not retrieve list of objects using index", "err", err)
		for _, m := range indexer.List() {
			metadata, err := meta.Accessor(m)
			if err != nil {
				return err
			}
			if metadata.GetNamespace() == namespace && selector.Matches(labels.Set(metadata.GetLabels())) {
				appendFn(m)
			}
		}
		return nil
	}
	return appendSelected(items, selector, appendFn)
}

// isMetaNamespaceIndexFunc reports whether f is MetaNamespaceIndexFunc itself.
func isMetaNamespaceIndexFunc(f IndexFunc) bool {
	return f != nil && reflect.ValueOf(f).Pointer() == reflect.ValueOf(IndexFunc(MetaNamespaceIndexFunc)).Pointer()
}

// GenericLister lists and gets runtime.Objects from an Indexer.
type GenericLister interface {
	// List returns the objects, across namespaces, whose labels match selector.
	List(selector labels.Selector) (ret []runtime.Object, err error)
	// Get returns the object stored under the key name (for a namespaced resource, use
	// ByNamespace).
	Get(name string) (runtime.Object, error)
	// ByNamespace returns a lister restricted to namespace.
	ByNamespace(namespace string) GenericNamespaceLister
}

// GenericNamespaceLister lists and gets runtime.Objects of one namespace from an Indexer.
type GenericNamespaceLister interface {
	// List returns the objects of the namespace whose labels match selector.
	List(selector labels.Selector) (ret []runtime.Object, err error)
	// Get returns the object of the namespace called name.
	Get(name string) (runtime.Object, error)
}

// NewGenericLister returns a GenericLister over indexer. resource names the objects in
// NotFound errors. Objects that are not runtime.Objects are errors (client-go panics): List
// skips them and returns an error naming the first, Get returns an error.
func NewGenericLister(indexer Indexer, resource schema.GroupResource) GenericLister {
	return &genericLister{indexer: indexer, resource: resource}
}

type genericLister struct {
	indexer  Indexer
	resource schema.GroupResource
}

// List returns the matching objects across namespaces.
func (s *genericLister) List(selector labels.Selector) ([]runtime.Object, error) {
	var c runtimeObjectCollector
	err := ListAll(s.indexer, selector, c.append)
	return c.result(err)
}

// ByNamespace returns a lister for namespace.
func (s *genericLister) ByNamespace(namespace string) GenericNamespaceLister {
	return &genericNamespaceLister{indexer: s.indexer, namespace: namespace, resource: s.resource}
}

// Get returns the object under key name, or a NotFound error.
func (s *genericLister) Get(name string) (runtime.Object, error) {
	return getRuntimeObject(s.indexer, name, name, s.resource)
}

type genericNamespaceLister struct {
	indexer   Indexer
	namespace string
	resource  schema.GroupResource
}

// List returns the matching objects of the namespace.
func (s *genericNamespaceLister) List(selector labels.Selector) ([]runtime.Object, error) {
	var c runtimeObjectCollector
	err := ListAllByNamespace(s.indexer, s.namespace, selector, c.append)
	return c.result(err)
}

// Get returns the object namespace/name, or a NotFound error.
func (s *genericNamespaceLister) Get(name string) (runtime.Object, error) {
	return getRuntimeObject(s.indexer, s.namespace+"/"+name, name, s.resource)
}

// getRuntimeObject returns the object stored under key; name is used in the NotFound error.
func getRuntimeObject(indexer Indexer, key, name string, resource schema.GroupResource) (runtime.Object, error) {
	obj, exists, err := indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, errors.NewNotFound(resource, name)
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("cache: object stored under %q is a %T, not a runtime.Object", key, obj)
	}
	return ro, nil
}

// runtimeObjectCollector gathers the runtime.Objects a lister selects, and remembers the first
// object that is not one.
type runtimeObjectCollector struct {
	objs []runtime.Object
	bad  interface{}
}

func (c *runtimeObjectCollector) append(m interface{}) {
	if ro, ok := m.(runtime.Object); ok {
		c.objs = append(c.objs, ro)
	} else if c.bad == nil {
		c.bad = m
	}
}

func (c *runtimeObjectCollector) result(err error) ([]runtime.Object, error) {
	if err == nil && c.bad != nil {
		err = fmt.Errorf("cache: lister found a %T, not a runtime.Object", c.bad)
	}
	return c.objs, err
}
