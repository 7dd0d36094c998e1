package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	kcache "github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
)

// The controller-runtime implementations run every informer workload through a
// controller-runtime v0.25.2 cache (pkg/cache), as an operator's manager does: cache.New builds
// the cache, the workload's handlers are added to the informer cache.GetInformer returns, with
// AddEventHandlerWithOptions as controller-runtime's source.Kind adds a controller's handler,
// and the cache's Start runs the informers. They differ only in cache.Options.NewInformer:
//
//   - cr-client-go leaves it unset: controller-runtime's default, client-go's
//     NewSharedIndexInformer;
//   - cr-bridge sets clientgo.NewSharedIndexInformer, the one line a controller-runtime user
//     writes to switch to kcache;
//   - cr-bridge-maxpending sets clientgo.NewInformerFunc with DefaultHandlerMaxPending
//     stallMaxPending, kcache's bound on a stalled handler's backlog for every handler.
//
// What is exercised: controller-runtime's option defaulting, its informer map (the GVK lookup
// through the scheme and REST mapper, the informer's construction with the resync period,
// indexers and transform controller-runtime chooses), GetInformer, handler registration
// through controller-runtime's Informer interface, and Start running the informers. What is
// not: controller-runtime's HTTP client, REST client and decoding. The data comes from the
// workload's in-memory source, as for every other implementation, so that the rows compare
// with theirs and hold no decoding cost: the NewInformer given to controller-runtime ignores
// the ListerWatcher controller-runtime builds (over a REST client for a loopback address that
// nothing dials; crNoRequests fails the run if anything tries) and hands the source to the
// informer constructor instead. Nor is controller-runtime's reader (cache.Get and List, which
// deep-copy out of the informer's indexer): the workloads read the informer's indexer itself,
// as for the other implementations; the reader calls the same indexer methods over either
// informer.
//
// Differences from the other implementations' informers, all from controller-runtime's choices
// and the same for the three: the indexers are controller-runtime's, which is the namespace index
// the other implementations add too (field indexes would come from IndexField, which the
// workloads do not call); the resync period is controller-runtime's default SyncPeriod, about 10
// hours with jitter, instead of 0 (no resync happens during a workload, but the informers run
// their resync-check machinery); SetTransform is called with nil; controller-runtime's lister
// watcher would have set AllowWatchBookmarks, which both reflectors set on their own anyway.
var (
	crClientGoImpl = crVariant("cr-client-go", clientgoImpl, toolscache.NewSharedIndexInformer, false)
	crBridgeImpl   = crVariant("cr-bridge", kcacheImpl, clientgo.NewSharedIndexInformer, false)
	// crBridgeMaxPendingImpl is cr-bridge with the bridge's DefaultHandlerMaxPending on, as
	// bridge-maxpending is bridge with it (see bridgeMaxPendingImpl and crInformer.AddHandler).
	crBridgeMaxPendingImpl = crVariant("cr-bridge-maxpending", kcacheImpl, clientgo.NewInformerFunc(clientgo.Options{
		DefaultHandlerMaxPending: func() *int {
			n := stallMaxPending
			return &n
		}(),
	}), true)
)

func init() { allImpls = append(allImpls, crClientGoImpl, crBridgeImpl, crBridgeMaxPendingImpl) }

// newInformerFunc is the type of controller-runtime's cache.Options.NewInformer.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// crVariant is base (for everything but informers) with informers run through a
// controller-runtime cache whose NewInformer is newInformer. With fastOptsOut, handlers not
// expected to stall opt out of the bridge's default MaxPending (see crInformer.AddHandler).
func crVariant(name string, base *Impl, newInformer newInformerFunc, fastOptsOut bool) *Impl {
	impl := *base
	impl.Name = name
	impl.NewInformer = func(lw ListerWatcher, example runtime.Object) Informer {
		return newCRInformer(lw, example, newInformer, fastOptsOut)
	}
	return &impl
}

// crHost is the API server address controller-runtime's cache is configured with. Nothing may
// contact it: the informers read the workload's source (see crNoRequests).
const crHost = "http://127.0.0.1:1"

// crNoRequests is the HTTP transport of the controller-runtime cache: any request through it
// means controller-runtime reached for the API server instead of the workload's source, which
// would make the rows measure something else, so it stops the run.
type crNoRequests struct{}

func (crNoRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	panic(fmt.Sprintf("bench: controller-runtime's cache sent %s %s; the controller-runtime implementations must read only the workload's source", req.Method, req.URL))
}

