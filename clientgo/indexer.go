package clientgo

import (
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache"
)

// indexer is a client-go Indexer over a kcache Indexer. Objects pass through unchanged; a
// client-go tombstone given to Add, Update, Delete, Get or Index is read as kcache's, so that
// it is keyed like client-go keys it.
type indexer struct {
	inner cache.Indexer
}

var _ toolscache.Indexer = (*indexer)(nil)

// Add implements toolscache.Store.
func (i *indexer) Add(obj interface{}) error { return i.inner.Add(toKcacheTombstone(obj)) }

// Update implements toolscache.Store.
func (i *indexer) Update(obj interface{}) error { return i.inner.Update(toKcacheTombstone(obj)) }

// Delete implements toolscache.Store.
func (i *indexer) Delete(obj interface{}) error { return i.inner.Delete(toKcacheTombstone(obj)) }

// List implements toolscache.Store.
func (i *indexer) List() []interface{} { return i.inner.List() }

// ListKeys implements toolscache.Store.
func (i *indexer) ListKeys() []string { return i.inner.ListKeys() }

// LastStoreSyncResourceVersion implements toolscache.Store.
func (i *indexer) LastStoreSyncResourceVersion() string {
	return i.inner.LastStoreSyncResourceVersion()
}

// Bookmark implements toolscache.Store.
func (i *indexer) Bookmark(rv string) { i.inner.Bookmark(rv) }

// Get implements toolscache.Store.
func (i *indexer) Get(obj interface{}) (item interface{}, exists bool, err error) {
	return i.inner.Get(toKcacheTombstone(obj))
}

// GetByKey implements toolscache.Store.
func (i *indexer) GetByKey(key string) (item interface{}, exists bool, err error) {
	return i.inner.GetByKey(key)
}

// Replace implements toolscache.Store.
func (i *indexer) Replace(list []interface{}, resourceVersion string) error {
	return i.inner.Replace(list, resourceVersion)
}

// Resync implements toolscache.Store.
func (i *indexer) Resync() error { return i.inner.Resync() }

// Index implements toolscache.Indexer.
func (i *indexer) Index(indexName string, obj interface{}) ([]interface{}, error) {
	return i.inner.Index(indexName, toKcacheTombstone(obj))
}

// IndexKeys implements toolscache.Indexer.
func (i *indexer) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return i.inner.IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues implements toolscache.Indexer.
func (i *indexer) ListIndexFuncValues(indexName string) []string {
	return i.inner.ListIndexFuncValues(indexName)
}

// ByIndex implements toolscache.Indexer.
func (i *indexer) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	return i.inner.ByIndex(indexName, indexedValue)
}

// GetIndexers implements toolscache.Indexer: a new map holding the index functions.
func (i *indexer) GetIndexers() toolscache.Indexers {
	return toClientGoIndexers(i.inner.GetIndexers())
}

// AddIndexers implements toolscache.Indexer.
func (i *indexer) AddIndexers(newIndexers toolscache.Indexers) error {
	return i.inner.AddIndexers(toKcacheIndexers(newIndexers))
}

// toKcacheIndexers converts client-go's indexers to kcache's: the same names and functions.
// nil stays nil.
func toKcacheIndexers(in toolscache.Indexers) cache.Indexers {
	if in == nil {
		return nil
	}
	out := make(cache.Indexers, len(in))
	for name, f := range in {
		out[name] = cache.IndexFunc(f)
	}
	return out
}

// toClientGoIndexers converts kcache's indexers to client-go's. nil stays nil.
func toClientGoIndexers(in cache.Indexers) toolscache.Indexers {
	if in == nil {
		return nil
	}
	out := make(toolscache.Indexers, len(in))
	for name, f := range in {
		out[name] = toolscache.IndexFunc(f)
	}
	return out
}
