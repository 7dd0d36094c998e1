package informers

import (
	"context"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kcache/cache"
)

// TweakListOptionsFunc changes the options of every List and Watch request of the factory's
// informers, typically to set a label or field selector.
type TweakListOptionsFunc func(*metav1.ListOptions)

// NewInformerFunc builds the informer InformerFor shares, with the resync period the factory
// chose for its type (the WithCustomResyncConfig entry, else the default). client-go's
// NewInformerFunc also takes the clientset; kcache has none, so the function closes over the
// client it needs.
type NewInformerFunc func(resyncPeriod time.Duration) cache.SharedIndexInformer

// SharedInformerOption configures a factory made by NewSharedInformerFactoryWithOptions.
type SharedInformerOption func(*sharedInformerFactory) *sharedInformerFactory

// WithCustomResyncConfig sets the resync period of the informers of some object types: each
// key is an example object of the type (&corev1.Pod{}), each value the period. Other types use
// the factory's default.
func WithCustomResyncConfig(resyncConfig map[metav1.Object]time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		for obj, period := range resyncConfig {
			f.customResync[reflect.TypeOf(obj)] = period
		}
		return f
	}
}

// WithTweakListOptions sets a function that changes the options of every List and Watch
// request of every informer the factory builds, so every lister of the factory sees only what
// it selects.
func WithTweakListOptions(tweakListOptions TweakListOptionsFunc) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.tweakListOptions = tweakListOptions
		return f
	}
}

// WithNamespace limits the factory's namespaced informers to namespace: For and ForResource
// call their client function with it. Defaults to metav1.NamespaceAll ("").
func WithNamespace(namespace string) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.namespace = namespace
		return f
	}
}

// WithTransform sets the transform of every informer the factory builds (see
// cache.SharedInformer.SetTransform), for example cache.TransformStripManagedFields().
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.transform = transform
		return f
	}
}

// WithInformerName sets the name under which the factory's informers publish metrics; each
// informer registers its resource under it. Create the name once with cache.NewInformerName;
// Shutdown releases it.
func WithInformerName(informerName *cache.InformerName) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.informerName = informerName
		return f
	}
}

// WithWatchListSemanticsOf makes the factory's informers ask client whether it can serve
// streaming watch-lists: if client has an IsWatchListSemanticsUnSupported method that returns
// true, as client-go's fake clientsets (kubernetes/fake, dynamic/fake, metadata/fake) do, the
// informers list instead. (client-go's generated factory gets this from the clientset it is
// given; kcache's factory is given none.)
//
// It is seldom needed. Without it, informers over client-go's fake typed clients
// (fake.NewClientset().CoreV1().Pods) list at once: the factory recognizes them. Informers
// over other clients that cannot stream but do not say so (the fake dynamic and metadata
// clients, a hand-written fake, a server too old to know watch-lists) sync too, 10 seconds
// late: a watch-list whose stream stays quiet that long without ending its initial events
// makes the informer log the fix and list from then on. Passing the fake clientset here saves
// those 10 seconds.
//
// kcache extension.
func WithWatchListSemanticsOf(client any) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.watchListClient = client
		return f
	}
}

// WithDefaultHandlerMaxPending bounds the notifications pending for each slow handler of the
// informers the factory builds with For, ForClusterScoped and ForResource: it sets their
// cache.SharedIndexInformerOptions.DefaultHandlerMaxPending, so every handler added without
// its own HandlerOptions.MaxPending coalesces notifications per key once more than maxPending
// are waiting (see HandlerOptions.MaxPending). A negative value makes adding a handler fail.
// Informers that an InformerFor newFunc builds are the newFunc's own business. Defaults to no
// bound, as in client-go.
//
// kcache extension.
func WithDefaultHandlerMaxPending(maxPending int) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.defaultHandlerMaxPending = &maxPending
		return f
	}
}

// WithCompactStorage makes the caches of the informers the factory builds with For,
// ForClusterScoped and ForResource compact stores, which keep objects encoded and decode them
// when they are read: see cache.WithCompactStorage for what changes for readers, and
// cache.CompactOptions for the codec (the default one needs no scheme and serves every type).
// Informers that an InformerFor newFunc builds are the newFunc's own business (set
// cache.SharedIndexInformerOptions.Compact there). Defaults to plain caches, as in client-go.
//
// kcache extension.
func WithCompactStorage(options cache.CompactOptions) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.compact = &options
		return f
	}
}

