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
