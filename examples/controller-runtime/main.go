// Command controller-runtime runs a controller-runtime manager whose cache is built from kcache
// informers through the clientgo bridge — the one line is NewInformer in the cache options.
// The reconciler (package secretsync) keeps a Secret with the data of every ConfigMap labelled
// secretsync.kcache.dev/sync=true, in the namespace given, until interrupted:
//
//	cd examples/controller-runtime && go run . -kubeconfig ~/.kube/config -namespace default
//
// With -debug-addr (e.g. 127.0.0.1:0) it also serves kcache's debug page there, at
// /debug/kcache/, and prints its URL: the cache's informers and their handlers, their state
// and counters (the controller's own workqueue is controller-runtime's, not listed there).
//
// It lives in its own module so that the kcache module never depends on controller-runtime.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/examples/controller-runtime/secretsync"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime:", err)
		os.Exit(1)
	}
}

func run() error {
	home, _ := os.UserHomeDir()
	kubeconfig := flag.String("kubeconfig", filepath.Join(home, ".kube", "config"), "path to a kubeconfig file")
	namespace := flag.String("namespace", "default", "namespace to sync")
	debugAddr := flag.String("debug-addr", "", "serve kcache's debug page at /debug/kcache/ on this address (e.g. 127.0.0.1:0)")
	maxPending := flag.Int("max-pending", 1000, "notifications a stalled handler queues before they coalesce per object (kcache's MaxPending)")
	klog.InitFlags(nil)
	flag.Parse()
	ctrl.SetLogger(klog.Background())

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Cache: cache.Options{
			// The switch to kcache: every informer of the cache is a kcache informer. Plain
			// clientgo.NewSharedIndexInformer works too; NewInformerFunc adds kcache's options.
			NewInformer: clientgo.NewInformerFunc(clientgo.Options{
				DefaultHandlerMaxPending: ptr.To(*maxPending),
				ContainPanics:            ptr.To(true),
			}),
			DefaultNamespaces: map[string]cache.Config{*namespace: {}},
			ByObject:          secretsync.CacheByObject(),
		},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if *debugAddr != "" {
		url, err := serveDebug(ctx, *debugAddr)
		if err != nil {
			return err
		}
		fmt.Println("debug page:", url)
	}
	r := &secretsync.Reconciler{Client: mgr.GetClient()}
	if err := r.SetupWithManager(ctx, mgr, "secretsync"); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