// crMapper maps the kinds the workloads watch (pods and configmaps, both namespaced core/v1,
// and the namespaced custom resource crGVK), so that controller-runtime needs no discovery.
var crMapper = sync.OnceValue(func() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}})
	for _, kind := range []string{"Pod", "ConfigMap"} {
		m.Add(schema.GroupVersionKind{Version: "v1", Kind: kind}, meta.RESTScopeNamespace)
	}
	m.Add(crGVK, meta.RESTScopeNamespace)
	return m
})

// crLogger sets controller-runtime's logger once: klog's (which main discards unless -v), so
// that controller-runtime does not warn that none was set.
var crLogger = sync.OnceFunc(func() { crlog.SetLogger(klog.Background()) })

// crInformer is a workload's informer inside a controller-runtime cache.
type crInformer struct {
	cache   crcache.Cache
	example client.Object
	// inf is the informer cache.GetInformer returned when the cache was built, as a controller
	// gets it when it is set up: HasSynced and Indexer use it.
	inf         crcache.Informer
	fastOptsOut bool
}

func newCRInformer(lw ListerWatcher, example runtime.Object, newInformer newInformerFunc, fastOptsOut bool) *crInformer {
	crLogger()
	obj, ok := example.(client.Object)
	if !ok {
		panic(fmt.Sprintf("bench: %T is not a client.Object", example))
	}
	c, err := crcache.New(&rest.Config{Host: crHost}, crcache.Options{
		HTTPClient: &http.Client{Transport: crNoRequests{}},
		Scheme:     scheme.Scheme,
		Mapper:     crMapper(),
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			return newInformer(lw, obj, resync, indexers)
		},
	})
	if err != nil {
		panic(fmt.Sprintf("bench: controller-runtime cache: %v", err))
	}
	inf, err := c.GetInformer(context.Background(), obj)
	if err != nil {
		panic(fmt.Sprintf("bench: controller-runtime GetInformer(%T): %v", obj, err))
	}
	return &crInformer{cache: c, example: obj, inf: inf, fastOptsOut: fastOptsOut}
}

// AddHandler gets the informer from the cache and adds h as controller-runtime's source.Kind
// adds a controller's handler: AddEventHandlerWithOptions with a logger, so that the bridge's
// defaults apply. With fastOptsOut (the bridge's DefaultHandlerMaxPending on), a handler not
// expected to stall, which the workloads count every notification of, opts out of coalescing
// through the kcache informer behind the bridge (clientgo.Unwrap), as bridgeInformer.AddHandler
// does and as a user would for a handler that must see every intermediate state: coalesced, it
// would miss notifications the workload waits for. h.ExpectStall changes nothing otherwise:
// client-go has no bound, and cr-bridge keeps the bridge's default (none).
func (i *crInformer) AddHandler(h Handler) error {
	inf, err := i.cache.GetInformer(context.Background(), i.example)
	if err != nil {
		return err
	}
	if i.fastOptsOut && !h.ExpectStall {
		si, _ := inf.(toolscache.SharedInformer)
		k, ok := clientgo.Unwrap(si)
		if !ok {
			return fmt.Errorf("bench: controller-runtime's informer is a %T, not the bridge's", inf)
		}
		unbounded := math.MaxInt
		_, err := k.AddEventHandlerWithOptions(kcache.ResourceEventHandlerDetailedFuncs{
			AddFunc: h.Add, UpdateFunc: h.Update, DeleteFunc: h.Delete,
		}, kcache.HandlerOptions{MaxPending: &unbounded})
		return err
	}
	logger := klog.Background().WithValues("source", "kind")
	_, err = inf.AddEventHandlerWithOptions(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: h.Add, UpdateFunc: h.Update, DeleteFunc: h.Delete,
	}, toolscache.HandlerOptions{Logger: &logger})
	return err
}

// Run starts the cache, which runs its informers until ctx is done, and waits until they have
// stopped.
func (i *crInformer) Run(ctx context.Context) {
	if err := i.cache.Start(ctx); err != nil {
		panic(fmt.Sprintf("bench: controller-runtime cache Start: %v", err))
	}
}

// HasSynced reports whether the informer has synced, as controller-runtime's WaitForCacheSync
// asks it.
func (i *crInformer) HasSynced() bool { return i.inf.HasSynced() }

// Indexer returns the indexer of the informer controller-runtime built: client-go's, or the
// bridge's client-go Indexer over kcache's store.
func (i *crInformer) Indexer() Indexer {
	return i.inf.(interface{ GetIndexer() toolscache.Indexer }).GetIndexer()
}
