package integration

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/sharding"
)

// startControllerRuntimeReplica starts a replica whose controller runs on controller-runtime:
// a Manager whose cache builds kcache informers through the clientgo bridge over the shard's
// ListerWatcher, so restricted to the member's share, and a reconciler that goes through the shard's
// gate, with a lookup over the manager's cache. It runs the same recorded reconcile as the
// kcache replicas, in the same ring.
func (e *shardingEnv) startControllerRuntimeReplica(ctx context.Context, name string) *replica {
	t := e.t
	t.Helper()
	r := &replica{name: name, net: newCuttable(), done: make(chan struct{}), runDone: make(chan struct{})}
	cfg, shard, cs := e.newShard(r)
	newInformer := func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		switch obj.(type) {
		case *corev1.ConfigMap:
			lw = shard.ListerWatcher(configMapsResource, lw)
		case *corev1.Secret:
			lw = shard.ListerWatcher(secretsResource, lw)
		}
		return clientgo.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache: crcache.Options{
			NewInformer:       newInformer,
			DefaultNamespaces: map[string]crcache.Config{e.namespace: {}},
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             crconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	reader := mgr.GetCache()
	getCM := func(ctx context.Context) func(string) (*corev1.ConfigMap, error) {
		return func(name string) (*corev1.ConfigMap, error) {
			cm := &corev1.ConfigMap{}
			return cm, reader.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: name}, cm)
		}
	}
	gate := shard.Gate(configMapsResource, func(key string) (interface{}, bool, error) {
		_, name, _ := toolscache.SplitMetaNamespaceKey(key)
		cm, err := getCM(context.Background())(name)
		switch {
		case apierrors.IsNotFound(err):
			return nil, false, nil
		case err != nil:
			return nil, false, err
		}
		return cm, true, nil
	})
	rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		err := gate.Do(ctx, req.String(), func(ctx context.Context) error {
			return e.reconcile(ctx, name, cs, req.String(), getCM(ctx), func(secret string) bool {
				return reader.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: secret}, &corev1.Secret{}) == nil
			})
		})
		switch {
		case err == nil:
			return reconcile.Result{RequeueAfter: e.again}, nil
		case sharding.Skipped(err):
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("sharded-" + name).
		For(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: reconcileWorkers}).
		Complete(rec); err != nil {
		t.Fatal(err)
	}
	r.counts = func() (int, int) {
		cms, secrets := &corev1.ConfigMapList{}, &corev1.SecretList{}
		if reader.List(ctx, cms, client.InNamespace(e.namespace)) != nil || reader.List(ctx, secrets, client.InNamespace(e.namespace)) != nil {
			return -1, -1
		}
		return len(cms.Items), len(secrets.Items)
	}
	r.holds = func(name string) (bool, bool) {
		cm := reader.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: name}, &corev1.ConfigMap{}) == nil
		secret := reader.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: name + "-owned"}, &corev1.Secret{}) == nil
		return cm, secret
	}

	e.run(ctx, r, shard, func(ctx context.Context) {
		if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager of %s: %v", name, err)
		}
	}, nil)
	return r
}
