package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/features"
)

// SharedInformer keeps a local cache of one kind of object, filled by a list and then a watch
// through a ListerWatcher, and tells any number of event handlers about every change.
//
// The cache is eventually consistent with the source: after a change, the cache catches up
// (unless the watch keeps failing), and the handlers are told in order. Each handler has its
// own buffer and goroutine, so a slow handler delays only itself; handlers should still hand
// work off quickly, typically to a workqueue. The buffer is unbounded unless the handler sets
// HandlerOptions.MaxPending (kcache extension), which coalesces its backlog per object. Handlers learn of the latest state,
// not of every intermediate one: an object deleted and re-created under the same name while
// the watch was down shows up as an update (compare UIDs to tell).
//
// A delete notification carries the last state the cache knew, or a DeletedFinalStateUnknown
// when the deletion was only noticed by a relist.
type SharedInformer interface {
	// AddEventHandler adds handler with the informer's default resync period. See
	// AddEventHandlerWithOptions.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)

	// AddEventHandlerWithResyncPeriod adds handler with its own resync period: 0 means no
	// resyncs; a positive period is raised to at least one second and, on a running informer,
	// to the informer's resync check period. An informer created without a resync period never
	// resyncs. A resync re-delivers every cached object as an update with the same old and new
	// object; it does not contact the source.
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error)

	// AddEventHandlerWithOptions adds handler. Calls to one handler are made one at a time, in
	// order; different handlers are not coordinated. A handler added to a running informer
	// first receives an add (isInInitialList=true) for every object in the cache, queued
	// before this call returns. It fails once the informer has stopped, and for a nil handler
	// (client-go accepts one and crashes on its first notification).
	AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error)

	// RemoveEventHandler removes the handler behind handle: nothing more is queued for it,
	// what is queued is dropped, and its goroutine ends after the call in progress, if any.
	// It is asynchronous: that call may still be running when RemoveEventHandler returns. To
	// wait for it (for example before releasing what the handler uses), call
	// ShutDownEventHandler instead. Removing a handler twice, or a handler of another
	// informer, does nothing; a handle from another implementation is an error. Safe for
	// concurrent use.
	RemoveEventHandler(handle ResourceEventHandlerRegistration) error

	// GetStore returns the informer's cache.
	GetStore() Store

	// GetController returns a Controller whose Run does nothing; it exists for compatibility.
	GetController() Controller

	// Run runs the informer until stopCh is closed. See RunWithContext.
	Run(stopCh <-chan struct{})

	// RunWithContext runs the informer until ctx ends and returns once the list/watch has
	// stopped and every handler has returned from its current call. An informer runs once: a
	// second call only logs a warning.
	RunWithContext(ctx context.Context)

	// HasSynced reports whether the cache has received a complete list from the source. This
	// says nothing about the handlers: ask the registration for that.
	HasSynced() bool

	// HasSyncedChecker returns a DoneChecker that is done when HasSynced turns true.
	HasSyncedChecker() DoneChecker

	// LastSyncResourceVersion returns the resource version the informer last saw from the
	// source, or "" before it started.
	LastSyncResourceVersion() string

	// SetWatchErrorHandler sets the function called when a list or watch fails, before the
	// informer backs off and retries. The last call wins; it fails once the informer has
	// started. The handler should return quickly.
	SetWatchErrorHandler(handler WatchErrorHandler) error

	// SetWatchErrorHandlerWithContext is SetWatchErrorHandler for a handler that takes a
	// context.
	SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) error

	// SetTransform sets a function applied to every object before it is cached, typically to
	// drop fields the program does not use. It fails once the informer has started.
	SetTransform(handler TransformFunc) error

	// IsStopped reports whether the informer has stopped. A stopped informer never runs again
	// and takes no new handlers.
	IsStopped() bool
}

