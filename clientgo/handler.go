package clientgo

import (
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache"
)

// eventHandler delivers a kcache informer's notifications to a client-go handler. Objects pass
// through unchanged; only kcache's tombstone becomes client-go's, which controller-runtime and
// most handlers type-assert.
type eventHandler struct {
	handler toolscache.ResourceEventHandler
}

// OnAdd implements cache.ResourceEventHandler.
func (h eventHandler) OnAdd(obj interface{}, isInInitialList bool) {
	h.handler.OnAdd(obj, isInInitialList)
}

// OnUpdate implements cache.ResourceEventHandler.
func (h eventHandler) OnUpdate(oldObj, newObj interface{}) {
	h.handler.OnUpdate(oldObj, newObj)
}

// OnDelete implements cache.ResourceEventHandler.
func (h eventHandler) OnDelete(obj interface{}) {
	h.handler.OnDelete(toClientGoTombstone(obj))
}

// toClientGoTombstone returns kcache's DeletedFinalStateUnknown as client-go's (the same key
// and the same object, not a copy) and anything else unchanged.
func toClientGoTombstone(obj interface{}) interface{} {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return toolscache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	}
	return obj
}

// toKcacheTombstone returns client-go's DeletedFinalStateUnknown as kcache's and anything else
// unchanged, so that kcache's key function reads a client-go tombstone's key (as client-go's,
// it reads the value type only).
func toKcacheTombstone(obj interface{}) interface{} {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	}
	return obj
}

// registration is the handle AddEventHandler returns: kcache's registration behind client-go's
// interface, with the ShutdownChan method client-go's ShutDownEventHandler waits on.
type registration struct {
	inner cache.ResourceEventHandlerRegistration
}

var _ toolscache.ResourceEventHandlerRegistration = (*registration)(nil)

// HasSynced implements toolscache.ResourceEventHandlerRegistration: true once the informer has
// synced and the handler has processed every notification of the initial list.
func (r *registration) HasSynced() bool { return r.inner.HasSynced() }

// HasSyncedChecker implements toolscache.ResourceEventHandlerRegistration.
func (r *registration) HasSyncedChecker() toolscache.DoneChecker { return r.inner.HasSyncedChecker() }

// ShutdownChan returns a channel that is closed once the handler has stopped: it was removed
// (or the informer stopped) and its last callback has returned. client-go's
// ShutDownEventHandler waits on it.
func (r *registration) ShutdownChan() <-chan struct{} {
	return r.inner.(interface{ ShutdownChan() <-chan struct{} }).ShutdownChan()
}
