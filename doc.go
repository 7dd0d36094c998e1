// Package cache is a standalone implementation of the Kubernetes client-go cache stack: the
// machinery that lists and watches objects from an API server, keeps an indexed local copy of
// them and tells event handlers what changed.
//
// It is source-compatible with k8s.io/client-go/tools/cache v0.37.2 and behaves like it with
// client-go's default feature gates, so a program switches to it by changing its import paths.
// It depends only on k8s.io/apimachinery, k8s.io/klog/v2, k8s.io/utils and golang.org/x/time.
//
// # Typed API
//
// New code should use the typed API. [NewTypedSharedIndexInformer] gives a shared informer
// type-safe methods for its object type T (typically a pointer such as *v1.Pod): handlers
// registered with [TypedSharedIndexInformer.AddTypedEventHandler] implement
// [TypedResourceEventHandler] (or use [TypedResourceEventHandlerFuncs]) and receive T instead
// of interface{}; deletions arrive as a [DeletedObject], whose GetKey and GetObjectName work
// whether the deletion was seen on the watch or detected on a relist (a tombstone). Typed index
// functions ([TypedIndexers]) and [TypedIndexer] queries work on T, and package
// github.com/kcache/cache/listers lists and gets T from an informer's indexer:
//
//	informer := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(
//		lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))
//	registration, err := informer.AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*v1.Pod]{
//		AddFunc:    func(pod *v1.Pod) { queue.Add(cache.MetaObjectToName(pod)) },
//		UpdateFunc: func(_, pod *v1.Pod) { queue.Add(cache.MetaObjectToName(pod)) },
//		DeleteFunc: func(deleted cache.DeletedObject[*v1.Pod]) { queue.Add(deleted.GetObjectName()) },
//	})
//	go informer.RunWithContext(ctx)
//	cache.WaitFor(ctx, "pods", informer.HasSyncedChecker(), registration.HasSyncedChecker())
//	pods := listers.New[*v1.Pod](informer.GetIndexer(), v1.Resource("pods"))
//
// Where client-go panics on an object that is not a T, kcache reports an error naming both
// types and skips that notification (or returns the error from an index function, a typed
// indexer query or a lister). The untyped API ([SharedInformer.AddEventHandler],
// [ResourceEventHandlerFuncs], [Indexer]) is the layer the typed one is built on, and remains
// fully available.
//
// # Data flow
//
// One object travels through these pieces, each in its own file:
//
//	ListerWatcher ──list/watch──▶ Reflector ──Add/Update/Delete/Replace/Bookmark──▶ RealFIFO (Queue)
//	  (listwatch.go)               (reflector*.go, pager/)              (queue.go, real_fifo*.go; delta_fifo.go)
//	                                                                                     │ Pop / PopBatch
//	                                                                                     ▼
//	                      controller.processLoop (controller.go) ── processDeltas ──▶ Indexer (store.go)
//	                                           (controller_deltas.go) │                 └ ThreadSafeStore + indices
//	                                                                  ▼                   (thread_safe_store*.go, index.go)
//	                                        sharedProcessor.distribute (shared_processor.go)
//	                                                │ one processorListener per handler
//	                                                ▼ (processor_listener.go, notification_buffer.go)
//	                                      ResourceEventHandler.OnAdd/OnUpdate/OnDelete (event_handlers.go)
//	                                                │ typically enqueue keys
//	                                                ▼
//	                                 workqueue (workqueue/): plain ⊂ delaying ⊂ rate-limited
//
// The relist path (see Relists below) runs beside it through relist_queue.go (Reflector and
// queue), relist_store.go (Indexer) and relist_notify.go (processDeltas to the handlers).
//
// A [ListerWatcher] lists and watches one resource. A [Reflector] keeps a [ReflectorStore] in
// step with it: it lists (or streams the initial list), then watches from the list's resource
// version, and relists when the watch can no longer be resumed. Informers put a queue between
// the Reflector and the [Indexer] so that handlers see every change in order, and a
// SharedIndexInformer fans each change out to any number of handlers, each with its own buffer.
//
// # Relists
//
// A Reflector lists again (relists) when its watch cannot be resumed, and an informer then
// hands its store the whole list at once (a ReplacedAll delta). kcache does this with less
// memory and a shorter write lock than client-go, and handlers see the same notifications. The
// path runs through three files, in data-flow order:
//
//   - relist_queue.go, the Reflector and the queue: as the list arrives (LIST page by LIST
//     page, or event by event of a streaming watch-list), an informer's queue looks each object
//     up in the informer's store and gives the Reflector the cached object instead when the
//     resourceVersion is unchanged, so a relist holds the cache plus what changed, not a second
//     copy of every object; the queue then skips the transform of the cached objects.
//   - relist_store.go, the Indexer: the list is applied as the difference it makes, computed
//     without the lock; the write lock is held only for the objects that changed.
//   - relist_notify.go, the handlers: processDeltas reports that difference (the deletions,
//     then every listed object in list order), and a shared informer queues the adds of a
//     relist into an empty store, such as the initial list, as one element per handler.
//
// Two unexported interfaces join these steps, because what the Reflector writes to is a
// ReflectorStore that may be any type, and only this package's queues can take part:
//
//   - relistDeduper (relist_queue.go), asked by the Reflector of its store: implemented by
//     RealFIFO and DeltaFIFO when an informer has given them its store. Any other store gets
//     the list as client-go gives it.
//   - transformedReplacer (reflector_watchlist.go): a store whose transform the Reflector
//     already ran on a streaming watch-list's objects as it buffered them, so that each object
//     is transformed once. RealFIFO and DeltaFIFO implement it.
//
// The other joins are direct calls on this package's types: the Indexer's applyRelist when
// the informer's store is this package's, and the shared informer's onAddRun when the handler
// is a shared informer; with a store or handler of another type, processDeltas falls back to
// Replace and one call per object, as in client-go.
//
// # Storage
//
// [Store] and [Indexer] are thread-safe maps keyed by a [KeyFunc], normally
// [MetaNamespaceKeyFunc] ("namespace/name", or "name" for cluster-scoped objects). An Indexer
// also keeps secondary indices computed by [IndexFunc]s, such as [MetaNamespaceIndexFunc].
// Objects handed out by a Store are shared with the cache: callers must not modify them.
package cache
