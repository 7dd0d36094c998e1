package cache

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Object is what the typed API needs of a cached object: its name and namespace, and
// comparability, so that a zero T (typically a nil pointer) can be told apart from a real
// object. Every Kubernetes API type satisfies it through its embedded ObjectMeta when used as a
// pointer (*v1.Pod).
type Object interface {
	comparable

	GetName() string
	GetNamespace() string
}

// TypedResourceEventHandler is the type-safe form of ResourceEventHandler: it receives objects
// as T instead of interface{}, and deletions as a DeletedObject[T] that also covers tombstones
// (DeletedFinalStateUnknown). Register one with TypedSharedIndexInformer.AddTypedEventHandler.
//
// The same rules as for ResourceEventHandler apply: callbacks of one handler run one at a time,
// in order, and must not modify the objects they receive (they are shared with the cache).
type TypedResourceEventHandler[T Object] interface {
	OnAdd(obj T, isInInitialList bool)
	OnUpdate(oldObj, newObj T)
	OnDelete(obj DeletedObject[T])
}

// TypedResourceEventHandlerFuncs adapts up to three functions to TypedResourceEventHandler.
// Nil functions are skipped. Use TypedResourceEventHandlerDetailedFuncs to learn whether an
// add belongs to the initial list.
type TypedResourceEventHandlerFuncs[T Object] struct {
	AddFunc    func(obj T)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

var _ TypedResourceEventHandler[*metav1.ObjectMeta] = TypedResourceEventHandlerFuncs[*metav1.ObjectMeta]{}

// OnAdd calls AddFunc, if set.
func (r TypedResourceEventHandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc, if set.
func (r TypedResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc, if set.
func (r TypedResourceEventHandlerFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// TypedResourceEventHandlerDetailedFuncs is TypedResourceEventHandlerFuncs with an AddFunc
// that also receives isInInitialList. Nil functions are skipped.
type TypedResourceEventHandlerDetailedFuncs[T Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

var _ TypedResourceEventHandler[*metav1.ObjectMeta] = TypedResourceEventHandlerDetailedFuncs[*metav1.ObjectMeta]{}

// OnAdd calls AddFunc, if set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc, if set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnUpdate(oldObj, newObj T) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc, if set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// TypedFilteringResourceEventHandler is the type-safe form of FilteringResourceEventHandler:
// Handler sees only objects for which FilterFunc returns true. An update turns into an add when
// the object starts passing the filter and into a delete (of the old object, without a
// tombstone) when it stops; an update that fails the filter on both sides is dropped. FilterFunc
// must not modify its argument and must be set.
type TypedFilteringResourceEventHandler[T Object] struct {
	FilterFunc func(obj T) bool
	Handler    TypedResourceEventHandler[T]
}

// OnAdd passes obj on if it passes the filter.
func (r TypedFilteringResourceEventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if r.FilterFunc(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate passes on an update, add or delete depending on which of oldObj and newObj pass the
// filter.
func (r TypedFilteringResourceEventHandler[T]) OnUpdate(oldObj, newObj T) {
	was, is := r.FilterFunc(oldObj), r.FilterFunc(newObj)
	switch {
	case was && is:
		r.Handler.OnUpdate(oldObj, newObj)
	case is:
		r.Handler.OnAdd(newObj, false)
	case was:
		r.Handler.OnDelete(DeletedObject[T]{OptionalObj: oldObj})
	}
}

// OnDelete passes obj on if obj.OptionalObj passes the filter. For a tombstone without a
// usable object, OptionalObj is the zero T (a nil pointer): FilterFunc must cope with that.
func (r TypedFilteringResourceEventHandler[T]) OnDelete(obj DeletedObject[T]) {
	if r.FilterFunc(obj.OptionalObj) {
		r.Handler.OnDelete(obj)
	}
}
