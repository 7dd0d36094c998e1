package sharding

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeyFunc returns the shard key of an object: objects with the same key always belong to the
// same member. It must depend only on fields that never change over the object's life
// (namespace, name, controller reference), or the object would move whenever they change.
type KeyFunc func(obj metav1.Object) string

// KeyByName keys an object by namespace/name (name alone for cluster-scoped objects), so the
// objects of a resource spread evenly. It is the default.
func KeyByName(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// KeyByNamespace keys an object by its namespace, so one member owns all objects of a
// namespace (useful when a reconcile reads its namespace's other objects). Cluster-scoped
// objects are keyed by name.
func KeyByNamespace(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	return obj.GetName()
}

// KeyByControllerOwner keys an object by its controlling owner's namespace/name — the owner
// reference with controller=true — so an owner keyed by KeyByName and the objects it controls
// share a key and land on the same member. An object without a controller is keyed by its own
// namespace/name.
func KeyByControllerOwner(obj metav1.Object) string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return KeyByName(&metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: ref.Name})
	}
	return KeyByName(obj)
}
