package main

import (
	"math"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	kcache "github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
)

// bridgeImpl is kcache behind client-go's informer interfaces (the clientgo module), as
// controller-runtime's cache and client-go's generated informers use it: everything is
// kcache's, but informers are built by clientgo.NewSharedIndexInformer and driven through
// client-go's SharedIndexInformer, handler and Indexer types (clientgoInformer, the adapter
// client-go's own informers use here). Compare it with -impl bridge,kcache (the bridge's
// cost) and -impl bridge,client-go.
var bridgeImpl = bridgeVariant("bridge", clientgo.Options{})

// bridgeMaxPendingImpl is bridgeImpl with kcache's extension on for every handler, as
// clientgo.NewInformerFunc sets it for a controller-runtime cache: DefaultHandlerMaxPending
// stallMaxPending, so that a stalled handler's backlog coalesces per object.
var bridgeMaxPendingImpl = bridgeVariant("bridge-maxpending", clientgo.Options{DefaultHandlerMaxPending: func() *int {
	n := stallMaxPending
	return &n
}()})

// bridgeVariant is kcacheImpl with informers built through the bridge with opts.
func bridgeVariant(name string, opts clientgo.Options) *Impl {
	impl := *kcacheImpl
	impl.Name = name
	impl.NewInformer = func(lw ListerWatcher, example runtime.Object) Informer {
		return bridgeInformer{clientgoInformer: clientgoInformer{clientgo.New(lw, example, cache.SharedIndexInformerOptions{
			Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		}, opts)}, fastOptsOut: opts.DefaultHandlerMaxPending != nil}
	}
	return &impl
}

// bridgeInformer adds handlers through client-go's AddEventHandler, so that the bridge's
// defaults apply. With fastOptsOut (a bridge-wide DefaultHandlerMaxPending), a handler not
// expected to stall (the workloads count every notification it gets) opts out of coalescing
// through the kcache informer behind the bridge, as a user would for a handler that must see
// every intermediate state.
type bridgeInformer struct {
	clientgoInformer
	fastOptsOut bool
}

func (i bridgeInformer) AddHandler(h Handler) error {
	if h.ExpectStall || !i.fastOptsOut {
		return i.clientgoInformer.AddHandler(h)
	}
	k, _ := clientgo.Unwrap(i.inf)
	unbounded := math.MaxInt
	_, err := k.AddEventHandlerWithOptions(kcache.ResourceEventHandlerDetailedFuncs{
		AddFunc: h.Add, UpdateFunc: h.Update, DeleteFunc: h.Delete,
	}, kcache.HandlerOptions{MaxPending: &unbounded})
	return err
}

func init() { allImpls = append(allImpls, bridgeImpl, bridgeMaxPendingImpl) }
