package cache

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/features"
)

// defaultExpectedTypeName is the type description of a Reflector built without an expected type.
const defaultExpectedTypeName = "<unspecified>"

// Watch requests carry a random timeout in [minWatchTimeout, 2·minWatchTimeout] so that the
// watches of many clients do not all end, and get re-established, at the same moment.
const defaultMinWatchTimeout = 5 * time.Minute

// Reflector keeps a store in step with a resource on an API server: it lists the resource (or
// streams the initial list through a watch-list), hands the result to the store's Replace, then
// watches from the list's resource version and turns each watch event into an Add, Update,
// Delete or Bookmark on the store. When the watch ends it resumes from the last resource version
// it saw, and lists again only when that is no longer possible.
//
// Create it with NewReflector, NewNamedReflector or NewReflectorWithOptions; the zero value is
// not usable. The exported fields may be set after construction and before Run; they must not be
// changed while it runs. The methods are safe for concurrent use.
type Reflector struct {
	// name identifies the reflector in logs and metrics.
	name string
	// typeDescription is what the reflector lists, for humans only.
	typeDescription string
	// expectedType, when not nil, is the only Go type of object the store receives from watches.
	expectedType reflect.Type
	// expectedGVK, when not nil, is the only GroupVersionKind the store receives from watches
	// (set for an expected type of *unstructured.Unstructured that carries apiVersion and kind).
	expectedGVK *schema.GroupVersionKind

	store         ReflectorStore
	listerWatcher ListerWatcherWithContext
	// chunkingDisabled is true when the ListerWatcher is a ListWatch with DisableChunking.
	chunkingDisabled bool
	// useWatchList says whether ListAndWatch first tries a streaming watch-list.
	useWatchList bool

	resyncPeriod    time.Duration
	minWatchTimeout time.Duration
	maxWatchTimeout time.Duration
	clock           clock.Clock
	// delayHandler returns the next backoff delay (shared by the run loop and the watch retries).
	delayHandler wait.DelayFunc

	// logger is the logger given in ReflectorOptions, named after the reflector; when
	// hasLogger is false the context's logger is used instead.
	logger    klog.Logger
	hasLogger bool

	metrics *reflectorMetrics
	// status, when not nil, reports to InformerStatuses (an informer's Reflector only).
	status *reflectorStatus

	// watchErrorHandler receives the error of every ListAndWatch round that failed. The
	// informer machinery replaces it.
	watchErrorHandler WatchErrorHandlerWithContext

	// paginatedResult is set when the first LIST (at resource version "0") came back in pages:
	// the server then does not serve lists from its watch cache, and later lists keep paging.
	// It is only touched by the goroutine running ListAndWatch.
	paginatedResult bool

	// rvMu guards lastSyncResourceVersion and isLastSyncResourceVersionUnavailable.
	rvMu sync.RWMutex
	// lastSyncResourceVersion is the newest resource version the store is known to reflect.
	lastSyncResourceVersion string
	// isLastSyncResourceVersionUnavailable is set when the server said the last resource
	// version is too old (410 Expired/Gone) or too new (ResourceVersionTooLarge).
	isLastSyncResourceVersionUnavailable bool

	// WatchListPageSize is the page size of LIST requests. When 0 the Reflector pages in 500s
	// for lists at resource version "" or "0" (and for every list once the server has answered
	// a "0" list in pages), and does not page lists at a specific resource version so that the
	// server can answer them from its watch cache. A ListWatch with DisableChunking is never
	// paged. Paginated lists are served from etcd; set this with care.
	WatchListPageSize int64

	// ShouldResync is consulted every resync period; when it returns true (or is nil) the
	// store's Resync is called.
	ShouldResync func() bool

	// MaxInternalErrorRetryDuration is how long the Reflector keeps re-establishing a watch that
	// fails with an internal server error (500) before it relists. 0 (the default) means it
	// relists at the first internal error.
	MaxInternalErrorRetryDuration time.Duration
}

