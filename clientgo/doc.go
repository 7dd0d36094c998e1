// Package clientgo runs code written for client-go's informers on kcache. A controller-runtime
// user writes one line, in the cache options of the manager:
//
//	ctrl.Options{Cache: cache.Options{NewInformer: clientgo.NewSharedIndexInformer}}
//
// and every informer of the manager's cache is a kcache informer behind client-go's
// k8s.io/client-go/tools/cache interfaces: SharedIndexInformer, Indexer, handler registrations
// and tombstones are client-go's types, so controllers, sources, predicates and cache readers
// keep working unchanged. NewInformerFunc gives the same constructor with kcache's extensions
// turned on for every handler (Options: a default MaxPending, contained panics) and, with
// Options.Compact, a cache that keeps objects encoded. Code built on
// client-go's generated informer factories registers a bridge informer per type with
// factory.InformerFor (package generated), after which the generated listers read kcache's
// cache. Unwrap returns the kcache informer behind a bridge informer.
//
// The bridge copies no object: the objects handlers receive and the cache returns are the
// objects kcache holds (with Options.Compact, the cache's reads return decoded copies, see
// cache.WithCompactStorage). What it converts:
//   - kcache's DeletedFinalStateUnknown (from a watch delete whose object was missed, from a
//     relist, or from MaxPending's coalescing) reaches client-go handlers as client-go's
//     DeletedFinalStateUnknown with the same Key and Obj; a client-go tombstone given to the
//     Indexer (Delete, Get, Index) is keyed as client-go keys it;
//   - client-go's HandlerOptions (Logger, ResyncPeriod), Indexers, TransformFunc and watch
//     error handlers to kcache's;
//   - kcache's handler registrations to client-go's ResourceEventHandlerRegistration, with the
//     ShutdownChan method client-go's ShutDownEventHandler waits on;
//   - metrics: a reserved client-go Identifier and its InformerMetricsProvider.
//
// Seen through the bridge, a kcache informer behaves like client-go's, with kcache's
// documented differences (MIGRATING.md) and these:
//   - A watch error handler (SetWatchErrorHandler, SetWatchErrorHandlerWithContext) is given a
//     client-go Reflector that stands for kcache's: it has the name and type description of
//     the Reflector that failed, but it never runs, so its other state (for example
//     LastSyncResourceVersion) is empty.
//   - Options.InformerMetricsProvider nil means kcache's global provider
//     (cache.SetInformerMetricsProvider), not client-go's, which code outside client-go cannot
//     read.
//   - Handler names in kcache's logs and handler metrics are the bridge's adapter type, not the
//     handler's own type.
//   - GetIndexer().GetIndexers() returns a new map on every call; changing it changes nothing
//     (client-go returns its internal map).
//   - RemoveEventHandler of a handle that no bridge informer returned is an error naming its
//     type, as client-go's is for a handle it did not return.
//   - Options (a kcache extension) are off by default; with them on, handlers behave as
//     cache.HandlerOptions.MaxPending and ContainPanics describe, and a compact cache as
//     cache.WithCompactStorage describes.
package clientgo
