// Package ctrlclient gives controller-runtime's client read-your-writes on a kcache cache: a
// client.Client that records the resourceVersion of every write it makes and, before a cached
// Get or List of that kind, waits until the kcache informer serving the read has processed that
// version into its store. A reconciler that updates an object and reads it back then never gets
// the state from before its own write.
//
// Switch it on with one line in the manager's options, next to the kcache informers:
//
//	mgr, err := ctrl.NewManager(config, ctrl.Options{
//		Cache:     cache.Options{NewInformer: clientgo.NewSharedIndexInformer},
//		NewClient: ctrlclient.NewClient(ctrlclient.Options{}),
//	})
//
// The wait is exact, not timed: it ends as soon as the informer has processed the version (see
// cache.ResourceVersionWaiter in the kcache module), with no polling and no TTL. It is bounded by
// Options.Timeout; a read whose wait times out is returned as it is and counted (Stats), or
// fails with ErrCacheBehind if Options.ErrorOnTimeout is set.
//
// What is recorded, per GroupVersionKind (whatever the representation — typed, unstructured,
// metadata — since versions belong to the kind):
//
//   - Create, Update, Patch, Apply and the Update, Patch and Apply of a subresource (Status()):
//     the resourceVersion the server returned.
//   - Delete: the object (its key, and its UID if the object, the delete preconditions or the
//     cache know it); a later read waits until the cache no longer holds that object, or holds
//     it marked for deletion (an object with finalizers stays, with a deletionTimestamp). The
//     deletion's own resourceVersion is not available: controller-runtime's client does not
//     return it.
//   - DeleteAllOf: every object of the kind the cache holds that the namespace and label
//     selector match, as a Delete each. With a field selector nothing is recorded.
//   - Subresource Create (eviction, token) records nothing: it returns no version of the object.
//
// Which reads wait: a Get or List of a kind this client wrote, served by a kcache informer of
// the manager's cache (clientgo.Unwrap finds it). A Get waits for the newest version written to
// the kind and for the pending delete of its key; a List for the newest version and every
// pending delete of the kind. Reads of kinds never written, reads that do not go to the cache
// (client.CacheOptions.DisableFor, unstructured objects unless CacheOptions.Unstructured), and
// reads served by an informer that is not kcache's (client-go's, or controller-runtime's
// per-namespace informer when the cache has several namespaces for the kind) pass through
// untouched.
//
// controller-runtime v0.25 has an experimental option with the same goal
// (client.CacheOptions.EnableReadYourWritesConsistency) that learns what the cache has seen from
// an event handler; this package asks the kcache informer itself, which also counts bookmarks
// and relists, and adds nothing to the informer's handlers.
package ctrlclient
