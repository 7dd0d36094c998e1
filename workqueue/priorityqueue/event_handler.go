package priorityqueue

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
)

// EventHandler is a cache.ResourceEventHandler that enqueues object keys into a
// PriorityQueue so that real changes are reconciled before bookkeeping: the adds of an
// informer's initial list and updates whose resourceVersion did not change (resyncs, relists
// of an unchanged object) go in at LowPriority, every other add, update and delete at
// priority 0. Register it with an informer's AddEventHandler. kcache extension, the
// counterpart of controller-runtime's handler with priority.
//
// Its methods are safe for concurrent use; it does not block beyond the queue's lock.
type EventHandler struct {
	// Queue receives the keys. Events are ignored while it is nil.
	Queue PriorityQueue[string]
	// KeyFunc turns an object into its key. Defaults to
	// cache.DeletionHandlingMetaNamespaceKeyFunc, which also unwraps tombstones.
	KeyFunc cache.KeyFunc
	// LowPriority is the priority of initial-list adds and unchanged updates. Defaults to
	// the package's LowPriority (-100) if nil.
	LowPriority *int
	// OnError is called with an object whose key cannot be computed; the object is not
	// enqueued. Defaults to logging the error with klog.
	OnError func(obj interface{}, err error)
}

var _ cache.ResourceEventHandler = (*EventHandler)(nil)

// NewEventHandler returns an EventHandler that feeds q with the default key function.
func NewEventHandler(q PriorityQueue[string]) *EventHandler {
	return &EventHandler{Queue: q}
}

// OnAdd enqueues obj's key, at low priority if the add is part of the initial list.
func (h *EventHandler) OnAdd(obj interface{}, isInInitialList bool) {
	h.enqueue(obj, isInInitialList)
}

// OnUpdate enqueues newObj's key, at low priority if both objects have the same non-empty
// resourceVersion (a resync or a relist that found no change).
func (h *EventHandler) OnUpdate(oldObj, newObj interface{}) {
	h.enqueue(newObj, sameResourceVersion(oldObj, newObj))
}

// OnDelete enqueues obj's key (tombstones included) at priority 0.
func (h *EventHandler) OnDelete(obj interface{}) {
	h.enqueue(obj, false)
}

func (h *EventHandler) enqueue(obj interface{}, low bool) {
	if h == nil || h.Queue == nil {
		return
	}
	keyFunc := h.KeyFunc
	if keyFunc == nil {
		keyFunc = cache.DeletionHandlingMetaNamespaceKeyFunc
	}
	key, err := keyFunc(obj)
	if err != nil {
		if h.OnError != nil {
			h.OnError(obj, err)
		} else {
			klog.Background().Error(err, "priorityqueue: cannot enqueue object", "type", fmt.Sprintf("%T", obj))
		}
		return
	}
	if !low {
		h.Queue.Add(key)
		return
	}
	p := LowPriority
	if h.LowPriority != nil {
		p = *h.LowPriority
	}
	h.Queue.AddWithOpts(AddOpts{Priority: &p}, key)
}

// sameResourceVersion reports whether both objects have metadata and the same non-empty
// resourceVersion.
func sameResourceVersion(oldObj, newObj interface{}) bool {
	o, err := meta.Accessor(oldObj)
	if err != nil {
		return false
	}
	n, err := meta.Accessor(newObj)
	if err != nil {
		return false
	}
	rv := n.GetResourceVersion()
	return rv != "" && rv == o.GetResourceVersion()
}
