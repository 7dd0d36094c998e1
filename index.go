package cache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Indexer is a Store that also keeps named secondary indices. Each index maps the values an
// IndexFunc computes for an object (e.g. its namespace) to the keys of the objects that have
// them.
type Indexer interface {
	Store
	// Index returns the stored objects that share at least one value of the named index with
	// obj.
	Index(indexName string, obj interface{}) ([]interface{}, error)
	// IndexKeys returns, sorted, the keys of the stored objects whose values for the named
	// index include indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value that the named index currently holds.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the stored objects whose values for the named index include
	// indexedValue, in no particular order.
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
	// GetIndexers returns the index functions by name.
	GetIndexers() Indexers
	// AddIndexers adds index functions; objects already stored are indexed at once. A name
	// that is already in use is an error.
	AddIndexers(newIndexers Indexers) error
}

// IndexFunc computes the values an object is indexed under. An object may have no value, one, or
// several.
type IndexFunc func(obj interface{}) ([]string, error)

// IndexFuncToKeyFuncAdapter turns an IndexFunc that yields exactly one value into a KeyFunc.
// Any other number of values is an error.
func IndexFuncToKeyFuncAdapter(indexFunc IndexFunc) KeyFunc {
	return func(obj interface{}) (string, error) {
		values, err := indexFunc(obj)
		if err != nil {
			return "", err
		}
		switch len(values) {
		case 1:
			return values[0], nil
		case 0:
			return "", fmt.Errorf("unexpected empty indexKeys")
		default:
			return "", fmt.Errorf("too many keys: %v", values)
		}
	}
}

// NamespaceIndex is the conventional name of the index built by MetaNamespaceIndexFunc.
const NamespaceIndex string = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace. For an object without metadata it
// returns [""] together with an error.
func MetaNamespaceIndexFunc(obj interface{}) ([]string, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return []string{""}, fmt.Errorf("object has no meta: %w", err)
	}
	return []string{accessor.GetNamespace()}, nil
}

// index maps each indexed value to the set of keys of the objects that have it.
type index map[string]sets.Set[string]

// Indexers maps index names to the functions that compute them.
type Indexers map[string]IndexFunc

// Indices maps index names to their contents.
type Indices map[string]index
