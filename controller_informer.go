package cache

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kcache/cache/internal/features"
)

// InformerOptions configures NewInformerWithOptions.
type InformerOptions struct {
	// Logger is used instead of klog.Background() by the informer's queue and processing.
	Logger *klog.Logger

	// ListerWatcher is the source of the objects. Required.
	ListerWatcher ListerWatcher

	// ObjectType is an example of the objects to expect; watch events of another type are
	// dropped. Required.
	ObjectType runtime.Object

	// Handler is told about every change. Required.
	Handler ResourceEventHandler

	// ResyncPeriod, if not zero, is how often every cached object is re-delivered to Handler
	// as an update, even if nothing changed. Defaults to 0: no periodic resync.
	ResyncPeriod time.Duration

	// MinWatchTimeout is the shortest timeout requested for a watch. Values under 5 minutes
	// (the default) are raised to 5 minutes.
	MinWatchTimeout time.Duration

	// Indexers, if set, makes the returned store an Indexer with these indices. Defaults to
	// none (a plain Store).
	Indexers Indexers

	// Transform, if set, rewrites every object before it is stored and handed to Handler.
	Transform TransformFunc

	// Identifier names the informer's queue and store for metrics. With the zero value no
	// metrics are published.
	Identifier InformerNameAndResource

	// InformerMetricsProvider creates the queue's and store's metrics. Defaults to the provider
	// set with SetInformerMetricsProvider.
	InformerMetricsProvider InformerMetricsProvider
}

// NewInformerWithOptions returns a store and a Controller that keeps it in step with
// options.ListerWatcher and tells options.Handler about every change. The store is an Indexer
// when options.Indexers is set. Use the store only to read: writing to it makes the
// notifications wrong.
//
// The queue between the source and the store is a RealFIFO, configured like a shared
// informer's by the AtomicFIFO and UnlockWhileProcessingFIFO feature gates (or a DeltaFIFO if
// the InOrderInformers gate is turned off in tests).
//
// Relists (kcache behaviour, same notifications as client-go): an object that a relist brings
// with the resourceVersion the store already holds is not stored again — the store keeps the
// object it has, the freshly listed copy is dropped as soon as it arrives, and Transform does not
// run on it again — so a relist holds the cache plus the objects that changed plus the page in
// flight, never a second copy of the cache. Handlers still get OnUpdate for every listed object
// and a DeletedFinalStateUnknown for every vanished one; for an unchanged object OnUpdate's old
// and new are the same object. A shared informer behaves the same way.
func NewInformerWithOptions(options InformerOptions) (Store, Controller) {
	var clientState Store
	metrics := WithStoreMetrics(options.Identifier, options.InformerMetricsProvider)
	if options.Indexers == nil {
		clientState = NewStore(DeletionHandlingMetaNamespaceKeyFunc, metrics)
	} else {
		clientState = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, options.Indexers, metrics)
	}
	return clientState, newInformer(clientState, options, DeletionHandlingMetaNamespaceKeyFunc)
}

// NewInformer returns a store and a Controller that keeps it in step with lw and tells h about
// every change; a non-zero resyncPeriod re-delivers every object that often.
//
// Deprecated: use NewInformerWithOptions.
func NewInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler) (Store, Controller) {
	clientState := NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	return clientState, newInformer(clientState, InformerOptions{
		ListerWatcher: lw,
		ObjectType:    objType,
		Handler:       h,
		ResyncPeriod:  resyncPeriod,
	}, DeletionHandlingMetaNamespaceKeyFunc)
}

// NewIndexerInformer is NewInformer with an Indexer holding indexers.
//
// Deprecated: use NewInformerWithOptions.
func NewIndexerInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, indexers Indexers) (Indexer, Controller) {
	clientState := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers)
	return clientState, newInformer(clientState, InformerOptions{
		ListerWatcher: lw,
		ObjectType:    objType,
		Handler:       h,
		ResyncPeriod:  resyncPeriod,
		Indexers:      indexers,
	}, DeletionHandlingMetaNamespaceKeyFunc)
}

