// Package testing provides FakeControllerSource, an in-memory API server for one resource
// that controllers, informers and reflectors are tested against. Import it under another name,
// for example:
//
//	import fcache "github.com/kcache/cache/testing"
//
// It has the API of client-go's k8s.io/client-go/tools/cache/testing FakeControllerSource
// (NewFakeControllerSource, Add, Modify, Delete, the *DropWatch forms, Change, List, Watch,
// ResetWatch, Shutdown, ListError) and behaves like it, and adds what a reflector meets on a
// real server:
//
//   - resource versions: every change bumps an integer version, written into the stored
//     object; lists at "", "0", an exact or a not-older-than version; watches resume from any
//     retained version; Compact (like etcd compaction) makes older versions 410 Expired;
//   - paginated lists: Limit and continue tokens that read one consistent version, expire on
//     compaction, and come back as an inconsistent continue, as from etcd;
//   - streaming lists (SendInitialEvents) ending with the "k8s.io/initial-events-end"
//     bookmark, which can be switched off (SetWatchListSupported) like on older servers;
//   - bookmarks on demand (Bookmark), watch timeouts (TimeoutSeconds) on an injected clock;
//   - label selectors and field selectors on metadata.name and metadata.namespace (or any
//     fields through Options.FieldsFunc), on lists and watches, with the watch cache's
//     Added/Deleted events for objects that enter or leave the selection;
//   - faults: the next N lists or watches fail with any error (ExpiredError,
//     TooManyRequestsError, InternalError, ConnectionRefusedError), watches break mid-stream
//     (CloseWatches), Error events (InjectError) and malformed events (Inject) arrive, and a
//     RequestHook delays or fails requests;
//   - observation: Requests, NumWatchers, WaitForWatchers and WaitForRequests let a test wait
//     for a client instead of sleeping;
//   - a client: NewClient[L](src) has the List(ctx, options) (L, error) and Watch(ctx, options)
//     methods of client-go's typed, dynamic and metadata clients, and its Namespace method the
//     shape of clientset.CoreV1().Pods, so the source can stand in for a cluster in
//     cache.NewListWatch and the informers package.
//
// The source works with any runtime.Object that has metav1.Object metadata. It stores deep
// copies, and every List and every watch event hands out a fresh deep copy. Lists are
// *metav1.List by default; set Options.NewListFunc for a typed list such as
// *v1.ConfigMapList. Results are deterministic: lists and initial events are sorted by
// namespace, name and UID, and Change's probability draws from a seeded generator.
//
// Versions are numbered as in client-go's fake: the first change is version 1, and a source
// that has recorded nothing lists at version "0" (a real server never does). A Reflector that
// then watches from "0" gets the current state first, so it misses nothing.
//
// Where client-go's fake departs from a real server, this one follows the server: a watch at
// resourceVersion "" or "0" starts with the current state instead of failing, a watch from a
// future version waits for it, and lists are sorted rather than in map order. Bad input that
// client-go's fake panics on (a nil object, one without metadata) is logged and dropped, and
// Shutdown does not leave the source locked.
//
// client-go's FakePVControllerSource and FakePVCControllerSource are not provided: they need
// k8s.io/api, which kcache does not depend on. New(Options{NewListFunc: func() runtime.Object {
// return &v1.PersistentVolumeList{} }}) serves the same purpose. The exported Items and
// Broadcaster fields of client-go's source are not provided either: the source guards its
// state with its own lock (use List and Len), and it does not use a watch.Broadcaster, whose
// full queue blocks the writer.
//
// The package does not import github.com/kcache/cache, so that package's own tests can use it.
package testing