// ReflectorOptions configures a Reflector. Every field is optional.
type ReflectorOptions struct {
	// Logger is used for the reflector's logs instead of the logger in the context passed to
	// RunWithContext or ListAndWatchWithContext (klog.Background() when there is none). The
	// reflector's name is added to it.
	Logger *klog.Logger

	// Name identifies the reflector in logs and metrics. Defaults to the file:line of the
	// closest caller outside this package.
	Name string

	// TypeDescription describes what the reflector lists, for logs. Defaults to "<unspecified>"
	// when expectedType is nil, to the apiVersion/kind of an expected *unstructured.Unstructured
	// that has them, and otherwise to the Go type of expectedType.
	TypeDescription string

	// ResyncPeriod is how often the store's Resync is called (subject to ShouldResync).
	// Defaults to 0: never.
	ResyncPeriod time.Duration

	// MinWatchTimeout is the shortest timeout requested for a watch; each watch asks for a
	// random timeout between it and twice it. Values under 5 minutes (the default) are raised
	// to 5 minutes, to protect the control plane.
	MinWatchTimeout time.Duration

	// Clock is the source of time for backoff, resync and timeouts. Defaults to
	// clock.RealClock{}.
	Clock clock.Clock

	// Backoff replaces the default backoff between failed rounds and between watch retries:
	// 800ms doubling (with jitter up to 100%) to a cap of 30s. Either way the backoff returns
	// to its start after 2 minutes.
	Backoff *wait.Backoff
}

// NewReflector returns a Reflector that keeps store in step with what lw lists and watches. Its
// name is the file:line of the closest caller outside this package. See NewReflectorWithOptions.
func NewReflector(lw ListerWatcher, expectedType interface{}, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{ResyncPeriod: resyncPeriod})
}

// NewNamedReflector is NewReflector with an explicit name.
func NewNamedReflector(name string, lw ListerWatcher, expectedType interface{}, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{Name: name, ResyncPeriod: resyncPeriod})
}

// NewReflectorWithOptions returns a Reflector that keeps store in step with what lw lists and
// watches.
//
// When expectedType is not nil, objects of any other Go type arriving on a watch are logged and
// dropped; when it is an *unstructured.Unstructured with apiVersion and kind set, objects of any
// other GroupVersionKind are dropped too. Objects in a LIST result are not checked.
//
// The Reflector tries a streaming watch-list first unless the WatchListClient feature gate is
// off or lw reports that its client cannot serve one (see
// ToListWatcherWithWatchListSemantics).
func NewReflectorWithOptions(lw ListerWatcher, expectedType interface{}, store ReflectorStore, options ReflectorOptions) *Reflector {
	c := options.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	minWatchTimeout := defaultMinWatchTimeout
	if options.MinWatchTimeout > minWatchTimeout {
		minWatchTimeout = options.MinWatchTimeout
	}
	backoff := defaultReflectorBackoff()
	if options.Backoff != nil {
		backoff = *options.Backoff
	}

	r := &Reflector{
		name:              options.Name,
		typeDescription:   options.TypeDescription,
		expectedType:      reflect.TypeOf(expectedType),
		expectedGVK:       expectedGVKOf(expectedType),
		store:             store,
		listerWatcher:     ToListerWatcherWithContext(lw),
		chunkingDisabled:  listWatchDisablesChunking(lw),
		resyncPeriod:      options.ResyncPeriod,
		minWatchTimeout:   minWatchTimeout,
		maxWatchTimeout:   2 * minWatchTimeout,
		clock:             c,
		delayHandler:      backoff.DelayWithReset(c, defaultBackoffReset),
		watchErrorHandler: DefaultWatchErrorHandler,
	}
	if r.name == "" {
		r.name = defaultReflectorName()
	}
	if r.typeDescription == "" {
		r.typeDescription = typeDescriptionOf(expectedType)
	}
	r.logger = klog.Background()
	if options.Logger != nil {
		r.logger = *options.Logger
		r.hasLogger = true
	}
	r.logger = klog.LoggerWithName(r.logger, r.name)
	r.metrics = newReflectorMetrics(r.name)

	r.useWatchList = features.Enabled(features.WatchListClient)
	if r.useWatchList && doesClientNotSupportWatchListSemantics(lw) {
		r.logger.V(2).Info("The client used to build this informer/reflector doesn't support WatchList semantics. The feature will be disabled. This is expected in unit tests but not in production.",
			"feature", features.WatchListClient)
		r.useWatchList = false
	}
	return r
}