// SharedInformerFactory hands out shared informers and runs them. Get informers with For,
// ForClusterScoped, ForResource or InformerFor, then Start the factory, WaitForCacheSync, and
// at the end cancel the context and Shutdown:
//
//	factory := informers.NewSharedInformerFactory(resync)
//	defer factory.Shutdown() // after cancel: Shutdown waits for the informers to return
//	pods := informers.For[*corev1.Pod](factory, clientset.CoreV1().Pods)
//	factory.StartWithContext(ctx)
//	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil { ... }
//
// Informers requested after Start are started by the next Start. All methods are safe for
// concurrent use. The interface has an unexported method: For and ForResource need the
// factory's settings, so only this package implements it.
type SharedInformerFactory interface {
	// Start starts the informers requested since the last Start, each in a goroutine that
	// runs until stopCh is closed. It does not block. After Shutdown it does nothing.
	Start(stopCh <-chan struct{})
	// StartWithContext is Start with a context: the informers run until ctx is done.
	StartWithContext(ctx context.Context)
	// Shutdown marks the factory as shut down, so later Starts do nothing, and blocks until
	// every informer goroutine it started has returned — which they do once the channel or
	// context they were started with is done. It may be called more than once, also
	// concurrently. It releases the WithInformerName name. Requests after Shutdown still
	// return informers, which are never started.
	Shutdown()
	// WaitForCacheSync blocks until every started informer has synced or stopCh is closed, and
	// reports per object type whether its informers synced.
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
	// WaitForCacheSyncWithContext blocks, without polling, until every started informer has
	// synced or ctx is done. Synced maps each object type to whether its informers synced (for
	// ForResource informers sharing an object type, whether all of them did); Err is
	// context.Cause(ctx) if one did not.
	WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult
	// InformerFor returns the shared informer for obj's type, building it with newFunc if this
	// is the first request for the type. The factory sets its transform on a new informer. A
	// nil newFunc, or one that returns nil, makes InformerFor return nil if the type has no
	// informer yet, and builds nothing; newFunc must not ask the factory for obj's own type.
	InformerFor(obj runtime.Object, newFunc NewInformerFunc) cache.SharedIndexInformer
	// InformerName returns the name set with WithInformerName, or nil.
	InformerName() *cache.InformerName

	// informerFor is InformerFor for any key, building with the factory's settings.
	informerFor(key informerKey, build func(settings) cache.SharedIndexInformer) cache.SharedIndexInformer
}

// informerKey identifies one shared informer: the type of its objects, and for ForResource
// informers the resource too.
type informerKey struct {
	objType reflect.Type
	gvr     schema.GroupVersionResource
}

// settings are what a build function needs from the factory.
type settings struct {
	namespace    string
	tweak        TweakListOptionsFunc
	resync       time.Duration
	informerName *cache.InformerName
	// watchListClient is the WithWatchListSemanticsOf client, or nil.
	watchListClient any
	// defaultHandlerMaxPending is the WithDefaultHandlerMaxPending bound, or nil.
	defaultHandlerMaxPending *int
	// compact is the WithCompactStorage options, or nil.
	compact *cache.CompactOptions
}

// entry is one shared informer, or the promise of one while its first requester builds it.
type entry struct {
	built    chan struct{} // closed once informer is set (or the build failed)
	informer cache.SharedIndexInformer
	started  bool
}

// sharedInformerFactory implements SharedInformerFactory.
type sharedInformerFactory struct {
	namespace        string
	tweakListOptions TweakListOptionsFunc
	defaultResync    time.Duration
	customResync     map[reflect.Type]time.Duration
	transform        cache.TransformFunc
	informerName     *cache.InformerName
	watchListClient  any
	// defaultHandlerMaxPending is the WithDefaultHandlerMaxPending bound, or nil.
	defaultHandlerMaxPending *int
	// compact is the WithCompactStorage options, or nil.
	compact *cache.CompactOptions

	// mu guards informers, order and shuttingDown.
	mu        sync.Mutex
	informers map[informerKey]*entry
	// order lists the keys in request order, so Start starts informers in that order.
	order        []informerKey
	shuttingDown bool

	// wg counts the informer goroutines Start started.
	wg sync.WaitGroup
}

// NewSharedInformerFactory returns a factory for all namespaces whose informers resync every
// defaultResync (0: never). client-go's takes a clientset first; here each For, ForResource or
// InformerFor call brings its client.
func NewSharedInformerFactory(defaultResync time.Duration) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(defaultResync)
}

