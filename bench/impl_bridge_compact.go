package main

import (
	kcache "github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
)

// The compact store through the bridge: bridge-compact is bridge with clientgo.Options.Compact
// set, cr-bridge-compact a controller-runtime cache whose NewInformer is
// clientgo.NewInformerFunc with it, the line a controller-runtime user writes. Compare them with
// client-go and cr-client-go.
var (
	bridgeCompactImpl   = bridgeCompactVariant()
	crBridgeCompactImpl = crVariant("cr-bridge-compact", kcacheCompactImpl,
		clientgo.NewInformerFunc(clientgo.Options{Compact: &kcache.CompactOptions{}}), false)
)

// bridgeCompactVariant is bridge-compact; its indexers are kcache-compact's.
func bridgeCompactVariant() *Impl {
	impl := bridgeVariant("bridge-compact", clientgo.Options{Compact: &kcache.CompactOptions{}})
	impl.NewIndexer = kcacheCompactImpl.NewIndexer
	return impl
}

func init() { allImpls = append(allImpls, bridgeCompactImpl, crBridgeCompactImpl) }
