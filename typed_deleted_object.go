package cache

import "strings"

// DeletedObject is what a TypedResourceEventHandler's OnDelete receives: the deleted object if
// the informer has it, and the tombstone if the informer only learned of the deletion on a
// relist.
//
// GetKey and GetObjectName replace DeletionHandlingMetaNamespaceKeyFunc and
// DeletionHandlingObjectToName; GetName and GetNamespace make a DeletedObject usable with
// klog.KObj, logging the same as the object itself would. All four work whether or not
// OptionalObj is set.
type DeletedObject[T Object] struct {
	// OptionalObj is the deleted object as the informer last saw it. After a missed deletion
	// it may be an older version than the one that was deleted, and it is the zero T (a nil
	// pointer) when the informer had no copy at all. kcache also leaves it zero when the
	// tombstone holds an object that is not a T (client-go panics there); FinalStateUnknown
	// then still carries the key.
	OptionalObj T

	// FinalStateUnknown is nil when OptionalObj is the object as it was deleted. Otherwise the
	// deletion was detected on a relist and FinalStateUnknown is the tombstone, whose Key is
	// the key the object was stored under and whose Obj is the untyped form of OptionalObj.
	FinalStateUnknown *DeletedFinalStateUnknown
}

// GetObjectName returns the namespace and name of the deleted object: split from the
// tombstone's key when there is a tombstone (at the first "/"; a key without one is a name
// without a namespace, and further "/" stay in the name), otherwise read from OptionalObj. It
// returns the zero ObjectName when there is neither a tombstone nor an object.
func (d DeletedObject[T]) GetObjectName() ObjectName {
	if d.FinalStateUnknown != nil {
		namespace, name, found := strings.Cut(d.FinalStateUnknown.Key, "/")
		if !found {
			return ObjectName{Name: namespace}
		}
		return ObjectName{Namespace: namespace, Name: name}
	}
	var zero T
	if d.OptionalObj == zero {
		return ObjectName{}
	}
	return ObjectName{Namespace: d.OptionalObj.GetNamespace(), Name: d.OptionalObj.GetName()}
}

// GetName returns the name of the deleted object, without its namespace.
func (d DeletedObject[T]) GetName() string {
	return d.GetObjectName().Name
}

// GetNamespace returns the namespace of the deleted object; "" for a cluster-scoped object.
func (d DeletedObject[T]) GetNamespace() string {
	return d.GetObjectName().Namespace
}

// GetKey returns the key the deleted object was stored under: the tombstone's key if there is
// one, otherwise "namespace/name" (or "name" for a cluster-scoped object) of OptionalObj, as
// MetaNamespaceKeyFunc computes it. It returns "" when there is neither.
func (d DeletedObject[T]) GetKey() string {
	if d.FinalStateUnknown != nil {
		return d.FinalStateUnknown.Key
	}
	var zero T
	if d.OptionalObj == zero {
		return ""
	}
	if namespace := d.OptionalObj.GetNamespace(); namespace != "" {
		return namespace + "/" + d.OptionalObj.GetName()
	}
	return d.OptionalObj.GetName()
}
