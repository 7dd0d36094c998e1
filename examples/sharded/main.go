// Command sharded runs one replica of a sharded controller: start it several times (in one
// namespace, with the same -ring) and each replica caches, watches and reconciles about 1/N of
// the ConfigMaps, handing them over as replicas come and go. See SHARDING.md.
//
//	cd examples/sharded && go run . -kubeconfig ~/.kube/config -namespace demo
//	cd examples/sharded && go run . -kubeconfig ~/.kube/config -namespace demo -controller-runtime
//
// The controller (package checksum) keeps a Secret "<name>-checksum" with the SHA-256 of each
// ConfigMap's data in the namespace; the Secrets are the ConfigMaps' controlled objects and
// follow them from replica to replica. By default it runs on kcache's informers factory and
// workqueue; -controller-runtime runs the same controller on a controller-runtime manager
// whose cache holds kcache informers (the clientgo bridge).
//
// A replica whose lease is lost (it could not reach the API server in time) fences itself
// and rejoins as a new member, with fresh informers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
	"github.com/kcache/cache/examples/sharded/checksum"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/listers"
	"github.com/kcache/cache/sharding"
	"github.com/kcache/cache/workqueue"
)

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

type flags struct {
	namespace         string
	ring              string
	workers           int
	controllerRuntime bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sharded:", err)
		os.Exit(1)
	}
}

func run() error {
	// A flag set of our own: controller-runtime registers its own -kubeconfig on the global one.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	home, _ := os.UserHomeDir()
	kubeconfig := fs.String("kubeconfig", filepath.Join(home, ".kube", "config"), "path to a kubeconfig file")
	var f flags
	fs.StringVar(&f.namespace, "namespace", "default", "namespace of the ConfigMaps and of the ring's Leases")
	fs.StringVar(&f.ring, "ring", "checksum", "ring name, the same in every replica")
	fs.IntVar(&f.workers, "workers", 4, "concurrent reconciles")
	fs.BoolVar(&f.controllerRuntime, "controller-runtime", false, "run the controller on controller-runtime")
	klog.InitFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	replica := runKcache
	if f.controllerRuntime {
		replica = runControllerRuntime
	}
	// Each pass of the loop is one member. A lost lease ends it; the next joins afresh.
	for {
		err := replica(ctx, config, f)
		if !errors.Is(err, sharding.ErrLeaseLost) || ctx.Err() != nil {
			return err
		}
		klog.FromContext(ctx).Info("Lease lost; rejoining as a new member")
	}
}

// newShard returns this replica's member of the ring.
func newShard(config *rest.Config, f flags) (*sharding.Shard, error) {
	return sharding.New(config, sharding.Options{
		Ring:      f.ring,
		Namespace: f.namespace,
		Resources: []sharding.Resource{{
			Resource:   configMaps,
			Namespace:  f.namespace, // shard only this namespace's ConfigMaps
			Kind:       "ConfigMap", // and only Secrets a ConfigMap controls
			Controlled: []schema.GroupVersionResource{secrets},
		}},
	})
}

// startShard builds this member's shard and a clientset, runs the shard on ctx and returns once
// the member has joined the ring. runErr receives the shard's result when it stops (ctx
// cancelled, or the lease lost).
func startShard(ctx context.Context, config *rest.Config, f flags) (shard *sharding.Shard, client kubernetes.Interface, runErr <-chan error, err error) {
	if shard, err = newShard(config, f); err != nil {
		return nil, nil, nil, err
	}
	if client, err = kubernetes.NewForConfig(config); err != nil {
		return nil, nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- shard.Run(ctx) }()
	select {
	case <-shard.Ready():
		return shard, client, done, nil
	case err := <-done:
		return nil, nil, nil, err
	}
}

// runKcache runs one member on kcache's informers factory and workqueue.
func runKcache(ctx context.Context, config *rest.Config, f flags) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shard, client, runErr, err := startShard(ctx, config, f)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithValues("member", shard.Name())
	logger.Info("Joined the ring")

	// The factory's informers list and watch only this member's share.
	factory := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace(f.namespace), shard.FactoryOption(),
		informers.WithTransform(cache.TransformStripManagedFields()))
	defer factory.Shutdown()
	cms := informers.For[*corev1.ConfigMap](factory, client.CoreV1().ConfigMaps)
	owned := informers.For[*corev1.Secret](factory, client.CoreV1().Secrets)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	enqueue := func(obj interface{}) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	// Every update is enqueued, so a drain mark reaches the gate.
	if _, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o interface{}) { enqueue(o) }, DeleteFunc: enqueue,
	}); err != nil {
		return err
	}
	if _, err := owned.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Secret]{
		UpdateFunc: func(_, s *corev1.Secret) {
			if ref := metav1GetController(s); ref != "" {
				queue.Add(s.Namespace + "/" + ref)
			}
		},
	}); err != nil {
		return err
	}
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}

	gate := shard.Gate(configMaps, cms.Informer().GetIndexer().GetByKey)
	cmLister := listers.NewNamespaced(cms.Lister(), f.namespace)
	secretLister := listers.NewNamespaced(owned.Lister(), f.namespace)
	reconcile := func(ctx context.Context, key string) error {
		_, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil {
			return nil
		}
		cm, err := cmLister.Get(name)
		if err != nil {
			return nil // deleted; its Secret goes with it (garbage collection)
		}
		current, err := secretLister.Get(checksum.SecretName(name))
		if err != nil {
			current = nil
		}
		return checksum.Reconcile(ctx, client.CoreV1(), cm, current)
	}
	done := make(chan struct{})
	for range f.workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				err := gate.Do(ctx, key, func(ctx context.Context) error { return reconcile(ctx, key) })
				switch {
				case err == nil, sharding.Skipped(err):
					queue.Forget(key)
				default:
					logger.V(2).Info("Reconcile failed", "key", key, "err", err)
					queue.AddRateLimited(key)
				}
				queue.Done(key)
			}
		}()
	}
	err = <-runErr // the lease ended: ctx cancelled (clean leave) or lost
	queue.ShutDown()
	for range f.workers {
		<-done
	}
	return err
}

// metav1GetController returns the name of obj's controlling owner, or "".
func metav1GetController(s *corev1.Secret) string {
	for _, ref := range s.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.Name
		}
	}
	return ""
}
