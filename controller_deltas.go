package cache

import (
	"errors"
	"fmt"

	"k8s.io/klog/v2"
)

// processDeltas applies deltas, oldest first, to clientState and tells handler about each
// change — the consumer side of an informer's queue:
//
//   - Added, Updated, Replaced, Sync: an object already stored is updated and reported with
//     OnUpdate(old, new); otherwise it is added and reported with OnAdd(obj, isInInitialList).
//   - Deleted: the object is deleted and reported with OnDelete(obj) (obj may be a
//     DeletedFinalStateUnknown).
//   - ReplacedAll: see processReplacedAllInfo.
//   - SyncAll: OnUpdate(obj, obj) for every stored object.
//   - Bookmark: the store records the resource version.
//
// It stops at the first store error, or at a delta whose Object does not match its type.
// Unlike client-go, which ignores unknown delta types, it reports them as errors. keyFunc
// must be clientState's key function.
func processDeltas(
	logger klog.Logger,
	handler ResourceEventHandler,
	clientState Store,
	deltas Deltas,
	isInInitialList bool,
	keyFunc KeyFunc,
) error {
	for _, d := range deltas {
		obj := d.Object
		switch d.Type {
		case Added, Updated, Replaced, Sync:
			if old, exists, err := clientState.Get(obj); err == nil && exists {
				if err := clientState.Update(obj); err != nil {
					return err
				}
				handler.OnUpdate(old, obj)
			} else {
				if err := clientState.Add(obj); err != nil {
					return err
				}
				handler.OnAdd(obj, isInInitialList)
			}
		case Deleted:
			if err := clientState.Delete(obj); err != nil {
				return err
			}
			handler.OnDelete(obj)
		case ReplacedAll:
			info, ok := obj.(ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll did not contain ReplacedAllInfo: %T", obj)
			}
			if err := processReplacedAllInfo(logger, handler, info, clientState, isInInitialList, keyFunc); err != nil {
				return err
			}
		case SyncAll:
			if _, ok := obj.(SyncAllInfo); !ok {
				return fmt.Errorf("SyncAll did not contain SyncAllInfo: %T", obj)
			}
			for _, o := range clientState.List() {
				handler.OnUpdate(o, o)
			}
		case Bookmark:
			info, ok := obj.(BookmarkInfo)
			if !ok {
				return fmt.Errorf("bookmark delta did not contain BookmarkInfo: %T", obj)
			}
			clientState.Bookmark(info.ResourceVersion)
		default:
			return fmt.Errorf("cache: unknown delta type %q", d.Type)
		}
	}
	return nil
}

// batchEvent is a handler call that processDeltasInBatch makes once the batch is stored.
type batchEvent struct {
	typ DeltaType // Added (OnAdd), Updated (OnUpdate) or Deleted (OnDelete)
	old interface{}
	obj interface{}
}

// processDeltasInBatch applies a batch of deltas of distinct objects, like processDeltas.
//
// If clientState is a TransactionStore, the batch is applied in one transaction (so readers
// of the store wait once, not once per delta) and the handler is called afterwards, in batch
// order, for the transactions that succeeded; a failed transaction makes it return an error
// wrapping the TransactionError. A delta is an update when the store held its key: this
// package's stores tell as the transaction applies it (each key is computed once), any other
// store is asked with Get first, as client-go does. Only Added, Updated, Replaced, Sync and Deleted deltas may be
// batched; any other type fails the whole batch before anything is applied.
//
// Otherwise every delta goes through processDeltas, and the errors are joined.
func processDeltasInBatch(
	logger klog.Logger,
	handler ResourceEventHandler,
	clientState Store,
	deltas []Delta,
	isInInitialList bool,
	keyFunc KeyFunc,
) error {
	txnStore, ok := clientState.(TransactionStore)
	if !ok {
		var errs []error
		for i := range deltas {
			if err := processDeltas(logger, handler, clientState, deltas[i:i+1], isInInitialList, keyFunc); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("unexpected error when handling deltas: %w", errors.Join(errs...))
		}
		return nil
	}

	txns := make([]Transaction, len(deltas))
	events := make([]batchEvent, len(deltas))
	// This package's stores say what each transaction replaced as they apply it; any other
	// store is asked first, as client-go does.
	pt, reportsPrior := clientState.(*cache) // this package's Store or Indexer (see cache.transact)
	for i, d := range deltas {
		switch d.Type {
		case Added, Updated, Replaced, Sync:
			if reportsPrior {
				// An add or an update: the transaction tells which.
				txns[i] = Transaction{Type: TransactionTypeUpdate, Object: d.Object}
				events[i] = batchEvent{typ: Updated, obj: d.Object}
			} else if old, exists, err := clientState.Get(d.Object); err == nil && exists {
				txns[i] = Transaction{Type: TransactionTypeUpdate, Object: d.Object}
				events[i] = batchEvent{typ: Updated, old: old, obj: d.Object}
			} else {
				txns[i] = Transaction{Type: TransactionTypeAdd, Object: d.Object}
				events[i] = batchEvent{typ: Added, obj: d.Object}
			}
		case Deleted:
			txns[i] = Transaction{Type: TransactionTypeDelete, Object: d.Object}
			events[i] = batchEvent{typ: Deleted, obj: d.Object}
		default:
			return fmt.Errorf("Delta type %s is not supported in batch processing", d.Type)
		}
	}
	notify := func(e batchEvent) {
		switch e.typ {
		case Added:
			handler.OnAdd(e.obj, isInInitialList)
		case Updated:
			handler.OnUpdate(e.old, e.obj)
		case Deleted:
			handler.OnDelete(e.obj)
		}
	}
	var txnErr *TransactionError
	if reportsPrior {
		prior := make([]priorObject, len(deltas))
		txnErr = pt.transact(txns, prior)
		for i := range events {
			if events[i].typ != Updated {
				continue
			}
			if prior[i].existed {
				events[i].old = prior[i].obj
			} else {
				events[i].typ = Added
			}
		}
	} else {
		txnErr = txnStore.Transaction(txns...)
	}
	if txnErr != nil {
		for _, i := range txnErr.SuccessfulIndices {
			if i >= 0 && i < len(events) {
				notify(events[i])
			}
		}
		return fmt.Errorf("not all items in the batch successfully processed: %w", txnErr)
	}
	for _, e := range events {
		notify(e)
	}
	return nil
}
