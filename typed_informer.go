package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// TypedSharedIndexInformer is a SharedIndexInformer with type-safe methods for informers whose
// objects are all of type T: handlers and index functions receive T and tombstones arrive as
// DeletedObject[T], so no type assertions are needed. Create one with
// NewTypedSharedIndexInformer.
type TypedSharedIndexInformer[T Object] interface {
	SharedIndexInformer

	// AddTypedEventHandler registers handler, as AddEventHandlerWithOptions does (and with
	// the same result): with no options it uses the defaults of AddEventHandler, with one it
	// uses those options; more than one is an error and registers nothing. A nil handler is
	// an error too (client-go registers it and fails on the first notification).
	//
	// kcache difference: a notification whose object is not a T (a wrong T, a transform that
	// changes the stored type) is not delivered; client-go panics on it. The error, naming the
	// expected and the actual type, goes to utilruntime.HandleErrorWithLogger with the
	// handler's logger (HandlerOptions.Logger, default klog.Background()). A tombstone whose
	// Obj is not a T is reported the same way and still delivered, with a zero OptionalObj and
	// FinalStateUnknown set. Logs, traces and the handler's sync tracker name the handler
	// itself, not the adapter that wraps it.
	AddTypedEventHandler(handler TypedResourceEventHandler[T], options ...HandlerOptions) (ResourceEventHandlerRegistration, error)
	// AddTypedIndexers adds index functions, as AddIndexers does. See
	// TypedIndexerFuncToIndexerFunc for objects that are not a T.
	AddTypedIndexers(indexers TypedIndexers[T]) error
	// GetTypedIndexer returns the informer's indexer with type-safe methods.
	GetTypedIndexer() TypedIndexer[T]
}

// NewTypedSharedIndexInformer returns informer with the type-safe methods of
// TypedSharedIndexInformer. It is a thin view: the methods of SharedIndexInformer are
// informer's own, and typed handlers are registered through informer's
// AddEventHandlerWithOptions. T must be the type of the objects informer caches (after its
// transform, if any), typically a pointer such as *v1.Pod. informer must not be nil: the
// methods of the returned view call it.
func NewTypedSharedIndexInformer[T Object](informer SharedIndexInformer) TypedSharedIndexInformer[T] {
	return &typedSharedIndexInformer[T]{SharedIndexInformer: informer}
}

// typedSharedIndexInformer implements TypedSharedIndexInformer on top of a SharedIndexInformer.
type typedSharedIndexInformer[T Object] struct {
	SharedIndexInformer
}

// LastProcessedResourceVersion implements ResourceVersionWaiter: the informer's, or "" if it
// does not implement ResourceVersionWaiter.
func (s *typedSharedIndexInformer[T]) LastProcessedResourceVersion() string {
	if w, ok := s.SharedIndexInformer.(ResourceVersionWaiter); ok {
		return w.LastProcessedResourceVersion()
	}
	return ""
}

// WaitForResourceVersion implements ResourceVersionWaiter: the informer's, or
// ErrResourceVersionWaitUnsupported if it does not implement ResourceVersionWaiter.
func (s *typedSharedIndexInformer[T]) WaitForResourceVersion(ctx context.Context, rv string) error {
	return WaitForResourceVersion(ctx, s.SharedIndexInformer, rv)
}

// AddTypedEventHandler implements TypedSharedIndexInformer.
func (s *typedSharedIndexInformer[T]) AddTypedEventHandler(handler TypedResourceEventHandler[T], options ...HandlerOptions) (ResourceEventHandlerRegistration, error) {
	var opts HandlerOptions
	switch len(options) {
	case 0:
	case 1:
		opts = options[0]
	default:
		return nil, fmt.Errorf("cache: AddTypedEventHandler accepts at most one HandlerOptions, got %d", len(options))
	}
	if handler == nil {
		return nil, errors.New("cache: nil typed event handler")
	}
	logger := klog.Background()
	if opts.Logger != nil {
		logger = *opts.Logger
	}
	return s.AddEventHandlerWithOptions(&typedResourceEventHandler[T]{handler: handler, logger: logger}, opts)
}