// NewNamespaceKeyedIndexerAndReflector returns an Indexer keyed by MetaNamespaceKeyFunc, with a
// NamespaceIndex, and a Reflector that fills it from lw.
func NewNamespaceKeyedIndexerAndReflector(lw ListerWatcher, expectedType interface{}, resyncPeriod time.Duration) (indexer Indexer, reflector *Reflector) {
	indexer = NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	return indexer, NewReflector(lw, expectedType, indexer, resyncPeriod)
}

// typeDescriptionOf is the default TypeDescription for expectedType.
func typeDescriptionOf(expectedType interface{}) string {
	if expectedType == nil {
		return defaultExpectedTypeName
	}
	if gvk := expectedGVKOf(expectedType); gvk != nil {
		return gvk.String()
	}
	return reflect.TypeOf(expectedType).String()
}

// expectedGVKOf returns the GroupVersionKind an expected *unstructured.Unstructured pins, or nil.
func expectedGVKOf(expectedType interface{}) *schema.GroupVersionKind {
	u, ok := expectedType.(*unstructured.Unstructured)
	if !ok || u == nil {
		return nil
	}
	gvk := u.GroupVersionKind()
	if gvk.Empty() {
		return nil
	}
	return &gvk
}

// Name returns the reflector's name.
func (r *Reflector) Name() string {
	return r.name
}

// TypeDescription returns the description of what the reflector lists.
func (r *Reflector) TypeDescription() string {
	return r.typeDescription
}

// withLogger returns ctx carrying the logger from ReflectorOptions, if one was given.
func (r *Reflector) withLogger(ctx context.Context) context.Context {
	if r.hasLogger {
		return klog.NewContext(ctx, r.logger)
	}
	return ctx
}