// SharedIndexInformer is a SharedInformer whose cache is an Indexer.
type SharedIndexInformer interface {
	SharedInformer

	// AddIndexers adds indexers to the cache, also while the informer runs (the new indices
	// are built from the cached objects). It fails once the informer has stopped, or if an
	// index name is taken.
	AddIndexers(indexers Indexers) error

	// GetIndexer returns the informer's cache.
	GetIndexer() Indexer
}

// HandlerOptions are the optional settings of AddEventHandlerWithOptions. The zero value is
// valid.
type HandlerOptions struct {
	// Logger is used for the handler's messages. Defaults to klog.Background().
	Logger *klog.Logger

	// ResyncPeriod is the handler's resync period (see AddEventHandlerWithResyncPeriod).
	// Defaults to the informer's ResyncPeriod if nil.
	ResyncPeriod *time.Duration

	// MaxPending bounds the notifications queued for this handler. When more than *MaxPending
	// wait, the handler's listener switches to coalescing: per object key (as
	// DeletionHandlingMetaNamespaceKeyFunc computes it) it keeps only the state the handler
	// last received and the newest state, so memory is O(objects waiting), not O(events).
	// Once the handler catches up it receives at most one notification per key, in the order
	// the keys first became pending: OnAdd(newest) if it had not seen the key (an initial-list
	// add if the key came from the initial list), OnUpdate(lastSeen, newest) if it had,
	// OnDelete of a DeletedFinalStateUnknown holding the last known state if the key is gone,
	// and nothing if the key appeared and vanished meanwhile. A key with one pending
	// notification gets it unchanged. Then the listener returns to plain buffering.
	//
	// What the handler keeps: per key, states never go backwards; OnUpdate's old object is
	// exactly the object the handler last received for that key; after it catches up, the
	// objects it was told about equal the cache; the registration's HasSynced turns true only
	// once the handler has been told about every object of the initial list (or its newer
	// state); resync notifications coalesce like the others. What it gives up: the
	// intermediate states of an object, the exact order of changes across different objects,
	// and the distinction between an update and a delete followed by a re-create under the
	// same name (compare UIDs; OnUpdate's two objects then differ in UID). A notification
	// whose object has no key (no metadata) is never coalesced: it waits unchanged in its
	// place.
	//
	// Set it for a level-triggered handler (one that enqueues keys and reads the cache) that
	// may stall, for example on a full downstream queue or a slow external call. Measured
	// (BenchmarkCoalescingStalledHandler: 1M watch events over 10k ConfigMaps of ~1 KB, 1%
	// deletes and re-creates, live heap after forced collections): a handler stalled for the
	// whole stream with MaxPending 1000 costs 11-13 MiB more than no stalled handler (40-43
	// vs 28-32 MiB), the old state of each object it last saw; without MaxPending it holds
	// every notification, about 1 GiB. The price while the handler keeps up is one key
	// computation per notification (~0.2 µs, one small allocation). Leave it nil for a
	// handler that must see every intermediate state. Negative values are an error. Defaults
	// to SharedIndexInformerOptions.DefaultHandlerMaxPending, and to nil (every notification,
	// unbounded, as in client-go).
	//
	// kcache extension.
	MaxPending *int

	// ContainPanics, when true, contains a panic of the handler: it is counted
	// (HandlerMetricsProvider), logged with the handler's name and stack, and the notification
	// is dropped; the process does not crash and the handler gets the next notification without
	// a pause. A handler's stacks are logged at most once every 10 seconds: the panics in
	// between are logged at V(4) without a stack, and the next logged one carries their number
	// (panicsNotLogged). An initial-list add that panicked still counts as processed for
	// HasSynced. Defaults to nil, client-go's behaviour: the panic goes to
	// utilruntime.HandleCrash, which crashes the process unless utilruntime.ReallyCrash is
	// false, in which case the notification is dropped and the handler paused for one second.
	//
	// kcache extension.
	ContainPanics *bool
}

