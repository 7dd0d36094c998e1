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
	if owner, ok := controllerOwner(obj, ""); ok {
		return KeyByName(owner)
	}
	return KeyByName(obj)
}

// controllerOwner returns the identity (namespace, name and UID) of obj's controlling owner — the
// owner reference with controller=true — if it has one of kind ("" for any kind). Every rule
// about controlled objects goes through it: which objects a ring shards as controlled objects
// (Resource.ownerOf), the shard key they follow (Resource.controlledKey, KeyByControllerOwner)
// and the owner whose state they follow in a pass.
func controllerOwner(obj metav1.Object, kind string) (*metav1.ObjectMeta, bool) {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || kind != "" && ref.Kind != kind {
		return nil, false
	}
	return &metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: ref.Name, UID: ref.UID}, true
}