// Run is RunWithContext with a context that is cancelled when stopCh is closed.
func (r *Reflector) Run(stopCh <-chan struct{}) {
	r.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext calls ListAndWatchWithContext over and over until ctx is cancelled, waiting
// the backoff delay between rounds; a round's error goes to the watch error handler. A panic in
// a round is logged and re-raised. It returns once ctx is cancelled and the current round has
// ended.
func (r *Reflector) RunWithContext(ctx context.Context) {
	ctx = r.withLogger(ctx)
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Starting reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod, "reflector", r.name)
	r.backoffUntil(ctx, func(ctx context.Context) {
		if err := r.ListAndWatchWithContext(ctx); err != nil {
			r.watchErrorHandler(ctx, r, err)
		}
	})
	logger.V(3).Info("Stopping reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod, "reflector", r.name)
}

// ListAndWatch is ListAndWatchWithContext with a context that is cancelled when stopCh is
// closed.
func (r *Reflector) ListAndWatch(stopCh <-chan struct{}) error {
	return r.ListAndWatchWithContext(wait.ContextForChannel(stopCh))
}

// ListAndWatchWithContext fills the store once, by a streaming watch-list or else a LIST, then
// watches until the watch cannot be resumed (the resource version expired, or an error other
// than an overload or connection problem) or ctx is cancelled. It returns an error only when it
// could not fill the store, or when starting a watch failed in a way that is not retried; it
// returns nil when ctx is cancelled.
//
// Bad input from the ListerWatcher has a defined outcome: a LIST result that is not a list (or
// nil) is an error; a Watch that returns neither a watch nor an error is an error; watch events
// whose object is nil, has no metadata, or has the wrong type or GroupVersionKind are logged and
// dropped; a watch.Error event whose object is not a Status ends the watch like any other error
// event (the next round lists again); a bookmark without a resourceVersion is logged and
// dropped, and one that ends a watch-list's initial events makes the Reflector fall back to a
// LIST; an object without a resourceVersion is applied but does not move the last resource
// version. A panic in the ListerWatcher propagates to the caller
// with its own stack (RunWithContext logs and re-raises it).
func (r *Reflector) ListAndWatchWithContext(ctx context.Context) error {
	ctx = r.withLogger(ctx)
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Listing and watching", "type", r.typeDescription, "reflector", r.name)

	// w is the stream of a successful watch-list, which the steady-state watch continues.
	var w watch.Interface
	if r.useWatchList {
		var err error
		r.status.listStarted(true)
		w, err = r.watchList(ctx)
		switch {
		case err != nil:
			r.status.watchListFellBack(err)
			logger.V(4).Info("Data couldn't be fetched in watchlist mode. Falling back to regular list. This is expected if watchlist is not supported or disabled in kube-apiserver.", "err", err)
		case w == nil:
			return nil // ctx was cancelled
		default:
			r.status.listEnded(nil)
		}
	}
	if w == nil {
		r.status.listStarted(false)
		err := r.list(ctx)
		r.status.listEnded(err)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	logger.V(2).Info("Caches populated", "type", r.typeDescription, "reflector", r.name)
	return r.watchWithResync(ctx, w)
}

// LastSyncResourceVersion returns the resource version the store was last brought up to, as
// seen by the reflector ("" before the first list). The store may lag behind it, or be ahead of
// it, if other code writes to the store too.
func (r *Reflector) LastSyncResourceVersion() string {
	r.rvMu.RLock()
	defer r.rvMu.RUnlock()
	return r.lastSyncResourceVersion
}

// WatchErrorHandler is called with the error of every ListAndWatch round that failed; the
// Reflector then backs off and starts a new round. It should return quickly.
type WatchErrorHandler func(r *Reflector, err error)

// WatchErrorHandlerWithContext is WatchErrorHandler with the context of the running Reflector
// (for its logger).
type WatchErrorHandlerWithContext func(ctx context.Context, r *Reflector, err error)

// DefaultWatchErrorHandler logs err at a level that fits it: an expired resource version at
// V(4), io.EOF not at all (the watch closed normally), io.ErrUnexpectedEOF at V(1), anything
// else as an error ("Failed to watch").
func DefaultWatchErrorHandler(ctx context.Context, r *Reflector, err error) {
	logger := klog.FromContext(ctx)
	switch {
	case isExpiredError(err):
		// The next LIST uses the last resource version, which the server answers with data at
		// least as new: no need to mark it unavailable.
		logger.V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", err)
	case err == io.EOF:
	case err == io.ErrUnexpectedEOF:
		logger.V(1).Info("Watch closed with unexpected EOF", "reflector", r.name, "type", r.typeDescription, "err", err)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch", "reflector", r.name, "type", r.typeDescription)
	}
}

// VeryShortWatchError is the error of a watch that ended less than a second after it started
// without delivering a single event, which usually means the server or a proxy is closing
// watches at once.
type VeryShortWatchError struct {
	// Name is the reflector's name.
	Name string
}

// Error says which reflector saw the short watch.
func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// ReflectorStore is what a Reflector writes to: the changes it sees on a watch, whole lists
// from a LIST or a streaming watch-list, and resyncs.
type ReflectorStore interface {
	// Add records an Added watch event.
	Add(obj interface{}) error

	// Update records a Modified watch event.
	Update(obj interface{}) error

	// Delete records a Deleted watch event.
	Delete(obj interface{}) error

	// Replace makes list the whole content, read at resourceVersion. The store takes
	// ownership of list.
	Replace(list []interface{}, resourceVersion string) error

	// Resync is called every resync period; plain stores do nothing.
	Resync() error
}

// ReflectorBookmarkStore is implemented by stores that want to hear about watch bookmarks: the
// Reflector calls Bookmark with the bookmark's resource version.
type ReflectorBookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// TransformingStore is a ReflectorStore that transforms objects as they come in. The Reflector
// applies the same transform to the objects it buffers during a streaming watch-list, so that
// the buffer holds the (usually smaller) transformed objects, then hands them over. This
// package's RealFIFO and DeltaFIFO (the queues informers use) take them as they are, so each
// object is transformed once; any other TransformingStore gets them through Replace, which sees
// objects already transformed once, as in client-go, so its transform must be idempotent.
type TransformingStore interface {
	ReflectorStore
	Transformer() TransformFunc
}

// ResourceVersionUpdater is implemented by stores that want to hear every time the Reflector's
// last-synced resource version moves.
type ResourceVersionUpdater interface {
	// UpdateResourceVersion is called with each new resource version.
	UpdateResourceVersion(resourceVersion string)
}