// SharedIndexInformerOptions configures NewSharedIndexInformerWithOptions. The zero value is
// valid.
type SharedIndexInformerOptions struct {
	// ResyncPeriod is the default resync period of handlers and the informer's initial resync
	// check period. Defaults to 0: no resyncs.
	ResyncPeriod time.Duration

	// Indexers are the cache's initial indexers. Defaults to none.
	Indexers Indexers

	// ObjectDescription names the objects in the Reflector's logs. Defaults to the example
	// object's type.
	ObjectDescription string

	// Identifier names the informer for metrics. Defaults to none: no metrics.
	Identifier InformerNameAndResource

	// InformerMetricsProvider creates the queue and store metrics, and the handler metrics if
	// it implements HandlerMetricsProvider. Defaults to the provider set with
	// SetInformerMetricsProvider.
	InformerMetricsProvider InformerMetricsProvider

	// DefaultHandlerMaxPending is the HandlerOptions.MaxPending of every handler added without
	// one. Defaults to nil: no bound.
	//
	// kcache extension.
	DefaultHandlerMaxPending *int

	// Compact, if set, makes the informer's cache a compact store, which keeps objects
	// encoded and decodes them when they are read (see WithCompactStorage). Defaults to nil:
	// the cache keeps the objects themselves.
	//
	// kcache extension.
	Compact *CompactOptions
}

// NewSharedInformer returns a SharedInformer for the objects lw lists, of exampleObject's type.
// See NewSharedIndexInformerWithOptions.
func NewSharedInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) SharedInformer {
	return NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, Indexers{})
}

// NewSharedIndexInformer returns a SharedIndexInformer with the given indexers. See
// NewSharedIndexInformerWithOptions.
func NewSharedIndexInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers Indexers) SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, SharedIndexInformerOptions{
		ResyncPeriod: defaultEventHandlerResyncPeriod,
		Indexers:     indexers,
	})
}

// NewSharedIndexInformerWithOptions returns a SharedIndexInformer for the objects lw lists, of
// exampleObject's type. Its cache is keyed by DeletionHandlingMetaNamespaceKeyFunc.
//
// Resync: with options.ResyncPeriod zero the informer never resyncs. Otherwise its resync check
// period is, when it starts, the smallest of options.ResyncPeriod and the periods of handlers
// added before the start (but at least one second), and each handler's period is its request
// raised to that check period.
func NewSharedIndexInformerWithOptions(lw ListerWatcher, exampleObject runtime.Object, options SharedIndexInformerOptions) SharedIndexInformer {
	return newSharedIndexInformer(lw, exampleObject, options, clock.RealClock{})
}

// newSharedIndexInformer is NewSharedIndexInformerWithOptions with a clock, for tests.
func newSharedIndexInformer(lw ListerWatcher, exampleObject runtime.Object, options SharedIndexInformerOptions, clk clock.Clock) *sharedIndexInformer {
	s := &sharedIndexInformer{
		indexer: NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, options.Indexers,
			WithStoreMetrics(options.Identifier, options.InformerMetricsProvider), options.compactStorage()),
		processor:                       newSharedProcessor(clk),
		synced:                          make(chan struct{}),
		listerWatcher:                   lw,
		objectType:                      exampleObject,
		objectDescription:               options.ObjectDescription,
		resyncCheckPeriod:               options.ResyncPeriod,
		defaultEventHandlerResyncPeriod: options.ResyncPeriod,
		clock:                           clk,
		cacheMutationDetector:           NewCacheMutationDetector(fmt.Sprintf("%T", exampleObject)),
		identifier:                      options.Identifier,
		informerMetricsProvider:         options.InformerMetricsProvider,
		defaultHandlerMaxPending:        options.DefaultHandlerMaxPending,
	}
	s.status = newInformerTracker(s, options)
	return s
}

