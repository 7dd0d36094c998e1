package cache

import (
	"fmt"
)

// Store is a thread-safe map from keys to objects. Implementations compute each object's key
// with a KeyFunc.
//
// Objects returned by Get, GetByKey and List are the stored objects themselves, shared with the
// store and every other reader: callers must treat them as read-only.
type Store interface {
	// Add inserts obj, or replaces the object stored under the same key.
	Add(obj interface{}) error

	// Update replaces the object stored under obj's key, or inserts obj.
	Update(obj interface{}) error

	// Delete removes the object stored under obj's key. Deleting a missing key is not an error.
	Delete(obj interface{}) error

	// List returns every stored object, in no particular order.
	List() []interface{}

	// ListKeys returns every key, in no particular order.
	ListKeys() []string

	// LastStoreSyncResourceVersion returns the newest resource version the store has seen
	// through writes, Replace and Bookmark.
	LastStoreSyncResourceVersion() string

	// Bookmark records rv as the newest resource version seen, without changing any object.
	Bookmark(rv string)

	// Get returns the object stored under obj's key.
	Get(obj interface{}) (item interface{}, exists bool, err error)

	// GetByKey returns the object stored under key.
	GetByKey(key string) (item interface{}, exists bool, err error)

	// Replace makes list the store's whole content, with resourceVersion as the resource
	// version it was read at. The store takes ownership of list.
	Replace(list []interface{}, resourceVersion string) error

	// Resync has no meaning for plain stores; queues such as DeltaFIFO use it to re-deliver
	// their known objects.
	Resync() error
}

// TransactionType says what a Transaction does to its object.
type TransactionType string

// The kinds of Transaction.
const (
	TransactionTypeAdd    TransactionType = "Add"
	TransactionTypeUpdate TransactionType = "Update"
	TransactionTypeDelete TransactionType = "Delete"
)

// Transaction is one write in a batch applied by TransactionStore.Transaction.
type Transaction struct {
	Object interface{}
	Type   TransactionType
}

// TransactionStore is a Store that can apply a batch of writes under a single lock acquisition,
// so that a writer with many changes makes progress even when readers contend for the lock.
type TransactionStore interface {
	// Transaction applies txns in order. Transactions whose key cannot be computed are skipped
	// and reported in the returned error; nil means every transaction was applied.
	Transaction(txns ...Transaction) *TransactionError
}

var _ error = &TransactionError{}

// TransactionError reports the transactions of a batch that could not be applied.
// SuccessfulIndices lists the positions (in the batch) of the transactions that were applied,
// in order; Errors holds one error for each transaction that was not.
type TransactionError struct {
	SuccessfulIndices []int
	TotalTransactions int
	Errors            []error
}

// Error says how many transactions of the batch failed and why.
func (t *TransactionError) Error() string {
	return fmt.Sprintf("failed to execute (%d/%d) transactions failed due to: %v",
		t.TotalTransactions-len(t.SuccessfulIndices), t.TotalTransactions, t.Errors)
}

// cache is the Store and Indexer of this package: a KeyFunc, an optional transformer and a
// threadSafeMap.
type cache struct {
	// storage holds the objects and indices; it is safe for concurrent use.
	storage *threadSafeMap
	// keyFunc computes the key of every object given to Add, Update, Delete and Get.
	keyFunc KeyFunc
	// transformer, if set, rewrites objects on Add, Update and Replace (not Delete).
	transformer TransformFunc
	// identifier and metrics are set by WithStoreMetrics.
	identifier InformerNameAndResource
	metrics    InformerMetricsProvider
	// compact is set by WithCompactStorage.
	compact *compactCodec
}

var (
	_ Indexer          = &cache{}
	_ TransactionStore = &cache{}
)

// StoreOption configures a Store or Indexer made by NewStore or NewIndexer.
type StoreOption = func(*cache)

// WithTransformer makes the store pass every object given to Add, Update and Replace through
// transformer before keeping it. The key is computed from the object before the transform.
// Delete and Transaction do not transform (as in client-go). A transform error fails the write
// with "transforming: <error>", and the store is unchanged.
func WithTransformer(transformer TransformFunc) StoreOption {
	return func(c *cache) {
		c.transformer = transformer
	}
}

