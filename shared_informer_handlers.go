package cache

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
)

// ResourceEventHandlerRegistration is the handle AddEventHandler returns for one handler. Pass
// it to RemoveEventHandler of the same informer to remove the handler, or ask it whether the
// handler has synced.
type ResourceEventHandlerRegistration interface {
	// HasSynced reports whether the informer has synced and the handler has returned from
	// every add of the initial list (for a handler added to a running informer: of the objects
	// in the cache when it was added). It does not block.
	HasSynced() bool

	// HasSyncedChecker returns a DoneChecker that is done when HasSynced turns true.
	HasSyncedChecker() DoneChecker
}

// minimumResyncPeriod is the shortest resync period a handler can get; shorter requests are
// raised to it.
const minimumResyncPeriod = 1 * time.Second

// AddEventHandler implements SharedInformer.
func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	options := HandlerOptions{}
	helper, warn := handlerLogger(options).WithCallStackHelper()
	helper()
	return s.addEventHandler(handler, options, warn)
}

// AddEventHandlerWithResyncPeriod implements SharedInformer.
func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	options := HandlerOptions{ResyncPeriod: &resyncPeriod}
	helper, warn := handlerLogger(options).WithCallStackHelper()
	helper()
	return s.addEventHandler(handler, options, warn)
}

// AddEventHandlerWithOptions implements SharedInformer. A nil handler is an error.
func (s *sharedIndexInformer) AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error) {
	helper, warn := handlerLogger(options).WithCallStackHelper()
	helper()
	return s.addEventHandler(handler, options, warn)
}

// handlerLogger is the logger a handler registered with options uses: options.Logger, or
// klog.Background().
func handlerLogger(options HandlerOptions) klog.Logger {
	if options.Logger != nil {
		return *options.Logger
	}
	return klog.Background()
}

// addEventHandler is the body of the three Add methods. warn is the handler's logger as the
// calling method prepared it for warnings it logs on its caller's behalf (a too-small resync
// period); addEventHandler marks itself a call-stack helper on it too, so that those lines
// carry the file and line of the code that added the handler.
func (s *sharedIndexInformer) addEventHandler(handler ResourceEventHandler, options HandlerOptions, warn klog.Logger) (ResourceEventHandlerRegistration, error) {
	helper, warn := warn.WithCallStackHelper()
	helper()
	if handler == nil {
		return nil, errors.New("cache: nil event handler")
	}
	maxPending := -1
	if mp := cmp.Or(options.MaxPending, s.defaultHandlerMaxPending); mp != nil {
		if *mp < 0 {
			return nil, fmt.Errorf("cache: MaxPending must not be negative, got %d", *mp)
		}
		maxPending = *mp
	}
	s.startedMu.Lock()
	defer s.startedMu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", handler)
	}

	logger := handlerLogger(options)
	resyncPeriod := s.defaultEventHandlerResyncPeriod
	if options.ResyncPeriod != nil {
		resyncPeriod = *options.ResyncPeriod
	}
	if resyncPeriod > 0 {
		if resyncPeriod < minimumResyncPeriod {
			warn.Info("Warning: resync period is too small. Changing it to the minimum allowed value", "resyncPeriod", resyncPeriod, "minimumResyncPeriod", minimumResyncPeriod)
			resyncPeriod = minimumResyncPeriod
		}
		if resyncPeriod < s.resyncCheckPeriod {
			if s.started {
				warn.Info("Warning: resync period is smaller than resync check period and the informer has already started. Changing it to the resync check period", "resyncPeriod", resyncPeriod, "resyncCheckPeriod", s.resyncCheckPeriod)
				resyncPeriod = s.resyncCheckPeriod
			} else {
				// Check more often, and recompute the other handlers' periods for it.
				s.resyncCheckPeriod = resyncPeriod
				s.processor.resyncCheckPeriodChanged(logger, resyncPeriod)
			}
		}
	}

	listener := newProcessListener(logger, handler, resyncPeriod,
		determineResyncPeriod(logger, resyncPeriod, s.resyncCheckPeriod), s.clock, s.HasSyncedChecker())
	listener.configure(maxPending, options.ContainPanics != nil && *options.ContainPanics,
		newHandlerMetrics(s.identifier, s.informerMetricsProvider, listener.handlerName))

	if !s.started {
		s.processor.addListener(listener, nil)
		return listener, nil
	}

	// A late handler gets the cache's current content as initial adds. Holding blockDeltas
	// keeps changes out between the snapshot and the registration; the adds are queued before
	// the handle is returned, so HasSynced cannot be true before the handler processed them.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	if informerTiming.Load() {
		s.processor.setStamp()
	}
	if !s.processor.addListener(listener, s.indexer.List()) {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", handler)
	}
	return listener, nil
}