// NewTransformingInformer is NewInformer with transformer applied to every object before it
// is stored and handed to h.
//
// Deprecated: use NewInformerWithOptions.
func NewTransformingInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, transformer TransformFunc) (Store, Controller) {
	clientState := NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	return clientState, newInformer(clientState, InformerOptions{
		ListerWatcher: lw,
		ObjectType:    objType,
		Handler:       h,
		ResyncPeriod:  resyncPeriod,
		Transform:     transformer,
	}, DeletionHandlingMetaNamespaceKeyFunc)
}

// NewTransformingIndexerInformer is NewIndexerInformer with transformer applied to every
// object before it is stored and handed to h.
//
// Deprecated: use NewInformerWithOptions.
func NewTransformingIndexerInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, indexers Indexers, transformer TransformFunc) (Indexer, Controller) {
	clientState := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers)
	return clientState, newInformer(clientState, InformerOptions{
		ListerWatcher: lw,
		ObjectType:    objType,
		Handler:       h,
		ResyncPeriod:  resyncPeriod,
		Indexers:      indexers,
		Transform:     transformer,
	}, DeletionHandlingMetaNamespaceKeyFunc)
}

// errNotDeltas is returned by an informer's Process when its queue hands out something other
// than Deltas.
var errNotDeltas = errors.New("object given as Process argument is not Deltas")

// newInformer returns a Controller that fills clientState and notifies options.Handler.
func newInformer(clientState Store, options InformerOptions, keyFunc KeyFunc) Controller {
	logger := klog.Background()
	if options.Logger != nil {
		logger = *options.Logger
	}
	logger, fifo := newQueueFIFO(logger, options.ObjectType, clientState, options.Transform, options.Identifier, options.InformerMetricsProvider)
	return New(&Config{
		Queue:            fifo,
		ListerWatcher:    options.ListerWatcher,
		ObjectType:       options.ObjectType,
		FullResyncPeriod: options.ResyncPeriod,
		MinWatchTimeout:  options.MinWatchTimeout,
		Process: func(obj interface{}, isInInitialList bool) error {
			deltas, ok := obj.(Deltas)
			if !ok {
				return errNotDeltas
			}
			return processDeltas(logger, options.Handler, clientState, deltas, isInInitialList, keyFunc)
		},
		ProcessBatch: func(deltas []Delta, isInInitialList bool) error {
			return processDeltasInBatch(logger, options.Handler, clientState, deltas, isInInitialList, keyFunc)
		},
	})
}

// newQueueFIFO returns the queue of an informer over clientState, chosen by the feature gates
// as in client-go, and the queue's logger (which carries the queue's name):
//
//   - InOrderInformers (locked on): a RealFIFO named "RealFIFO <type>". With AtomicFIFO it
//     replaces atomically, emits bookmarks, releases its lock while processing if
//     UnlockWhileProcessingFIFO is on, and has no KnownObjects; without, clientState is its
//     KnownObjects.
//   - otherwise: a DeltaFIFO named "DeltaFIFO <type>" over clientState, emitting Replaced.
//
// Either way the queue dedups relists against clientState (see relistDeduper): an object a
// relist brings with the resourceVersion clientState holds is replaced by the cached object.
func newQueueFIFO(logger klog.Logger, objectType any, clientState Store, transform TransformFunc, identifier InformerNameAndResource, metricsProvider InformerMetricsProvider) (klog.Logger, Queue) {
	if !features.Enabled(features.InOrderInformers) {
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
			Logger:                &logger,
			Name:                  fmt.Sprintf("DeltaFIFO %T", objectType),
			KnownObjects:          clientState,
			EmitDeltaTypeReplaced: true,
			Transformer:           transform,
		})
		f.setRelistStore(clientState)
		return f.logger, f
	}
	options := RealFIFOOptions{
		Logger:          &logger,
		Name:            fmt.Sprintf("RealFIFO %T", objectType),
		KeyFunction:     MetaNamespaceKeyFunc,
		Transformer:     transform,
		Identifier:      identifier,
		MetricsProvider: metricsProvider,
	}
	if features.Enabled(features.AtomicFIFO) {
		options.AtomicEvents = true
		options.UnlockWhileProcessing = features.Enabled(features.UnlockWhileProcessingFIFO)
		options.EmitDeltaTypeBookmark = true
	} else {
		options.KnownObjects = clientState
	}
	f := NewRealFIFOWithOptions(options)
	f.setRelistStore(clientState)
	return f.logger, f
}