// sharedIndexInformer is the SharedIndexInformer: a Controller (Reflector → FIFO →
// handleDeltas) that updates indexer and hands each change to processor, which fans it out to
// the handlers' listeners.
type sharedIndexInformer struct {
	indexer                 Indexer
	processor               *sharedProcessor
	cacheMutationDetector   MutationDetector
	listerWatcher           ListerWatcher
	objectType              runtime.Object
	objectDescription       string
	clock                   clock.Clock
	identifier              InformerNameAndResource
	informerMetricsProvider InformerMetricsProvider
	// status is what InformerStatuses reports; nil only for informers built by tests.
	status *informerTracker

	// defaultEventHandlerResyncPeriod is the period of handlers added without one.
	defaultEventHandlerResyncPeriod time.Duration
	// defaultHandlerMaxPending is the MaxPending of handlers added without one.
	defaultHandlerMaxPending *int

	// synced is closed once the controller has synced.
	synced chan struct{}

	// resourceVersions tracks the newest resource version processed into indexer, for
	// WaitForResourceVersion.
	resourceVersions resourceVersionTracker

	// blockDeltas is held while deltas are applied and distributed, and while a late handler
	// takes its snapshot of the cache, so that it sees each change exactly once.
	blockDeltas sync.Mutex

	// startedMu guards the fields below.
	startedMu sync.Mutex
	started   bool
	stopped   bool
	// controller is set when the informer starts.
	controller Controller
	// resyncCheckPeriod is how often the controller asks the processor whether a handler is
	// due for a resync; it can only shrink, and only before the start.
	resyncCheckPeriod time.Duration
	watchErrorHandler WatchErrorHandlerWithContext
	transform         TransformFunc
}

var (
	_ SharedIndexInformer   = &sharedIndexInformer{}
	_ ResourceVersionWaiter = &sharedIndexInformer{}
)

// errInformerStarted is returned by setters called after the informer started.
var errInformerStarted = errors.New("informer has already started")

// SetWatchErrorHandler implements SharedInformer.
func (s *sharedIndexInformer) SetWatchErrorHandler(handler WatchErrorHandler) error {
	if handler == nil {
		return s.SetWatchErrorHandlerWithContext(nil)
	}
	return s.SetWatchErrorHandlerWithContext(func(_ context.Context, r *Reflector, err error) {
		handler(r, err)
	})
}

// SetWatchErrorHandlerWithContext implements SharedInformer.
func (s *sharedIndexInformer) SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) error {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	if s.started {
		return errInformerStarted
	}
	s.watchErrorHandler = handler
	return nil
}

// SetTransform implements SharedInformer.
func (s *sharedIndexInformer) SetTransform(handler TransformFunc) error {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	if s.started {
		return errInformerStarted
	}
	s.transform = handler
	return nil
}

// Run implements SharedInformer.
func (s *sharedIndexInformer) Run(stopCh <-chan struct{}) {
	s.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext implements SharedInformer.
func (s *sharedIndexInformer) RunWithContext(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)

	controller, ok := s.start(logger)
	if !ok {
		logger.Info("Warning: the sharedIndexInformer has started, run more than once is not allowed")
		return
	}
	if s.status != nil {
		s.status.markStarted(s.clock.Now())
		defer s.status.markStopped()
	}

	// The processor outlives the controller: it stops only after the controller has returned,
	// so that every change the controller applied is delivered or dropped deliberately. Its
	// context keeps ctx's values (the logger) but not its cancellation.
	processorCtx, stopProcessor := context.WithCancelCause(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopProcessor(errors.New("informer is stopping"))
	wg.Go(func() { s.cacheMutationDetector.Run(processorCtx.Done()) })
	wg.Go(func() { s.processor.run(processorCtx) })
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-controller.HasSyncedChecker().Done():
			if s.status != nil {
				s.status.markSynced(s.clock.Now())
			}
			close(s.synced)
			s.processor.markUpstreamSynced()
		}
	})
	defer func() {
		s.startedMu.Lock()
		defer s.startedMu.Unlock()
		s.stopped = true // no new handlers from now on
		s.resourceVersions.stop()
	}()
	controller.RunWithContext(ctx)
}

