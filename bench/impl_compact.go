package main

import (
	"k8s.io/apimachinery/pkg/runtime"

	cache "github.com/kcache/cache"
)

// The memory variants of kcache: kcacheImpl with managedFields stripped by a transform
// (kcache-strip), or with compact caches (kcache-compact, and kcache-compact-z compressed).
// Compare each with client-go: -impl kcache-compact,client-go.
var (
	kcacheStripImpl    = kcacheVariant("kcache-strip", nil, true)
	kcacheCompactImpl  = kcacheVariant("kcache-compact", &cache.CompactOptions{}, false)
	kcacheCompactZImpl = kcacheVariant("kcache-compact-z", &cache.CompactOptions{Compress: true}, false)
)

// kcacheVariant is kcacheImpl whose indexers and informers keep objects compact (compact not
// nil) or drop managedFields (strip).
func kcacheVariant(name string, compact *cache.CompactOptions, strip bool) *Impl {
	impl := *kcacheImpl
	impl.Name = name
	var storeOpts []cache.StoreOption
	if compact != nil {
		storeOpts = append(storeOpts, cache.WithCompactStorage(*compact))
	}
	if strip {
		storeOpts = append(storeOpts, cache.WithTransformer(cache.TransformStripManagedFields()))
	}
	impl.NewIndexer = func(indexes ...string) Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, kcacheIndexers(indexes), storeOpts...)
	}
	impl.NewInformer = func(lw ListerWatcher, example runtime.Object) Informer {
		inf := cache.NewSharedIndexInformerWithOptions(lw, example, cache.SharedIndexInformerOptions{
			Indexers: kcacheIndexers([]string{"namespace"}),
			Compact:  compact,
		})
		if strip {
			_ = inf.SetTransform(cache.TransformStripManagedFields())
		}
		return kcacheInformer{inf}
	}
	return &impl
}

func init() {
	allImpls = append(allImpls, kcacheStripImpl, kcacheCompactImpl, kcacheCompactZImpl)
}