// AddTypedIndexers implements TypedSharedIndexInformer.
func (s *typedSharedIndexInformer[T]) AddTypedIndexers(indexers TypedIndexers[T]) error {
	return s.AddIndexers(TypedIndexersToIndexers(indexers))
}

// GetTypedIndexer implements TypedSharedIndexInformer.
func (s *typedSharedIndexInformer[T]) GetTypedIndexer() TypedIndexer[T] {
	return typedIndexer[T]{Indexer: s.GetIndexer()}
}

// typedResourceEventHandler adapts a TypedResourceEventHandler to ResourceEventHandler. Objects
// that are not a T are reported through logger and not delivered.
type typedResourceEventHandler[T Object] struct {
	handler TypedResourceEventHandler[T]
	logger  klog.Logger
}

var _ ResourceEventHandler = &typedResourceEventHandler[*metav1.ObjectMeta]{}

// wrappedEventHandler is implemented by handler adapters that wrap a user's handler, so that
// nameForHandler names the user's handler rather than the adapter.
type wrappedEventHandler interface {
	wrappedHandlerName() string
}

// wrappedHandlerName implements wrappedEventHandler: typed func adapters are named after their
// functions, like ResourceEventHandlerFuncs, other handlers after their type.
func (h *typedResourceEventHandler[T]) wrappedHandlerName() string {
	name := ""
	switch inner := h.handler.(type) {
	case TypedResourceEventHandlerFuncs[T]:
		name = commonFuncName(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
	case *TypedResourceEventHandlerFuncs[T]:
		if inner != nil {
			name = commonFuncName(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
		}
	case TypedResourceEventHandlerDetailedFuncs[T]:
		name = commonFuncName(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
	case *TypedResourceEventHandlerDetailedFuncs[T]:
		if inner != nil {
			name = commonFuncName(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
		}
	case nil:
	default:
		name = typeName(reflect.TypeOf(h.handler))
	}
	if name == "" {
		name = fmt.Sprintf("%T", h.handler)
	}
	return name
}

// String returns the name of the wrapped handler, so that messages which print a handler
// with %v show the user's handler rather than the adapter's fields.
func (h *typedResourceEventHandler[T]) String() string {
	return "typed event handler " + h.wrappedHandlerName()
}

// OnAdd implements ResourceEventHandler.
func (h *typedResourceEventHandler[T]) OnAdd(obj interface{}, isInInitialList bool) {
	typed, ok := obj.(T)
	if !ok {
		h.reportWrongType("add", obj)
		return
	}
	h.handler.OnAdd(typed, isInInitialList)
}

// OnUpdate implements ResourceEventHandler.
func (h *typedResourceEventHandler[T]) OnUpdate(oldObj, newObj interface{}) {
	oldTyped, ok := oldObj.(T)
	if !ok {
		h.reportWrongType("update", oldObj)
		return
	}
	newTyped, ok := newObj.(T)
	if !ok {
		h.reportWrongType("update", newObj)
		return
	}
	h.handler.OnUpdate(oldTyped, newTyped)
}

// OnDelete implements ResourceEventHandler.
func (h *typedResourceEventHandler[T]) OnDelete(obj interface{}) {
	switch o := obj.(type) {
	case T:
		h.handler.OnDelete(DeletedObject[T]{OptionalObj: o})
	case DeletedFinalStateUnknown:
		deleted := DeletedObject[T]{FinalStateUnknown: &o}
		if o.Obj != nil {
			if typed, ok := o.Obj.(T); ok {
				deleted.OptionalObj = typed
			} else {
				h.reportWrongType("delete", o.Obj, "key", o.Key)
			}
		}
		h.handler.OnDelete(deleted)
	default:
		h.reportWrongType("delete", obj)
	}
}

// reportWrongType reports a notification whose object is not a T.
func (h *typedResourceEventHandler[T]) reportWrongType(event string, obj interface{}, keysAndValues ...interface{}) {
	keysAndValues = append([]interface{}{"handler", h.wrappedHandlerName(), "event", event}, keysAndValues...)
	utilruntime.HandleErrorWithLogger(h.logger, wrongTypeError[T]("typed event handler", obj),
		"cache: skipping a notification of the wrong type", keysAndValues...)
}
