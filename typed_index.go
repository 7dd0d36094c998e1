package cache

import (
	"fmt"
	"reflect"
)

// TypedIndexFunc is the type-safe form of IndexFunc: it computes the index values of an object
// of type T.
type TypedIndexFunc[T any] func(obj T) ([]string, error)

// TypedIndexers maps index names to TypedIndexFuncs, as Indexers does for IndexFuncs.
type TypedIndexers[T any] map[string]TypedIndexFunc[T]

// TypedIndexer is an Indexer with type-safe variants of Index, ByIndex and AddIndexers. Get one
// from TypedSharedIndexInformer.GetTypedIndexer.
//
// kcache difference: where client-go panics because a cached object is not a T, the typed
// methods return an error naming the expected and the actual type.
type TypedIndexer[T any] interface {
	Indexer

	// TypedIndex returns the objects that share an index value with obj in the index
	// indexName. It fails if the index does not exist or if a matching object is not a T.
	TypedIndex(indexName string, obj T) ([]T, error)
	// ByTypedIndex returns the objects whose index values in indexName include indexedValue.
	// It fails if the index does not exist or if a matching object is not a T.
	ByTypedIndex(indexName, indexedValue string) ([]T, error)
	// AddTypedIndexers adds indexers, as AddIndexers does.
	AddTypedIndexers(newIndexers TypedIndexers[T]) error
}

// TypedIndexersToIndexers converts indexers for use where untyped Indexers are needed, such
// as SharedIndexInformerOptions.Indexers; each function is converted with
// TypedIndexerFuncToIndexerFunc. The typed informer and indexer methods convert on their own.
func TypedIndexersToIndexers[T any](indexers TypedIndexers[T]) Indexers {
	untyped := make(Indexers, len(indexers))
	for name, f := range indexers {
		untyped[name] = TypedIndexerFuncToIndexerFunc(f)
	}
	return untyped
}

// TypedIndexerFuncToIndexerFunc converts indexer into an IndexFunc that accepts any object.
//
// kcache difference: given an object that is not a T, the returned function returns an error
// naming the expected and the actual type, and does not call indexer; client-go panics. A
// store given that error rejects the write of that object and reports the error, and
// AddIndexers fails (see NewThreadSafeStore).
func TypedIndexerFuncToIndexerFunc[T any](indexer TypedIndexFunc[T]) IndexFunc {
	return func(obj interface{}) ([]string, error) {
		typed, ok := obj.(T)
		if !ok {
			return nil, wrongTypeError[T]("index function", obj)
		}
		return indexer(typed)
	}
}

// typedIndexer implements TypedIndexer on top of an Indexer.
type typedIndexer[T any] struct {
	Indexer
}

// TypedIndex implements TypedIndexer.
func (i typedIndexer[T]) TypedIndex(indexName string, obj T) ([]T, error) {
	untyped, err := i.Index(indexName, obj)
	if err != nil {
		return nil, err
	}
	return toTyped[T]("TypedIndex", untyped)
}

// ByTypedIndex implements TypedIndexer.
func (i typedIndexer[T]) ByTypedIndex(indexName, indexedValue string) ([]T, error) {
	untyped, err := i.ByIndex(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return toTyped[T]("ByTypedIndex", untyped)
}

// AddTypedIndexers implements TypedIndexer.
func (i typedIndexer[T]) AddTypedIndexers(newIndexers TypedIndexers[T]) error {
	return i.AddIndexers(TypedIndexersToIndexers(newIndexers))
}

// toTyped converts objects to []T, failing on the first object that is not a T.
func toTyped[T any](what string, objects []interface{}) ([]T, error) {
	typed := make([]T, len(objects))
	for n, obj := range objects {
		t, ok := obj.(T)
		if !ok {
			return nil, wrongTypeError[T](what, obj)
		}
		typed[n] = t
	}
	return typed, nil
}

// wrongTypeError reports that what expected a T and got obj.
func wrongTypeError[T any](what string, obj interface{}) error {
	return fmt.Errorf("cache: %s: expected an object of type %s, got %T", what, reflect.TypeFor[T](), obj)
}