// RemoveEventHandler implements SharedInformer.
func (s *sharedIndexInformer) RemoveEventHandler(handle ResourceEventHandlerRegistration) error {
	return s.processor.removeListener(handle)
}

// handleDeltas applies one item popped from the FIFO and, once it is stored, records its
// resource version as processed (an item that fails is not recorded).
func (s *sharedIndexInformer) handleDeltas(logger klog.Logger, obj interface{}, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	deltas, ok := obj.(Deltas)
	if !ok {
		return errors.New("object given as Process argument is not Deltas")
	}
	s.observeDeltas(deltas)
	if err := processDeltas(logger, s, s.indexer, deltas, isInInitialList, DeletionHandlingMetaNamespaceKeyFunc); err != nil {
		return err
	}
	s.resourceVersions.advance(deltasResourceVersion(deltas))
	return nil
}

// handleBatchDeltas applies a batch popped from the FIFO and, once it is stored, records its
// resource version as processed (a batch that fails is not recorded).
func (s *sharedIndexInformer) handleBatchDeltas(logger klog.Logger, deltas []Delta, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.observeDeltas(deltas)
	if err := processDeltasInBatch(logger, s, s.indexer, deltas, isInInitialList, DeletionHandlingMetaNamespaceKeyFunc); err != nil {
		return err
	}
	s.resourceVersions.advance(deltasResourceVersion(deltas))
	return nil
}

// OnAdd distributes an add. processDeltas calls it under blockDeltas; it runs no user code.
func (s *sharedIndexInformer) OnAdd(obj interface{}, isInInitialList bool) {
	s.cacheMutationDetector.AddObject(obj)
	s.processor.distribute(addNotification(obj, isInInitialList), false)
}

// onAddRun distributes an add of each of objs, in order, as OnAdd would one by one; objs must
// not change afterwards. processDeltas calls it (through notifyRelist) under blockDeltas for
// a relist into an empty cache, such as the initial list.
func (s *sharedIndexInformer) onAddRun(objs []interface{}, isInInitialList bool) {
	if _, off := s.cacheMutationDetector.(dummyMutationDetector); !off {
		// The detector watches the objects the handlers get: decode a list that a compact
		// store's Reflector encoded as it arrived now, not per delivery.
		resolveAllListed(objs)
	}
	for _, obj := range objs {
		s.cacheMutationDetector.AddObject(obj)
	}
	s.processor.distributeRun(objs, isInInitialList)
}

// OnUpdate distributes an update. An update whose old and new objects have the same resource
// version (a resync, or an unchanged object in a relist) is a sync update: it goes only to the
// handlers due for a resync.
func (s *sharedIndexInformer) OnUpdate(oldObj, newObj interface{}) {
	isSync := false
	if newMeta, err := meta.Accessor(newObj); err == nil {
		if oldMeta, err := meta.Accessor(oldObj); err == nil {
			isSync = newMeta.GetResourceVersion() == oldMeta.GetResourceVersion()
		}
	}
	s.cacheMutationDetector.AddObject(newObj)
	s.processor.distribute(updateNotification(oldObj, newObj), isSync)
}

// OnDelete distributes a delete.
func (s *sharedIndexInformer) OnDelete(oldObj interface{}) {
	s.processor.distribute(deleteNotification(oldObj), false)
}