// WithStoreMetrics makes the store publish its latest resource version under identifier
// (nothing is published unless identifier is Reserved). A nil metrics means the provider set
// with SetInformerMetricsProvider, as in client-go v0.37 (v0.36 published nothing in that
// case).
func WithStoreMetrics(identifier InformerNameAndResource, metrics InformerMetricsProvider) StoreOption {
	return func(c *cache) {
		c.identifier = identifier
		c.metrics = metrics
	}
}

// NewStore returns a Store that keys objects with keyFunc. It keeps no index; it also
// implements Indexer and TransactionStore.
func NewStore(keyFunc KeyFunc, opts ...StoreOption) Store {
	return newCache(keyFunc, nil, opts)
}

// NewIndexer returns an Indexer that keys objects with keyFunc and keeps the indices computed
// by indexers. It panics if a function in indexers is nil. It also implements
// TransactionStore.
//
// IndexFunc errors fail the write that caused them and leave the store unchanged for that
// object (client-go panics instead); see Add.
func NewIndexer(keyFunc KeyFunc, indexers Indexers, opts ...StoreOption) Indexer {
	return newCache(keyFunc, indexers, opts)
}

func newCache(keyFunc KeyFunc, indexers Indexers, opts []StoreOption) *cache {
	c := &cache{keyFunc: keyFunc}
	for _, opt := range opts {
		opt(c)
	}
	c.storage = newThreadSafeMap(indexers, WithThreadSafeStoreMetrics(c.identifier, c.metrics), withCompact(c.compact))
	return c
}

// Add stores obj under its key, replacing any object stored there, and records obj's resource
// version. It fails with a KeyError when the key cannot be computed, with "transforming: …"
// when the transformer fails, and with the IndexFunc's error (wrapped, naming the key and the
// index) when an index value cannot be computed. On any error the store is unchanged.
func (c *cache) Add(obj interface{}) error {
	key, obj, err := c.keyAndTransform(obj)
	if err != nil {
		return err
	}
	return c.storage.update(key, obj)
}

// Update is Add: both store obj under its key whether or not the key is present.
func (c *cache) Update(obj interface{}) error {
	key, obj, err := c.keyAndTransform(obj)
	if err != nil {
		return err
	}
	return c.storage.update(key, obj)
}

// keyAndTransform computes obj's key, then applies the transformer.
func (c *cache) keyAndTransform(obj interface{}) (string, interface{}, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", nil, KeyError{obj, err}
	}
	if c.transformer != nil {
		if obj, err = c.transformer(obj); err != nil {
			return "", nil, fmt.Errorf("transforming: %w", err)
		}
	}
	return key, obj, nil
}

// Delete removes the object stored under obj's key and records obj's resource version (when
// obj has metadata; a DeletedFinalStateUnknown does not). Deleting a missing key is not an
// error. It fails only with a KeyError.
func (c *cache) Delete(obj interface{}) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	c.storage.DeleteWithObject(key, obj)
	return nil
}

// List returns every stored object, in no particular order.
func (c *cache) List() []interface{} {
	return c.storage.List()
}

// ListKeys returns every key, in no particular order.
func (c *cache) ListKeys() []string {
	return c.storage.ListKeys()
}

// LastStoreSyncResourceVersion returns the latest resource version recorded by Add, Update,
// Delete, Replace, Bookmark or Transaction; always "" while the AtomicFIFO feature is off.
func (c *cache) LastStoreSyncResourceVersion() string {
	return c.storage.LastStoreSyncResourceVersion()
}

// Bookmark records rv as the latest resource version seen.
func (c *cache) Bookmark(rv string) {
	c.storage.Bookmark(rv)
}

// GetIndexers returns a copy of the index functions by name.
func (c *cache) GetIndexers() Indexers {
	return c.storage.GetIndexers()
}

// Index returns the stored objects that share at least one value of the named index with obj.
// It fails for an unknown index ("Index with name … does not exist") and with the IndexFunc's
// error.
func (c *cache) Index(indexName string, obj interface{}) ([]interface{}, error) {
	return c.storage.Index(indexName, obj)
}

// IndexKeys returns, sorted, the keys of the stored objects whose values for the named index
// include indexedValue. The keys can be passed to GetByKey.
func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return c.storage.IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues returns every value the named index holds.
func (c *cache) ListIndexFuncValues(indexName string) []string {
	return c.storage.ListIndexFuncValues(indexName)
}

// ByIndex returns the stored objects whose values for the named index include indexedValue.
func (c *cache) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	return c.storage.ByIndex(indexName, indexedValue)
}

