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
//	  (listwatch.go)               (reflector*.go, pager/)                           (real_fifo.go; delta_fifo.go)
//	                                                                                     │ Pop / PopBatch
//	                                                                                     ▼
//	                      controller.processLoop (controller.go) ── processDeltas ──▶ Indexer (store.go)
//	                                                                  │                 └ ThreadSafeStore + indices
//	                                                                  ▼                   (thread_safe_store.go, index.go)
//	                                        sharedProcessor.distribute (shared_processor.go)
//	                                                │ one processorListener per handler
//	                                                ▼ (processor_listener.go)
//	                                      ResourceEventHandler.OnAdd/OnUpdate/OnDelete (event_handlers.go)
//	                                                │ typically enqueue keys
//	                                                ▼
//	                                 workqueue (workqueue/): plain ⊂ delaying ⊂ rate-limited
//
// A [ListerWatcher] lists and watches one resource. A [Reflector] keeps a [ReflectorStore] in
// step with it: it lists (or streams the initial list), then watches from the list's resource
// version, and relists when the watch can no longer be resumed. Informers put a queue between
// the Reflector and the [Indexer] so that handlers see every change in order, and a
// SharedIndexInformer fans each change out to any number of handlers, each with its own buffer.
//
// # Storage
//
// [Store] and [Indexer] are thread-safe maps keyed by a [KeyFunc], normally
// [MetaNamespaceKeyFunc] ("namespace/name", or "name" for cluster-scoped objects). An Indexer
// also keeps secondary indices computed by [IndexFunc]s, such as [MetaNamespaceIndexFunc].
// Objects handed out by a Store are shared with the cache: callers must not modify them.
package cache
