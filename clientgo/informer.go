package clientgo

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache"
)

// Options are the kcache extensions a bridge informer applies to every handler added through
// it, and to its cache. The zero value gives client-go's behaviour.
//
// kcache extension.
type Options struct {
	// DefaultHandlerMaxPending is the cache.HandlerOptions.MaxPending of every handler: when more
	// than that many notifications wait for a handler, its notifications are coalesced per
	// object key, so a stalled handler costs memory in proportion to the objects, not to the
	// events (see cache.HandlerOptions.MaxPending for what a handler gives up). Set it when
	// every handler of the informer is level-triggered (enqueues keys and reads the cache), as
	// controller-runtime's are. Negative values make AddEventHandler fail. Defaults to nil:
	// every notification is delivered, unbounded, as in client-go.
	DefaultHandlerMaxPending *int

	// ContainPanics, when true, contains the panics of every handler: a panic is logged with
	// the handler's stack and the notification is dropped; the process does not crash. It is
	// cache.HandlerOptions.ContainPanics for every handler, with the same type. Defaults to
	// nil (as is false): client-go's behaviour, a handler panic crashes the process.
	ContainPanics *bool

	// Compact, if set, makes the informer's cache a compact store: objects are kept encoded
	// (protobuf for the built-in types, CBOR for unstructured objects) and decoded when read,
	// about a third of the memory of decoded objects for realistic pods (see
	// cache.WithCompactStorage, and MEMORY.md for which controllers gain). Handlers still
	// receive the decoded objects of the watch; objects read from the cache (and from
	// controller-runtime's cache reader) are decoded copies, so two reads of one key may
	// return different pointers. Defaults to nil: objects are cached as they are, as in
	// client-go.
	Compact *cache.CompactOptions
}

// NewSharedIndexInformer returns a client-go SharedIndexInformer implemented by a kcache
// informer, with client-go's signature: it is the function to give controller-runtime's
// cache.Options.NewInformer. See NewSharedIndexInformerWithOptions.
func NewSharedIndexInformer(lw toolscache.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return New(lw, exampleObject, toolscache.SharedIndexInformerOptions{
		ResyncPeriod: defaultEventHandlerResyncPeriod,
		Indexers:     indexers,
	}, Options{})
}

// NewSharedIndexInformerWithOptions returns a client-go SharedIndexInformer implemented by a
// kcache informer, with the signature of client-go's function of the same name. It is New
// with the zero Options.
func NewSharedIndexInformerWithOptions(lw toolscache.ListerWatcher, exampleObject runtime.Object, options toolscache.SharedIndexInformerOptions) toolscache.SharedIndexInformer {
	return New(lw, exampleObject, options, Options{})
}

// NewInformerFunc returns a constructor with exactly the type of controller-runtime's
// cache.Options.NewInformer whose informers apply opts:
//
//	cache.Options{NewInformer: clientgo.NewInformerFunc(clientgo.Options{DefaultHandlerMaxPending: ptr.To(1000)})}
//
// kcache extension.
func NewInformerFunc(opts Options) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, exampleObject runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return New(lw, exampleObject, toolscache.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: indexers}, opts)
	}
}

// New returns a client-go SharedIndexInformer implemented by a kcache informer for the objects
// lw lists, of exampleObject's type. options are client-go's (ResyncPeriod, Indexers,
// ObjectDescription, and Identifier and InformerMetricsProvider for metrics, see
// convertMetrics); opts are kcache's extensions. lw is used as it is: client-go's ListWatch and
// any other client-go ListerWatcher have the methods kcache's ListerWatcher needs.
//
// kcache extension.
func New(lw toolscache.ListerWatcher, exampleObject runtime.Object, options toolscache.SharedIndexInformerOptions, opts Options) toolscache.SharedIndexInformer {
	id, provider := convertMetrics(options.Identifier, options.InformerMetricsProvider)
	inner := cache.NewSharedIndexInformerWithOptions(lw, exampleObject, cache.SharedIndexInformerOptions{
		ResyncPeriod:             options.ResyncPeriod,
		Indexers:                 toKcacheIndexers(options.Indexers),
		ObjectDescription:        options.ObjectDescription,
		Identifier:               id,
		InformerMetricsProvider:  provider,
		DefaultHandlerMaxPending: opts.DefaultHandlerMaxPending,
		Compact:                  opts.Compact,
	})
	s := &informer{inner: inner, lw: lw, exampleObject: exampleObject, objectDescription: options.ObjectDescription}
	if opts.ContainPanics != nil && *opts.ContainPanics {
		s.containPanics = new(bool) // a copy: a later change to the caller's bool changes nothing
		*s.containPanics = true
	}
	s.indexer = &indexer{inner: inner.GetIndexer()}
	return s
}