// AddIndexers adds index functions and indexes the stored objects with them. See
// ThreadSafeStore.AddIndexers for the errors.
func (c *cache) AddIndexers(newIndexers Indexers) error {
	return c.storage.AddIndexers(newIndexers)
}

// Get returns the object stored under obj's key. It fails only with a KeyError.
func (c *cache) Get(obj interface{}) (item interface{}, exists bool, err error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return nil, false, KeyError{obj, err}
	}
	item, exists = c.storage.Get(key)
	return item, exists, nil
}

// GetByKey returns the object stored under key. The error is always nil.
func (c *cache) GetByKey(key string) (item interface{}, exists bool, err error) {
	item, exists = c.storage.Get(key)
	return item, exists, nil
}

// Replace makes list (transformed) the whole content and records resourceVersion. As in
// client-go, the first object whose key cannot be computed or whose transform fails aborts
// Replace with its error, and the store is unchanged. An object whose IndexFunc fails keeps
// its previous state (or stays absent) while the rest of the list is applied; the errors are
// returned joined.
//
// The new content and its indices are built before the store's lock is taken, so readers are
// not stalled by a relist.
func (c *cache) Replace(list []interface{}, resourceVersion string) error {
	keys := make([]string, len(list))
	objs := list
	if c.transformer != nil {
		// list is ours (see Store.Replace), but a failure must leave the caller's view of
		// it intact too, so transform into a copy.
		objs = make([]interface{}, len(list))
	}
	for i, item := range list {
		key, obj, err := c.keyAndTransform(item)
		if err != nil {
			return err
		}
		keys[i] = key
		objs[i] = obj
	}
	return c.storage.replace(keys, objs, resourceVersion)
}

// Resync does nothing for a plain store.
func (c *cache) Resync() error {
	return nil
}

// Transaction applies txns in order under one write lock. Keys are computed first; a
// transaction whose key cannot be computed is skipped with a KeyError, as is one whose
// IndexFunc fails or whose Type is unknown. The result is nil when every transaction was
// applied, and otherwise lists the applied positions and one error per skipped transaction.
// Objects are stored as given: Transaction does not apply the transformer (as in client-go,
// whose informers pass objects their queue has transformed already).
func (c *cache) Transaction(txns ...Transaction) *TransactionError {
	return c.transact(txns, nil)
}

// priorObject is what a key held just before a transaction was applied to it.
type priorObject struct {
	obj     interface{}
	existed bool
}

// transact is Transaction that, if prior is not nil (one entry per transaction), records in it
// what each applied add or update replaced. processDeltasInBatch uses it to tell adds from
// updates as the batch is stored: each key is computed once and the store locked once, where
// a Get before the Transaction would compute every key twice and lock twice.
func (c *cache) transact(txns []Transaction, prior []priorObject) *TransactionError {
	keyed := make([]ThreadSafeStoreTransaction, 0, len(txns))
	positions := make([]int, 0, len(txns))
	var keyErrs []error // by position in txns, allocated on the first error
	for i, txn := range txns {
		key, err := c.keyFunc(txn.Object)
		if err != nil {
			if keyErrs == nil {
				keyErrs = make([]error, len(txns))
			}
			keyErrs[i] = KeyError{txn.Object, err}
			continue
		}
		keyed = append(keyed, ThreadSafeStoreTransaction{Transaction: txn, Key: key})
		positions = append(positions, i)
	}
	var keyedPrior []priorObject
	if prior != nil {
		keyedPrior = prior
		if keyErrs != nil {
			keyedPrior = make([]priorObject, len(keyed))
		}
	}
	applyErrs := c.storage.transaction(keyed, keyedPrior)
	if keyErrs != nil && prior != nil {
		for j, i := range positions {
			prior[i] = keyedPrior[j]
		}
	}
	if keyErrs == nil && applyErrs == nil {
		return nil
	}
	// Merge both kinds of error back into batch order.
	txnErr := &TransactionError{SuccessfulIndices: []int{}, TotalTransactions: len(txns)}
	j := 0
	for i := range txns {
		if j < len(positions) && positions[j] == i {
			if applyErrs != nil && applyErrs[j] != nil {
				txnErr.Errors = append(txnErr.Errors, applyErrs[j])
			} else {
				txnErr.SuccessfulIndices = append(txnErr.SuccessfulIndices, i)
			}
			j++
			continue
		}
		txnErr.Errors = append(txnErr.Errors, keyErrs[i])
	}
	return txnErr
}