// NewSharedInformerFactoryWithOptions returns a factory configured by options, applied in
// order. A nil option is skipped.
func NewSharedInformerFactoryWithOptions(defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	f := &sharedInformerFactory{
		namespace:     metav1.NamespaceAll,
		defaultResync: defaultResync,
		customResync:  map[reflect.Type]time.Duration{},
		informers:     map[informerKey]*entry{},
	}
	for _, opt := range options {
		if opt != nil {
			f = opt(f)
		}
	}
	return f
}

func (f *sharedInformerFactory) InformerName() *cache.InformerName {
	return f.informerName
}

func (f *sharedInformerFactory) InformerFor(obj runtime.Object, newFunc NewInformerFunc) cache.SharedIndexInformer {
	return f.informerFor(informerKey{objType: reflect.TypeOf(obj)}, func(s settings) cache.SharedIndexInformer {
		if newFunc == nil {
			return nil
		}
		return newFunc(s.resync)
	})
}

// informerFor returns the informer for key, building it with build if it does not exist yet.
// build runs outside the lock, once per key even when callers race: the others wait for it.
// If build panics or returns nil, the key is forgotten (the panic goes on to the caller) and a
// later request tries again.
func (f *sharedInformerFactory) informerFor(key informerKey, build func(settings) cache.SharedIndexInformer) cache.SharedIndexInformer {
	for {
		f.mu.Lock()
		e, ok := f.informers[key]
		if !ok {
			e = &entry{built: make(chan struct{})}
			f.informers[key] = e
			f.order = append(f.order, key)
		}
		f.mu.Unlock()
		if ok {
			<-e.built
			if e.informer != nil {
				return e.informer
			}
			continue // its build failed and was forgotten; try again
		}
		return f.build(key, e, build)
	}
}

// build runs build for the new entry e of key and publishes the result.
func (f *sharedInformerFactory) build(key informerKey, e *entry, build func(settings) cache.SharedIndexInformer) (informer cache.SharedIndexInformer) {
	defer func() {
		f.mu.Lock()
		if informer == nil {
			delete(f.informers, key)
			for i, k := range f.order {
				if k == key {
					f.order = append(f.order[:i], f.order[i+1:]...)
					break
				}
			}
		} else {
			e.informer = informer
		}
		f.mu.Unlock()
		close(e.built)
	}()
	resync, ok := f.customResync[key.objType]
	if !ok {
		resync = f.defaultResync
	}
	informer = build(settings{namespace: f.namespace, tweak: f.tweakListOptions, resync: resync,
		informerName: f.informerName, watchListClient: f.watchListClient,
		defaultHandlerMaxPending: f.defaultHandlerMaxPending, compact: f.compact})
	if informer != nil && f.transform != nil {
		// Only an informer that already runs refuses (it was started outside the factory);
		// it keeps its own transform.
		_ = informer.SetTransform(f.transform)
	}
	return informer
}

func (f *sharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

func (f *sharedInformerFactory) StartWithContext(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for _, key := range f.order {
		e := f.informers[key]
		if e.started || e.informer == nil { // nil: still being built; the next Start takes it
			continue
		}
		e.started = true
		informer := e.informer
		f.wg.Go(func() { informer.RunWithContext(ctx) })
	}
}

func (f *sharedInformerFactory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	f.wg.Wait()
	f.informerName.Release()
}

// startedInformers returns the started informers with their keys.
func (f *sharedInformerFactory) startedInformers() ([]informerKey, []cache.SharedIndexInformer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []informerKey
	var informers []cache.SharedIndexInformer
	for _, key := range f.order {
		if e := f.informers[key]; e.started {
			keys = append(keys, key)
			informers = append(informers, e.informer)
		}
	}
	return keys, informers
}

func (f *sharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	return f.WaitForCacheSyncWithContext(wait.ContextForChannel(stopCh)).Synced
}

func (f *sharedInformerFactory) WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult {
	keys, informers := f.startedInformers()
	checkers := make([]cache.DoneChecker, len(informers))
	for i, informer := range informers {
		checkers[i] = informer.HasSyncedChecker()
	}
	cache.WaitFor(ctx, "", checkers...)
	res := cache.SyncResult{Synced: make(map[reflect.Type]bool, len(keys))}
	failed := false
	for i, key := range keys {
		synced := informers[i].HasSynced()
		failed = failed || !synced
		if prev, seen := res.Synced[key.objType]; seen {
			synced = synced && prev
		}
		res.Synced[key.objType] = synced
	}
	if failed {
		res.Err = context.Cause(ctx)
	}
	return res
}
