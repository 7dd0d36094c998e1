package cache

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KeyFunc computes the key under which a store keeps an object. It must be deterministic: the
// same object always yields the same key.
type KeyFunc func(obj interface{}) (string, error)

// KeyError is returned by stores and queues whenever a KeyFunc fails. It carries the object the
// key could not be computed for, and unwraps to the KeyFunc's error.
type KeyError struct {
	Obj interface{}
	Err error
}

// Error describes the object whose key could not be computed and why.
func (k KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", k.Obj, k.Err)
}

// Unwrap returns the KeyFunc's error, so errors.Is and errors.As see through a KeyError.
func (k KeyError) Unwrap() error {
	return k.Err
}

// ExplicitKey is a key that stands in for an object. MetaNamespaceKeyFunc returns it unchanged,
// which lets a caller that knows the key but not the object (e.g. to delete it) use a Store.
type ExplicitKey string

// DeletedFinalStateUnknown is the tombstone a queue hands out when it learns that an object was
// deleted without seeing the deletion itself: typically a relist no longer contains the object
// because its watch missed the delete. Key is the object's store key; Obj is the last state the
// queue knew of, which may be stale, and may be nil when nothing was known.
//
// It is a value type: handlers receive DeletedFinalStateUnknown, never a pointer to it.
type DeletedFinalStateUnknown struct {
	Key string
	Obj interface{}
}

// MetaNamespaceKeyFunc is the default KeyFunc. For an object with metadata it returns
// "namespace/name", or just "name" when the namespace is empty. An ExplicitKey is returned as
// it is. Anything else is an error ("object has no meta: …").
func MetaNamespaceKeyFunc(obj interface{}) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	accessor, err := metaAccessor(obj)
	if err != nil {
		return "", err
	}
	// Inlined MetaObjectToName(...).String(): this is the hottest key path, and building the
	// string directly avoids an intermediate struct.
	if ns := accessor.GetNamespace(); ns != "" {
		return ns + "/" + accessor.GetName(), nil
	}
	return accessor.GetName(), nil
}

// metaAccessor is meta.Accessor that also rejects a nil pointer of a metadata type, such as
// (*v1.Pod)(nil), which meta.Accessor accepts but whose getters panic. client-go panics on such
// a value; kcache returns an "object has no meta" error like for any other unusable input.
func metaAccessor(obj interface{}) (metav1.Object, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("object has no meta: %w", err)
	}
	if v := reflect.ValueOf(accessor); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("object has no meta: nil %T", obj)
	}
	return accessor, nil
}

// DeletionHandlingMetaNamespaceKeyFunc is MetaNamespaceKeyFunc that also understands tombstones:
// for a DeletedFinalStateUnknown it returns the tombstone's Key. Informers key their indexers
// with it.
func DeletionHandlingMetaNamespaceKeyFunc(obj interface{}) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKeyFunc(obj)
}

// SplitMetaNamespaceKey splits a key made by MetaNamespaceKeyFunc. A key without a slash is a
// cluster-scoped name; a key with one slash is "namespace/name"; anything else is an error.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	first := strings.IndexByte(key, '/')
	if first < 0 {
		return "", key, nil
	}
	if strings.IndexByte(key[first+1:], '/') < 0 {
		return key[:first], key[first+1:], nil
	}
	return "", "", fmt.Errorf("unexpected key format: %q", key)
}

// ObjectName is the structured form of a store key: an object's namespace (empty for
// cluster-scoped objects) and name.
type ObjectName struct {
	Namespace string
	Name      string
}

// NewObjectName returns the ObjectName for namespace and name.
func NewObjectName(namespace, name string) ObjectName {
	return ObjectName{Namespace: namespace, Name: name}
}

// Parts returns the namespace and the name.
func (objName ObjectName) Parts() (namespace, name string) {
	return objName.Namespace, objName.Name
}

// String returns the key MetaNamespaceKeyFunc would compute: "namespace/name", or "name" when
// the namespace is empty. Unlike types.NamespacedName.String, there is no leading slash for
// cluster-scoped objects.
func (objName ObjectName) String() string {
	if objName.Namespace != "" {
		return objName.Namespace + "/" + objName.Name
	}
	return objName.Name
}

// AsNamespacedName returns the same namespace and name as a types.NamespacedName.
func (objName ObjectName) AsNamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: objName.Namespace, Name: objName.Name}
}

// ParseObjectName parses a key in the format ObjectName.String produces. It fails like
// SplitMetaNamespaceKey for a key with more than one slash.
func ParseObjectName(str string) (ObjectName, error) {
	namespace, name, err := SplitMetaNamespaceKey(str)
	return ObjectName{Namespace: namespace, Name: name}, err
}

// NamespacedNameAsObjectName returns the ObjectName with nn's namespace and name.
func NamespacedNameAsObjectName(nn types.NamespacedName) ObjectName {
	return ObjectName{Namespace: nn.Namespace, Name: nn.Name}
}

// ObjectToName returns the ObjectName of an object with metadata, or an error
// ("object has no meta: …") for anything else.
func ObjectToName(obj interface{}) (ObjectName, error) {
	accessor, err := metaAccessor(obj)
	if err != nil {
		return ObjectName{}, err
	}
	return MetaObjectToName(accessor), nil
}

// MetaObjectToName returns the ObjectName of obj.
func MetaObjectToName(obj metav1.Object) ObjectName {
	return ObjectName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// DeletionHandlingObjectToName is ObjectToName that also understands tombstones: for a
// DeletedFinalStateUnknown it parses the tombstone's Key.
func DeletionHandlingObjectToName(obj interface{}) (ObjectName, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return ParseObjectName(d.Key)
	}
	return ObjectToName(obj)
}
