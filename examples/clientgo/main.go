// Command clientgo runs a kcache SharedIndexInformer against a real cluster: client-go
// supplies only the REST client, wrapped in a kcache ListWatch; everything from the
// Reflector to the handlers is kcache. It lives in its own module so that the kcache module
// itself never depends on client-go.
//
//	cd examples/clientgo && go run . -kubeconfig ~/.kube/config -namespace default
//
// It prints every pod add, update and delete until interrupted.
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

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcache/cache"
)

func main() {
	home, _ := os.UserHomeDir()
	kubeconfig := flag.String("kubeconfig", filepath.Join(home, ".kube", "config"), "path to a kubeconfig file")
	namespace := flag.String("namespace", metav1.NamespaceAll, "namespace to watch (default: all)")
	resync := flag.Duration("resync", 0, "handler resync period (0: none)")
	flag.Parse()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgo:", err)
		os.Exit(1)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgo:", err)
		os.Exit(1)
	}
	pods := client.CoreV1().Pods(*namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return pods.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, options)
		},
	}

	informer := cache.NewSharedIndexInformer(lw, &v1.Pod{}, *resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	registration, err := informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, initial bool) {
			p := obj.(*v1.Pod)
			fmt.Printf("add    %s/%s (initial list: %v)\n", p.Namespace, p.Name, initial)
		},
		UpdateFunc: func(oldObj, newObj interface{}) {
			p := newObj.(*v1.Pod)
			fmt.Printf("update %s/%s phase=%s\n", p.Namespace, p.Name, p.Status.Phase)
		},
		DeleteFunc: func(obj interface{}) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				fmt.Printf("delete %s (noticed by a relist)\n", t.Key)
				return
			}
			p := obj.(*v1.Pod)
			fmt.Printf("delete %s/%s\n", p.Namespace, p.Name)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgo:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go informer.RunWithContext(ctx)

	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitFor(syncCtx, "pod cache", informer.HasSyncedChecker(), registration.HasSyncedChecker()) {
		fmt.Fprintln(os.Stderr, "clientgo: cache did not sync:", context.Cause(syncCtx))
		os.Exit(1)
	}
	fmt.Printf("synced: %d pods cached\n", len(informer.GetStore().ListKeys()))
	<-ctx.Done()
}
