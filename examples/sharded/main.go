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
// The controller's client runs at -qps/-burst (default 20/30, controller-runtime's defaults),
// the sharder's writes at -sharder-qps/-sharder-burst (default 200/400). -lease-duration,
// -renew-deadline and -retry-period set the member and sharder leases' timing (default 15s,
// 10s, 2s, client-go leader election's); a replica's member names start with -name (default:
// the host name).
//
// -selection chooses how members select their ConfigMaps: labels (the default) has the
// sharder label every ConfigMap with its member; hash never writes to them: members own hash
// ranges of the ConfigMaps' UIDs, selected on the server when it applies shard selectors (the
// ShardedListAndWatch feature), client-side otherwise or with -client-side, as logged at
// start. In hash mode the Secrets follow their ConfigMap's UID (from their controller
// reference), selected client-side.
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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
	"github.com/kcache/cache/examples/sharded/checksum"
	"github.com/kcache/cache/informers"
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
	qps               float64
	burst             int
	sharderQPS        float64
	sharderBurst      int
	name              string
	timing            sharding.LeaseTiming
	selection         sharding.Selection
	clientSide        bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sharded:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig, f, err := parseFlags(flag.ExitOnError, os.Args[1:])
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = float32(f.qps), f.burst
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

// parseFlags reads the command line: the kubeconfig's path and the replica's flags.
func parseFlags(onError flag.ErrorHandling, args []string) (string, flags, error) {
	// A flag set of our own: controller-runtime registers its own -kubeconfig on the global one.
	fs := flag.NewFlagSet(os.Args[0], onError)
	home, _ := os.UserHomeDir()
	kubeconfig := fs.String("kubeconfig", filepath.Join(home, ".kube", "config"), "path to a kubeconfig file")
	var f flags
	fs.StringVar(&f.namespace, "namespace", "default", "namespace of the ConfigMaps and of the ring's Leases")
	fs.StringVar(&f.ring, "ring", "checksum", "ring name, the same in every replica")
	fs.IntVar(&f.workers, "workers", 4, "concurrent reconciles")
	fs.BoolVar(&f.controllerRuntime, "controller-runtime", false, "run the controller on controller-runtime")
	// client-go's defaults (5/s, bursts of 10) would make the first sync of a few hundred
	// objects, and every hand-over, wait for the client rather than the server.
	fs.Float64Var(&f.qps, "qps", 20, "client-side rate limit of the controller's requests per second (controller-runtime's default)")
	fs.IntVar(&f.burst, "burst", 30, "client-side burst of the controller's requests (controller-runtime's default)")
	fs.Float64Var(&f.sharderQPS, "sharder-qps", 200, "client-side rate limit of the sharder's and the acknowledgements' writes per second (the library raises it to at least 100)")
	fs.IntVar(&f.sharderBurst, "sharder-burst", 400, "client-side burst of the sharder's writes (at least 200)")
	fs.StringVar(&f.name, "name", "", "prefix of this replica's member names (default: the host name)")
	fs.DurationVar(&f.timing.LeaseDuration, "lease-duration", 15*time.Second, "how long a member's or the sharder's lease lasts without renewal")
	fs.DurationVar(&f.timing.RenewDeadline, "renew-deadline", 10*time.Second, "how long a lease holder retries a renewal before giving up")
	fs.DurationVar(&f.timing.RetryPeriod, "retry-period", 2*time.Second, "interval between renewals")
	selection := fs.String("selection", "labels", "how members select their objects: labels (the sharder labels each object) or hash (hash ranges of the UID; nothing written to the objects)")
	fs.BoolVar(&f.clientSide, "client-side", false, "with -selection hash, select client-side even if the server applies shard selectors")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", f, err
	}
	switch *selection {
	case "labels":
		f.selection = sharding.SelectByLabels
	case "hash":
		f.selection = sharding.SelectByHash
	default:
		return "", f, fmt.Errorf("-selection %q: want labels or hash", *selection)
	}
	return *kubeconfig, f, nil
}

// newShard returns this replica's member of the ring.
func newShard(config *rest.Config, f flags) (*sharding.Shard, error) {
	// The sharder moves many objects at once: its writes get their own, higher limit. (The
	// Leases' client has none, so renewals never wait behind them.)
	sharderConfig := rest.CopyConfig(config)
	sharderConfig.QPS, sharderConfig.Burst = float32(f.sharderQPS), f.sharderBurst
	resource := sharding.Resource{
		Resource:   configMaps,
		Namespace:  f.namespace, // shard only this namespace's ConfigMaps
		Kind:       "ConfigMap", // and only Secrets a ConfigMap controls
		Controlled: []schema.GroupVersionResource{secrets},
	}
	if f.selection == sharding.SelectByHash {
		// Keyed by UID, which the server can hash: every ConfigMap stays with its member for
		// life, and the Secrets follow the UID in their controller reference.
		resource.ShardField = sharding.FieldUID
	}
	return sharding.New(sharderConfig, sharding.Options{
		Ring:                f.ring,
		Namespace:           f.namespace,
		Name:                f.name,
		LeaseTiming:         f.timing,
		Selection:           f.selection,
		ClientSideSelection: f.clientSide,
		Resources:           []sharding.Resource{resource},
	})
}

// logSelection says how this member selects its objects.
func logSelection(ctx context.Context, logger klog.Logger, shard *sharding.Shard) {
	if shard.Selection() == sharding.SelectByLabels {
		logger.Info("Selecting by label", "selector", shard.Selector().String())
		return
	}
	server, err := shard.ServerSelection(ctx, configMaps)
	switch {
	case err != nil:
		logger.Info("Selecting by hash range, client-side: probing the server's shard selectors failed", "err", err)
	case server:
		logger.Info("Selecting by hash range: ConfigMaps on the server (shard selectors), Secrets client-side")
	default:
		logger.Info("Selecting by hash range, client-side: every member receives every event")
	}
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
	logger.Info("Joined the ring", "selection", shard.Selection())
	logSelection(ctx, logger, shard)

	// The factory's informers list and watch only this member's share: their clients go
	// through SelectClient (the member's label selector, or its hash ranges).
	factory := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace(f.namespace),
		informers.WithTransform(cache.TransformStripManagedFields()))
	defer factory.Shutdown()
	cms := informers.For[*corev1.ConfigMap](factory, sharding.SelectClient(shard, configMaps, client.CoreV1().ConfigMaps))
	owned := informers.For[*corev1.Secret](factory, sharding.SelectClient(shard, secrets, client.CoreV1().Secrets))
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	// Every ConfigMap event is enqueued, so a drain mark reaches the gate (labels); every Secret event
	// (Add, Update and Delete) enqueues its owner, so an owner reconciled before its Secret
	// reached this member's cache is reconciled again when it does (checksum.EnqueueOwner).
	if _, err := cms.Informer().AddEventHandler(checksum.EnqueueKey(queue.Add)); err != nil {
		return err
	}
	if _, err := owned.Informer().AddEventHandler(checksum.EnqueueOwner(queue.Add)); err != nil {
		return err
	}
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		return err
	}

	gate := shard.Gate(configMaps, cms.Informer().GetIndexer().GetByKey)
	reconcile := func(ctx context.Context, key string) error {
		return checksum.ReconcileKey(ctx, client.CoreV1(), cms.Lister(), owned.Lister(), key)
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
