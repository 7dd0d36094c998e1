package cache

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/features"
)

// Config configures a low-level controller: a Reflector that fills Queue from ListerWatcher,
// and a loop that pops from Queue and hands what it pops to Process (or ProcessBatch).
type Config struct {
	// Queue sits between the Reflector and Process. Process must understand what its Pop
	// hands out (Deltas, for DeltaFIFO and RealFIFO).
	Queue

	// ListerWatcher is the source of the objects.
	ListerWatcher

	// Process processes one popped item. Required.
	Process ProcessFunc

	// ProcessBatch processes a batch of deltas of distinct objects, popped together. It should
	// return an error wrapping a TransactionError when only part of the batch was applied.
	// Batches are used only when ProcessBatch is set, Queue is a QueueWithBatch and the
	// InOrderInformersBatchProcess feature gate is on (the default); otherwise every item goes
	// to Process.
	ProcessBatch ProcessBatchFunc

	// ObjectType is an example of the objects the controller expects; watch events carrying
	// another type are dropped. Optional.
	ObjectType runtime.Object

	// ObjectDescription describes the objects in logs. Defaults to ObjectType's type.
	ObjectDescription string

	// FullResyncPeriod is how often ShouldResync is consulted (and, if it agrees, the Queue
	// resynced). 0 disables resyncs.
	FullResyncPeriod time.Duration

	// MinWatchTimeout is the shortest timeout requested for a watch. Values under 5 minutes
	// (the default) are raised to 5 minutes, to protect the control plane.
	MinWatchTimeout time.Duration

	// ShouldResync is asked every FullResyncPeriod whether to resync the Queue; nil means yes.
	ShouldResync ShouldResyncFunc

	// WatchErrorHandler is called whenever a list or watch of the Reflector fails. It takes
	// precedence over WatchErrorHandlerWithContext. Defaults to DefaultWatchErrorHandler.
	WatchErrorHandler WatchErrorHandler

	// WatchErrorHandlerWithContext is WatchErrorHandler with the Reflector's context, for
	// contextual logging. Used when WatchErrorHandler is nil.
	WatchErrorHandlerWithContext WatchErrorHandlerWithContext

	// WatchListPageSize is the page size of the Reflector's LIST requests (see
	// Reflector.WatchListPageSize).
	WatchListPageSize int64

	// ProcessErrorHandler, if set, is called with every error Process or ProcessBatch
	// returns, after the error was logged. client-go drops these errors silently; this
	// controller always logs them, with the keys of the objects concerned, at error level.
	// The popped item is not requeued either way. obj is what was handed to the process
	// function: a Deltas for Process, a []Delta for ProcessBatch. The handler runs on the
	// processing goroutine, without the Queue's lock; it should be quick.
	//
	// This field is a kcache addition; client-go's Config does not have it.
	ProcessErrorHandler ProcessErrorHandler

	// reflectorStatus, when set (by an informer), receives the Reflector's reports for
	// InformerStatuses.
	reflectorStatus *reflectorStatus
}

// ShouldResyncFunc tells a Reflector whether to resync its store now. A shared informer uses
// it to resync only when one of its handlers is due.
type ShouldResyncFunc func() bool

// ProcessFunc processes one item popped from a Queue. isInInitialList is true while the item
// belongs to the Queue's first full list.
type ProcessFunc func(obj interface{}, isInInitialList bool) error

// ProcessErrorHandler is told about an error returned by a controller's process function; see
// Config.ProcessErrorHandler.
type ProcessErrorHandler func(ctx context.Context, obj interface{}, err error)

// Controller is a low-level controller built from a Config: a Reflector feeding the Config's
// Queue and a loop draining it into the Config's process function. SharedIndexInformer is
// built on it.
type Controller interface {
	// RunWithContext runs the Reflector and the processing loop until ctx is done, then
	// closes the Queue and waits for the Reflector to stop. It blocks; call it once.
	RunWithContext(ctx context.Context)

	// Run is RunWithContext with a stop channel.
	Run(stopCh <-chan struct{})

	// HasSynced is the Queue's HasSynced: true once the first full list was processed.
	HasSynced() bool

	// HasSyncedChecker is the Queue's HasSyncedChecker, for waiting without polling.
	HasSyncedChecker() DoneChecker

	// LastSyncResourceVersion is the Reflector's last synced resource version, or "" before
	// Run started it.
	LastSyncResourceVersion() string
}

// controller implements Controller.
type controller struct {
	config Config
	// clock is given to the Reflector and times the restart of a crashed processing loop.
	clock clock.Clock

	// reflectorMu guards reflector.
	reflectorMu sync.RWMutex
	reflector   *Reflector
}

// New returns a Controller for c. c is copied; changing it later has no effect.
func New(c *Config) Controller {
	return &controller{config: *c, clock: clock.RealClock{}}
}

// Run implements Controller.
func (c *controller) Run(stopCh <-chan struct{}) {
	c.RunWithContext(wait.ContextForChannel(stopCh))
}