// Unwrap returns the kcache informer behind a SharedIndexInformer this package returned, and
// false for any other informer. Use it to reach kcache's own API (per-handler
// cache.HandlerOptions, cache.ShutDownEventHandler's extensions).
//
// It sees through client-go's typed wrapper (toolscache.NewTypedSharedIndexInformer), which
// client-go's generated informers return from Informer() and TypedInformer() since v0.37: so
// Unwrap(factory.Core().V1().Pods().Informer()) finds the bridge informer registered with
// InformerFor. Other wrappers, such as the one controller-runtime builds over the informers of
// several namespaces (cache.Options.DefaultNamespaces), hide what they wrap: Unwrap returns
// false for them.
//
// kcache extension.
func Unwrap(i toolscache.SharedInformer) (cache.SharedIndexInformer, bool) {
	for {
		if s, ok := i.(*informer); ok {
			if s == nil {
				return nil, false
			}
			return s.inner, true
		}
		inner, ok := unwrapTyped(i)
		if !ok {
			return nil, false
		}
		i = inner
	}
}

// typedWrapperPkg is the package of client-go's typedSharedIndexInformer, the value
// toolscache.NewTypedSharedIndexInformer returns.
const typedWrapperPkg = "k8s.io/client-go/tools/cache"

// unwrapTyped returns the informer that client-go's typed wrapper embeds, and false for any
// other value. The wrapper is unexported but holds the informer in its one, exported, embedded
// field SharedIndexInformer, which reflection reads.
func unwrapTyped(i toolscache.SharedInformer) (toolscache.SharedInformer, bool) {
	v := reflect.ValueOf(i)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, false
	}
	t := v.Type()
	if t.PkgPath() != typedWrapperPkg || !strings.HasPrefix(t.Name(), "typedSharedIndexInformer[") || t.NumField() != 1 {
		return nil, false
	}
	if f := t.Field(0); !f.Anonymous || f.Type != reflect.TypeFor[toolscache.SharedIndexInformer]() {
		return nil, false
	}
	inner, ok := v.Field(0).Interface().(toolscache.SharedInformer)
	return inner, ok && inner != nil
}

// informer is the bridge: a kcache SharedIndexInformer behind client-go's interface.
type informer struct {
	inner         cache.SharedIndexInformer
	indexer       *indexer
	containPanics *bool // nil unless Options.ContainPanics is true

	// lw, exampleObject and objectDescription build the client-go Reflector that watch error
	// handlers are given (see reflectorFor).
	lw                toolscache.ListerWatcher
	exampleObject     runtime.Object
	objectDescription string

	// mu guards reflectors.
	mu sync.Mutex
	// reflectors maps each kcache Reflector that reported a watch error to the client-go
	// Reflector standing for it in the handler's call.
	reflectors map[*cache.Reflector]*toolscache.Reflector
}

var _ toolscache.SharedIndexInformer = (*informer)(nil)

