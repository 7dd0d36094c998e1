// Command clientgo runs a kcache controller against a real cluster: client-go supplies the
// clientset and nothing else; informers, listers, handlers and the workqueue are kcache's. It
// lives in its own module so that the kcache module itself never depends on client-go.
//
//	cd examples/clientgo && go run . -kubeconfig ~/.kube/config -namespace default
//
// The controller (package podsummary) keeps a ConfigMap "pod-summary" in the namespace that
// counts its pods by phase, until interrupted. It writes only that ConfigMap, and only in the
// namespace given (by default "default"; "" means every namespace).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
	"github.com/kcache/cache/examples/clientgo/podsummary"
	"github.com/kcache/cache/informers"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clientgo:", err)
		os.Exit(1)
	}
}

func run() error {
	home, _ := os.UserHomeDir()
	kubeconfig := flag.String("kubeconfig", filepath.Join(home, ".kube", "config"), "path to a kubeconfig file")
	namespace := flag.String("namespace", "default", `namespace to summarize ("" for all)`)
	resync := flag.Duration("resync", 10*time.Minute, "resync period of the informers (0: none)")
	workers := flag.Int("workers", 2, "concurrent reconciles")
	klog.InitFlags(nil)
	flag.Parse()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}

	// One factory for the whole process: every controller that asks for pods gets the same
	// informer. Dropping managedFields saves memory; the controller never reads them.
	factory := informers.NewSharedInformerFactoryWithOptions(*resync,
		informers.WithNamespace(*namespace),
		informers.WithTransform(cache.TransformStripManagedFields()))
	controller, err := podsummary.New(factory, clientset.CoreV1())
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Deferred calls run last first: stop cancels ctx, then Shutdown waits until every
	// informer has returned — also when run returns early with an error.
	defer factory.Shutdown()
	defer stop()
	factory.StartWithContext(ctx)

	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := factory.WaitForCacheSyncWithContext(syncCtx).AsError(); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Caches synced")
	// Run returns after ctx is cancelled (Ctrl-C, SIGTERM) and the workers finished.
	return controller.Run(ctx, *workers)
}
