package cache

import (
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utiltrace "k8s.io/utils/trace"
)

// Transaction applies txns in order under one write lock and records the resource version of
// the last applied transaction's object. Index values are computed before the lock is taken.
// A transaction whose IndexFunc fails, or whose Type is unknown, is skipped (the store is left
// as it was for that key) and reported through utilruntime.HandleError.
func (c *threadSafeMap) Transaction(txns ...ThreadSafeStoreTransaction) {
	for _, err := range c.transaction(txns, nil) {
		if err != nil {
			utilruntime.HandleError(err)
		}
	}
}

// transaction is Transaction returning, when some transactions were skipped, one entry per
// transaction: nil for an applied one, the reason for a skipped one. If prior is not nil (it
// has one entry per transaction), each applied add or update records there what its key held
// just before it (see priorObject).
func (c *threadSafeMap) transaction(txns []ThreadSafeStoreTransaction, prior []priorObject) []error {
	if len(txns) == 0 {
		return nil
	}
	set := c.indexers.Load()
	vals := make([][][]string, len(txns))
	var stored []interface{} // in a compact store, the entries of the adds and updates
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(txns))
		}
		errs[i] = err
	}
	for i, txn := range txns {
		switch txn.Type {
		case TransactionTypeAdd, TransactionTypeUpdate:
			v, err := set.values(txn.Key, txn.Object, 0)
			if err != nil {
				fail(i, err)
			}
			vals[i] = v
			if c.compact != nil && err == nil {
				if stored == nil {
					stored = make([]interface{}, len(txns))
				}
				if stored[i], err = c.compact.encode(txn.Object); err != nil {
					fail(i, fmt.Errorf("cache: key %q: %w", txn.Key, err))
				}
			}
		case TransactionTypeDelete:
		default:
			fail(i, fmt.Errorf("cache: unknown transaction type %q for key %q", txn.Type, txn.Key))
		}
	}
	// The resource version comes from the last transaction that will be applied.
	var rv string
	var hasRV bool
	for i := len(txns) - 1; i >= 0; i-- {
		if errs == nil || errs[i] == nil {
			rv, hasRV = rvFromObject(txns[i].Object)
			break
		}
	}

	c.afterUnlockedWork()

	trace := utiltrace.New("ThreadSafeMap Transaction Process",
		utiltrace.Field{Key: "Size", Value: len(txns)},
		utiltrace.Field{Key: "Reason", Value: "Slow batch process due to too many items"})
	defer trace.LogIfLong(min(500*time.Millisecond*time.Duration(len(txns)), 5*time.Second))

	// The lock is released before old objects are decoded, and by a deferred call, as index
	// functions may run under it (see catchUpLocked).
	func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, txn := range txns {
			if errs != nil && errs[i] != nil {
				continue
			}
			switch txn.Type {
			case TransactionTypeAdd, TransactionTypeUpdate:
				v, err := c.catchUpLocked(set, txn.Key, txn.Object, vals[i])
				if err != nil {
					// Only possible when AddIndexers ran meanwhile; the resource version has
					// been chosen already and is still recorded.
					fail(i, err)
					continue
				}
				obj := txn.Object
				if stored != nil {
					obj = stored[i]
				}
				old, existed := c.state.put(txn.Key, obj, v)
				if prior != nil {
					prior[i] = priorObject{obj: old, existed: existed}
				}
			case TransactionTypeDelete:
				c.state.remove(txn.Key)
			}
		}
		c.gen++
		if hasRV {
			c.setRVLocked(rv)
		}
	}()
	if c.compact != nil {
		for i, txn := range txns {
			if stored != nil && stored[i] != nil && (errs == nil || errs[i] == nil) {
				c.compact.remember(stored[i], txn.Object)
			}
			if prior != nil && prior[i].existed {
				prior[i].obj = c.compact.decode(prior[i].obj)
			}
		}
	}
	return errs
}