// AddEventHandler implements toolscache.SharedInformer.
func (s *informer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.add(handler, cache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod implements toolscache.SharedInformer.
func (s *informer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resyncPeriod time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.add(handler, cache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions implements toolscache.SharedInformer. options.Logger and
// options.ResyncPeriod mean what they mean in client-go.
func (s *informer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.add(handler, toHandlerOptions(options))
}

// toHandlerOptions converts client-go's handler options to kcache's; MaxPending and
// ContainPanics stay unset (the informer's defaults apply).
func toHandlerOptions(options toolscache.HandlerOptions) cache.HandlerOptions {
	return cache.HandlerOptions{Logger: options.Logger, ResyncPeriod: options.ResyncPeriod}
}

// add registers handler, wrapped so that it receives client-go's tombstones.
func (s *informer) add(handler toolscache.ResourceEventHandler, options cache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	options.ContainPanics = s.containPanics
	var h cache.ResourceEventHandler // stays nil for a nil handler: kcache reports the error
	if handler != nil {
		h = eventHandler{handler}
	}
	reg, err := s.inner.AddEventHandlerWithOptions(h, options)
	if err != nil {
		return nil, err
	}
	return &registration{inner: reg}, nil
}

// RemoveEventHandler implements toolscache.SharedInformer. Removing a handler twice, or one of
// another bridge informer, does nothing; a handle this package did not return is an error.
func (s *informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r == nil {
		return fmt.Errorf("clientgo: invalid registration handle type %T", handle)
	}
	return s.inner.RemoveEventHandler(r.inner)
}

// GetStore implements toolscache.SharedInformer: the informer's cache, as GetIndexer.
func (s *informer) GetStore() toolscache.Store { return s.indexer }

// GetIndexer implements toolscache.SharedIndexInformer: a client-go Indexer over the kcache
// informer's cache (the same value on every call).
func (s *informer) GetIndexer() toolscache.Indexer { return s.indexer }

// AddIndexers implements toolscache.SharedIndexInformer, before or after Run.
func (s *informer) AddIndexers(indexers toolscache.Indexers) error {
	return s.inner.AddIndexers(toKcacheIndexers(indexers))
}

// GetController implements toolscache.SharedInformer.
func (s *informer) GetController() toolscache.Controller {
	return controller{s.inner.GetController()}
}

// The bridge runs kcache informers on its users' behalf: their Reflectors are named after the
// code that runs the bridge informer, as client-go names them, not after the bridge.
func init() { cache.SkipPackageInReflectorNames("github.com/kcache/cache/clientgo") }

// Run implements toolscache.SharedInformer.
func (s *informer) Run(stopCh <-chan struct{}) { s.inner.Run(stopCh) }

// RunWithContext implements toolscache.SharedInformer.
func (s *informer) RunWithContext(ctx context.Context) { s.inner.RunWithContext(ctx) }

// HasSynced implements toolscache.SharedInformer.
func (s *informer) HasSynced() bool { return s.inner.HasSynced() }

// HasSyncedChecker implements toolscache.SharedInformer.
func (s *informer) HasSyncedChecker() toolscache.DoneChecker { return s.inner.HasSyncedChecker() }

// LastSyncResourceVersion implements toolscache.SharedInformer.
func (s *informer) LastSyncResourceVersion() string { return s.inner.LastSyncResourceVersion() }

// IsStopped implements toolscache.SharedInformer.
func (s *informer) IsStopped() bool { return s.inner.IsStopped() }

// SetTransform implements toolscache.SharedInformer. It fails once the informer has started.
func (s *informer) SetTransform(handler toolscache.TransformFunc) error {
	return s.inner.SetTransform(cache.TransformFunc(handler))
}

// SetWatchErrorHandler implements toolscache.SharedInformer. The handler is given a client-go
// Reflector that carries the name and type description of the kcache Reflector that failed
// (what client-go's DefaultWatchErrorHandler logs); it is never run. It fails once the
// informer has started.
func (s *informer) SetWatchErrorHandler(handler toolscache.WatchErrorHandler) error {
	if handler == nil {
		return s.inner.SetWatchErrorHandler(nil)
	}
	return s.inner.SetWatchErrorHandler(func(r *cache.Reflector, err error) {
		handler(s.reflectorFor(r), err)
	})
}

// SetWatchErrorHandlerWithContext implements toolscache.SharedInformer, like
// SetWatchErrorHandler.
func (s *informer) SetWatchErrorHandlerWithContext(handler toolscache.WatchErrorHandlerWithContext) error {
	if handler == nil {
		return s.inner.SetWatchErrorHandlerWithContext(nil)
	}
	return s.inner.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		handler(ctx, s.reflectorFor(r), err)
	})
}

// reflectorFor returns the client-go Reflector that stands for r in watch error handlers,
// built on first use: a watch error handler may read its Name and TypeDescription.
func (s *informer) reflectorFor(r *cache.Reflector) *toolscache.Reflector {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cr, ok := s.reflectors[r]; ok {
		return cr
	}
	options := toolscache.ReflectorOptions{TypeDescription: s.objectDescription}
	if r != nil {
		options.Name = r.Name()
		options.TypeDescription = r.TypeDescription()
	}
	cr := toolscache.NewReflectorWithOptions(s.lw, s.exampleObject, s.indexer, options)
	if s.reflectors == nil {
		s.reflectors = map[*cache.Reflector]*toolscache.Reflector{}
	}
	s.reflectors[r] = cr
	return cr
}

// controller is GetController's result: kcache's controller behind client-go's interface.
type controller struct{ inner cache.Controller }

func (c controller) RunWithContext(ctx context.Context)       { c.inner.RunWithContext(ctx) }
func (c controller) Run(stopCh <-chan struct{})               { c.inner.Run(stopCh) }
func (c controller) HasSynced() bool                          { return c.inner.HasSynced() }
func (c controller) HasSyncedChecker() toolscache.DoneChecker { return c.inner.HasSyncedChecker() }
func (c controller) LastSyncResourceVersion() string          { return c.inner.LastSyncResourceVersion() }