// start builds the controller and marks the informer started; false if it already was.
func (s *sharedIndexInformer) start(logger klog.Logger) (Controller, bool) {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	if s.started {
		return nil, false
	}
	fifoLogger, fifo := newQueueFIFO(logger, s.objectType, s.indexer, s.transform, s.identifier, s.informerMetricsProvider)
	cfg := &Config{
		Queue:             fifo,
		ListerWatcher:     s.listerWatcher,
		ObjectType:        s.objectType,
		ObjectDescription: s.objectDescription,
		FullResyncPeriod:  s.resyncCheckPeriod,
		ShouldResync:      s.processor.shouldResync,
		Process: func(obj interface{}, isInInitialList bool) error {
			return s.handleDeltas(fifoLogger, obj, isInInitialList)
		},
		ProcessBatch: func(deltas []Delta, isInInitialList bool) error {
			return s.handleBatchDeltas(fifoLogger, deltas, isInInitialList)
		},
		WatchErrorHandlerWithContext: s.watchErrorHandler,
	}
	if s.status != nil {
		cfg.reflectorStatus = &s.status.reflector
	}
	ctrl := New(cfg)
	if c, ok := ctrl.(*controller); ok {
		c.clock = s.clock
	}
	s.controller = ctrl
	s.started = true
	return s.controller, true
}

// HasStarted reports whether Run was called.
func (s *sharedIndexInformer) HasStarted() bool {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	return s.started
}

// HasSynced implements SharedInformer.
func (s *sharedIndexInformer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker implements SharedInformer. Its Name is "SharedIndexInformer <type>".
func (s *sharedIndexInformer) HasSyncedChecker() DoneChecker {
	return sharedIndexInformerDone{s}
}

// sharedIndexInformerDone is the informer's DoneChecker.
type sharedIndexInformerDone struct{ s *sharedIndexInformer }

func (d sharedIndexInformerDone) Name() string {
	return fmt.Sprintf("SharedIndexInformer %T", d.s.objectType)
}

func (d sharedIndexInformerDone) Done() <-chan struct{} { return d.s.synced }

// LastSyncResourceVersion implements SharedInformer.
func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	if s.controller == nil {
		return ""
	}
	return s.controller.LastSyncResourceVersion()
}

// LastProcessedResourceVersion implements ResourceVersionWaiter.
func (s *sharedIndexInformer) LastProcessedResourceVersion() string {
	return s.resourceVersions.lastProcessed()
}

// WaitForResourceVersion implements ResourceVersionWaiter.
func (s *sharedIndexInformer) WaitForResourceVersion(ctx context.Context, rv string) error {
	return s.resourceVersions.wait(ctx, rv)
}

// GetStore implements SharedInformer.
func (s *sharedIndexInformer) GetStore() Store { return s.indexer }

// GetIndexer implements SharedIndexInformer.
func (s *sharedIndexInformer) GetIndexer() Indexer { return s.indexer }

// AddIndexers implements SharedIndexInformer.
func (s *sharedIndexInformer) AddIndexers(indexers Indexers) error {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	if s.stopped {
		return errors.New("indexer was not added because it has stopped already")
	}
	return s.indexer.AddIndexers(indexers)
}

// GetController implements SharedInformer.
func (s *sharedIndexInformer) GetController() Controller {
	return &dummyController{informer: s}
}

// IsStopped implements SharedInformer.
func (s *sharedIndexInformer) IsStopped() bool {
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	return s.stopped
}

// dummyController is what GetController returns: it reports the informer's state, and its Run
// does nothing because the informer runs its own controller.
type dummyController struct {
	informer *sharedIndexInformer
}

func (v *dummyController) RunWithContext(context.Context) {}
func (v *dummyController) Run(<-chan struct{})            {}
func (v *dummyController) HasSynced() bool                { return v.informer.HasSynced() }
func (v *dummyController) HasSyncedChecker() DoneChecker  { return v.informer.HasSyncedChecker() }

// LastSyncResourceVersion returns the informer's, or "" with the InformerResourceVersion
// feature off.
func (v *dummyController) LastSyncResourceVersion() string {
	if features.Enabled(features.InformerResourceVersion) {
		return v.informer.LastSyncResourceVersion()
	}
	return ""
}
