package cache

// ThreadSafeStore is the concurrent, indexed map underneath Store and Indexer. Unlike them it is
// keyed by the caller: every write names the key explicitly.
//
// Objects it returns are shared with the store; modifying one corrupts the indices and races with
// other readers. Treat them as read-only.
type ThreadSafeStore interface {
	Add(key string, obj interface{})
	Update(key string, obj interface{})
	// Delete removes key. It does not advance the store's resource version; prefer
	// DeleteWithObject, which records the deleted object's resource version.
	Delete(key string)
	DeleteWithObject(key string, obj interface{})
	Get(key string) (item interface{}, exists bool)
	List() []interface{}
	ListKeys() []string
	Replace(items map[string]interface{}, resourceVersion string)
	Index(indexName string, obj interface{}) ([]interface{}, error)
	IndexKeys(indexName, indexedValue string) ([]string, error)
	Bookmark(rv string)
	LastStoreSyncResourceVersion() string
	ListIndexFuncValues(name string) []string
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
	GetIndexers() Indexers

	// AddIndexers adds index functions and indexes the objects already stored.
	AddIndexers(newIndexers Indexers) error
	// Resync does nothing and always returns nil.
	//
	// Deprecated: it exists only to satisfy the interface.
	Resync() error
}

// ThreadSafeStoreWithTransaction is a ThreadSafeStore that applies a batch of writes under one
// lock acquisition.
type ThreadSafeStoreWithTransaction interface {
	ThreadSafeStore
	// Transaction applies the writes in order under one write lock.
	Transaction(fns ...ThreadSafeStoreTransaction)
}

// ThreadSafeStoreTransaction is a Transaction together with the key of its object.
type ThreadSafeStoreTransaction struct {
	Transaction
	Key string
}
