package main

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/examples/sharded/checksum"
	"github.com/kcache/cache/sharding"
)

// runControllerRuntime runs one member on a controller-runtime manager: its cache builds
// kcache informers (clientgo.NewSharedIndexInformer) over the shard's ListerWatcher, so they
// list and watch only this member's ConfigMaps and Secrets (by label or by hash range), and
// the reconciler goes through the shard's gate. controller-runtime's workqueue, like kcache's, hands a request to one worker
// at a time, and its default handler enqueues every update, so drain marks reach the gate.
func runControllerRuntime(ctx context.Context, config *rest.Config, f flags) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shard, client2, runErr, err := startShard(ctx, config, f)
	if err != nil {
		return err
	}

	logger := klog.FromContext(ctx).WithValues("member", shard.Name())
	logger.Info("Joined the ring", "selection", shard.Selection(), "runtime", "controller-runtime")
	logSelection(ctx, logger, shard)
	// The cache's informers list and watch through the shard's ListerWatcher of their resource.
	newInformer := func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		switch obj.(type) {
		case *corev1.ConfigMap:
			lw = shard.ListerWatcher(configMaps, lw)
		case *corev1.Secret:
			lw = shard.ListerWatcher(secrets, lw)
		}
		return clientgo.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Cache: crcache.Options{
			NewInformer:       newInformer,
			DefaultNamespaces: map[string]crcache.Config{f.namespace: {}},
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	reader := mgr.GetCache()
	// The gate reads the member's cache through controller-runtime's reader.
	lookup := func(key string) (interface{}, bool, error) {
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil {
			return nil, false, err
		}
		cm := &corev1.ConfigMap{}
		switch err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); {
		case apierrors.IsNotFound(err):
			return nil, false, nil
		case err != nil:
			return nil, false, err
		}
		return cm, true, nil
	}
	gate := shard.Gate(configMaps, lookup)
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		err := gate.Do(ctx, req.String(), func(ctx context.Context) error {
			cm := &corev1.ConfigMap{}
			if err := reader.Get(ctx, req.NamespacedName, cm); err != nil {
				return client.IgnoreNotFound(err)
			}
			var current *corev1.Secret
			s := &corev1.Secret{}
			switch err := reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: checksum.SecretName(req.Name)}, s); {
			case err == nil:
				current = s
			case !apierrors.IsNotFound(err):
				return err
			}
			return checksum.Reconcile(ctx, client2.CoreV1(), cm, current)
		})
		if err == nil || sharding.Skipped(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	})
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Complete(r); err != nil {
		return err
	}
	mgrErr := make(chan error, 1)
	go func() { mgrErr <- mgr.Start(ctx) }()
	select {
	case err := <-runErr: // the lease ended
		cancel()
		<-mgrErr
		return err
	case err := <-mgrErr:
		cancel()
		return errors.Join(err, <-runErr)
	}
}