// processLoopRestartDelay is how long the processing loop waits before it starts again after
// the Queue was closed early or process panicked (and the panic was not fatal).
const processLoopRestartDelay = time.Second

// RunWithContext implements Controller.
func (c *controller) RunWithContext(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	go func() {
		<-ctx.Done()
		c.config.Queue.Close()
	}()
	logger := klog.FromContext(ctx)
	r := NewReflectorWithOptions(c.config.ListerWatcher, c.config.ObjectType, c.config.Queue, ReflectorOptions{
		Logger:          &logger,
		ResyncPeriod:    c.config.FullResyncPeriod,
		MinWatchTimeout: c.config.MinWatchTimeout,
		TypeDescription: c.config.ObjectDescription,
		Clock:           c.clock,
	})
	r.ShouldResync = c.config.ShouldResync
	r.status = c.config.reflectorStatus
	r.WatchListPageSize = c.config.WatchListPageSize
	if h := c.config.WatchErrorHandler; h != nil {
		r.watchErrorHandler = func(_ context.Context, r *Reflector, err error) { h(r, err) }
	} else if h := c.config.WatchErrorHandlerWithContext; h != nil {
		r.watchErrorHandler = h
	}

	c.reflectorMu.Lock()
	c.reflector = r
	c.reflectorMu.Unlock()

	var wg wait.Group
	wg.StartWithContext(ctx, r.RunWithContext)

	for ctx.Err() == nil {
		c.guardedProcessLoop(ctx)
		select {
		case <-ctx.Done():
		case <-c.clock.After(processLoopRestartDelay):
		}
	}
	// Not deferred: a panic in process must propagate at once, not wait for ctx to end.
	wg.Wait()
}

// guardedProcessLoop runs processLoop, handling a panic like client-go's wait.Until does: by
// default utilruntime re-panics (crashing the process); with crashing disabled the panic is
// logged and the loop restarts.
func (c *controller) guardedProcessLoop(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	c.processLoop(ctx)
}

// HasSynced implements Controller.
func (c *controller) HasSynced() bool {
	return c.config.Queue.HasSynced()
}

// HasSyncedChecker implements Controller.
func (c *controller) HasSyncedChecker() DoneChecker {
	return c.config.Queue.HasSyncedChecker()
}

// LastSyncResourceVersion implements Controller.
func (c *controller) LastSyncResourceVersion() string {
	c.reflectorMu.RLock()
	defer c.reflectorMu.RUnlock()
	if c.reflector == nil {
		return ""
	}
	return c.reflector.LastSyncResourceVersion()
}

// processLoop pops from the Queue and processes until ctx is done or the Queue is closed. It
// is single-threaded: the queues hand out changes in order, and processing two changes of one
// object concurrently would break that order.
func (c *controller) processLoop(ctx context.Context) {
	batchQueue, useBatch := c.config.Queue.(QueueWithBatch)
	useBatch = useBatch && c.config.ProcessBatch != nil && features.Enabled(features.InOrderInformersBatchProcess)

	// failed is what the process functions were given when they failed, for the report.
	var failed interface{}
	process := func(obj interface{}, isInInitialList bool) error {
		err := c.config.Process(obj, isInInitialList)
		if err != nil {
			failed = obj
		}
		return err
	}
	processBatch := func(deltas []Delta, isInInitialList bool) error {
		err := c.config.ProcessBatch(deltas, isInInitialList)
		if err != nil {
			failed = deltas
		}
		return err
	}
	for ctx.Err() == nil {
		failed = nil
		var err error
		if useBatch {
			err = batchQueue.PopBatch(processBatch, process)
		} else {
			_, err = c.config.Queue.Pop(process)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrFIFOClosed):
			return
		default:
			c.reportProcessError(ctx, failed, err)
		}
	}
}

// reportProcessError logs a process error with the keys of what failed and passes it to
// Config.ProcessErrorHandler.
func (c *controller) reportProcessError(ctx context.Context, obj interface{}, err error) {
	logger := klog.FromContext(ctx)
	if batch, ok := obj.([]Delta); ok {
		keys := make([]string, len(batch))
		for i, d := range batch {
			keys[i] = processedKey(d)
		}
		logger.Error(err, "Failed to process a batch of deltas; they are not retried", "keys", keys)
	} else {
		key := "<unknown>"
		if ds, ok := obj.(Deltas); ok && len(ds) > 0 {
			key = processedKey(*ds.Newest())
		}
		logger.Error(err, "Failed to process deltas; they are not retried", "key", key)
	}
	if h := c.config.ProcessErrorHandler; h != nil {
		h(ctx, obj, err)
	}
}

// processedKey names the object of d for logs: its key, or its type for whole-list deltas.
func processedKey(d Delta) string {
	switch d.Type {
	case ReplacedAll, SyncAll, Bookmark:
		return string(d.Type)
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(d.Object)
	if err != nil {
		return "<no key>"
	}
	return key
}
