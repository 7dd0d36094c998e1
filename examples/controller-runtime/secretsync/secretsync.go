// Package secretsync is a small controller-runtime reconciler: for every ConfigMap labelled
// SyncLabel it keeps a Secret of the same namespace and name that holds the ConfigMap's data,
// labelled ManagedLabel and owned (as controller) by the ConfigMap. A Secret it manages whose
// ConfigMap is gone, or no longer labelled, is deleted by the reconciler itself, so the
// outcome does not depend on the cluster's garbage collector. Secrets are found by owner
// through a field index (OwnerIndex).
//
// The manager's cache selects both kinds by label (CacheByObject), so it holds only the
// ConfigMaps to sync and the Secrets this controller made.
package secretsync

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	// SyncLabel marks a ConfigMap whose data is to be kept in a Secret: value "true".
	SyncLabel = "secretsync.kcache.dev/sync"
	// ManagedLabel marks the Secrets the reconciler made: value "true".
	ManagedLabel = "secretsync.kcache.dev/managed"
	// OwnerIndex is the field index of Secrets by the name of their controlling ConfigMap.
	OwnerIndex = ".metadata.controller.configmap"
)

// CacheByObject is the manager cache's ByObject: ConfigMaps labelled SyncLabel=true and
// Secrets labelled ManagedLabel=true only.
func CacheByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{SyncLabel: "true"})},
		&corev1.Secret{}:    {Label: labels.SelectorFromSet(labels.Set{ManagedLabel: "true"})},
	}
}

// Reconciler keeps the Secrets in sync. Client reads from the manager's cache.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager adds the owner index and the controller (named name) to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, name string) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Secret{}, OwnerIndex, ownerName); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Complete(r)
}

// ownerName indexes a Secret by the name of its controlling ConfigMap, if any.
func ownerName(obj client.Object) []string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.Kind != "ConfigMap" || owner.APIVersion != "v1" {
		return nil
	}
	return []string{owner.Name}
}

// Reconcile brings the Secret of the ConfigMap req names in line with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Client.Get(ctx, req.NamespacedName, &cm); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.deleteOwned(ctx, req)
	}
	if !cm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.deleteOwned(ctx, req)
	}

	want := map[string][]byte{}
	for k, v := range cm.Data {
		want[k] = []byte(v)
	}
	var secret corev1.Secret
	err := r.Client.Get(ctx, req.NamespacedName, &secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name, Labels: map[string]string{ManagedLabel: "true"}},
			Data:       want,
		}
		if err := controllerutil.SetControllerReference(&cm, &secret, r.Client.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.Client.Create(ctx, &secret)
	case err != nil:
		return ctrl.Result{}, err
	}
	if !metav1.IsControlledBy(&secret, &cm) {
		return ctrl.Result{}, fmt.Errorf("secret %s exists and is not controlled by its ConfigMap", req.NamespacedName)
	}
	if equalData(secret.Data, want) {
		return ctrl.Result{}, nil
	}
	updated := secret.DeepCopy() // never change the cache's object
	updated.Data = want
	return ctrl.Result{}, r.Client.Update(ctx, updated)
}

// deleteOwned deletes the Secrets controlled by the ConfigMap req names, which is gone (or
// left the cache's selection).
func (r *Reconciler) deleteOwned(ctx context.Context, req ctrl.Request) error {
	var owned corev1.SecretList
	if err := r.Client.List(ctx, &owned, client.InNamespace(req.Namespace), client.MatchingFields{OwnerIndex: req.Name}); err != nil {
		return err
	}
	for i := range owned.Items {
		if err := r.Client.Delete(ctx, &owned.Items[i], client.Preconditions{UID: &owned.Items[i].UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

func equalData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}
