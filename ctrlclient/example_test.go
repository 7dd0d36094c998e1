package ctrlclient_test

import (
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/ctrlclient"
)

// ExampleNewClient builds a manager whose cache runs on kcache informers and whose client
// (mgr.GetClient(), what reconcilers use) reads its own writes. It needs a cluster, so it is
// compiled but not run.
func ExampleNewClient() {
	var cfg *rest.Config // from ctrl.GetConfigOrDie() in a real program
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:     crcache.Options{NewInformer: clientgo.NewSharedIndexInformer},
		NewClient: ctrlclient.NewClient(ctrlclient.Options{}),
	})
	if err != nil {
		return
	}
	_ = mgr.GetClient() // a *ctrlclient.Client: its Stats() count the reads that waited
}
