package checksum

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
)

// EnqueueKey returns the event handler of the ConfigMaps: every Add, Update and Delete
// enqueues the ConfigMap's namespace/name. Enqueueing every update matters for sharding: in
// label mode the drain mark the sharder sets is a label-only update, and it must reach the
// member's Gate.
func EnqueueKey(enqueue func(key string)) cache.ResourceEventHandlerFuncs {
	add := func(obj interface{}) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			enqueue(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    add,
		UpdateFunc: func(_, obj interface{}) { add(obj) },
		DeleteFunc: add,
	}
}

// EnqueueOwner returns the event handler of the Secrets that ConfigMaps control: on every
// Add, Update and Delete of such a Secret it calls enqueue with its controlling ConfigMap's
// namespace/name, as controller-runtime's Owns does.
//
// All three events matter in a sharded controller. When a ConfigMap moves to a new member, its
// Secret moves too, but the two informers are not ordered: the new member may reconcile the
// ConfigMap before its cache holds the Secret, find none, try to create it, get AlreadyExists
// and stop ("the cache is behind; an event brings it"). The Secret then reaches the member as
// an Add — its shard label entered the member's selection — not as an Update, so a handler
// that enqueues the owner only on Update leaves the ConfigMap unreconciled until it changes
// again. A Delete (the Secret removed by hand, or moved away) must bring the owner back too.
func EnqueueOwner(enqueue func(key string)) cache.ResourceEventHandlerFuncs {
	owner := func(obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		if ref := metav1.GetControllerOfNoCopy(s); ref != nil && ref.Kind == "ConfigMap" {
			enqueue(s.Namespace + "/" + ref.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    owner,
		UpdateFunc: func(_, obj interface{}) { owner(obj) },
		DeleteFunc: owner,
	}
}

// ReconcileKey reconciles the ConfigMap of key (namespace/name) as the member's caches show
// it: configMaps and secrets are listers of those caches. A ConfigMap that is not cached is
// skipped (deleted, or not this member's; its Secret goes with it by garbage collection).
func ReconcileKey(ctx context.Context, client corev1client.SecretsGetter, configMaps listers.ResourceIndexer[*corev1.ConfigMap],
	secrets listers.ResourceIndexer[*corev1.Secret], key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key this controller enqueues
	}
	cm, err := listers.NewNamespaced(configMaps, ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	current, err := listers.NewNamespaced(secrets, ns).Get(SecretName(name))
	switch {
	case apierrors.IsNotFound(err):
		current = nil
	case err != nil:
		return err
	}
	return Reconcile(ctx, client, cm, current)
}
