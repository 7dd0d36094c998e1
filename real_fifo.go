package cache

import (
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/internal/ring"
)

// RealFIFOOptions configures a RealFIFO.
//
// Some combinations are invalid; NewRealFIFOWithOptions panics on them, because they are
// programming errors (see there).
type RealFIFOOptions struct {
	// Logger receives the queue's log output, with the queue's name added. Defaults to
	// klog.Background().
	Logger *klog.Logger

	// Name names the queue in logs and in HasSyncedChecker().Name(). The name of Identifier
	// takes precedence; defaults to "RealFIFO".
	Name string

	// KeyFunction computes the key of the objects given to the queue. Defaults to
	// MetaNamespaceKeyFunc.
	KeyFunction KeyFunc

	// KnownObjects is what the consumer already knows, usually the store it fills from the
	// queue. Replace uses it to emit deletions for known objects missing from a new list, and
	// Resync re-delivers its objects. Required when AtomicEvents is false, forbidden when it is
	// true (the consumer then reconciles a ReplacedAll against its own store).
	KnownObjects KeyListerGetter

	// Transformer, if set, rewrites every object before it is queued (see TransformFunc). It
	// is not applied to tombstones or to objects re-queued by Resync.
	Transformer TransformFunc

	// AtomicEvents makes Replace queue one ReplacedAll delta holding the whole list, and
	// Resync one SyncAll delta, instead of one delta per object.
	AtomicEvents bool

	// UnlockWhileProcessing makes Pop and PopBatch release the queue's lock while the process
	// function runs, so producers are not held up by slow handlers, as long as fewer than two
	// batches (2000 deltas) are queued; past that, processing holds the lock again, which
	// slows producers down instead of letting the queue grow without bound. Requires
	// AtomicEvents.
	UnlockWhileProcessing bool

	// Identifier names the queue for metrics and slow-processing logs. With the zero value,
	// no metrics are published.
	Identifier InformerNameAndResource

	// MetricsProvider creates the queue's metrics (queued items, processing latency). Defaults
	// to the provider set with SetInformerMetricsProvider. Metrics are only published for a
	// reserved Identifier.
	MetricsProvider InformerMetricsProvider

	// EmitDeltaTypeBookmark makes Bookmark queue a Bookmark delta; otherwise Bookmark does
	// nothing. Requires AtomicEvents.
	EmitDeltaTypeBookmark bool
}

// defaultBatchSize is the most deltas PopBatch hands out at once.
const defaultBatchSize = 1000

// Slow-processing logs: a Pop or PopBatch is logged when more than fifoTraceMinDepth items
// were still queued and processing took longer than fifoSlowProcessThreshold (per item of a
// batch, at most fifoSlowBatchThreshold).
const (
	fifoTraceMinDepth        = 10
	fifoSlowProcessThreshold = 100 * time.Millisecond
	fifoSlowBatchThreshold   = time.Second
)

// RealFIFO is the queue informers use: every change the producer records becomes one Delta,
// delivered in the order it was recorded — several changes to one object are all delivered,
// and deletions are delivered even for objects the queue never saw.
//
// In atomic mode (AtomicEvents) a relist becomes one ReplacedAll delta and a resync one
// SyncAll delta, so the consumer applies them in one step; Bookmark deltas carry resource
// versions. Otherwise Replace reconciles the new list against the queued deltas and
// KnownObjects (tombstones for what disappeared, then one Replaced per object) and Resync
// queues a Sync per known object.
//
// Pop hands out one delta, PopBatch up to 1000 deltas of distinct objects. HasSynced turns
// true once every delta queued by the first Replace has been processed.
//
// Create it with NewRealFIFOWithOptions; the zero value is not usable. All methods are safe
// for concurrent use; Pop and PopBatch must be called by one consumer goroutine at a time.
type RealFIFO struct {
	logger       klog.Logger
	keyFunc      KeyFunc
	knownObjects KeyListerGetter
	transformer  TransformFunc
	// relistStore, when set (by newQueueFIFO), is the informer's store: see relistDeduper.
	relistStore KeyGetter
	// batchSize is the most deltas PopBatch hands out.
	batchSize             int
	emitAtomicEvents      bool
	unlockWhileProcessing bool
	emitDeltaTypeBookmark bool
	identifier            InformerNameAndResource
	metrics               *fifoMetrics
	// timeAlways says that every process call is timed (metrics are published); otherwise
	// only calls that may be logged as slow are.
	timeAlways bool
	// clock times process calls for metrics and the slow-processing log.
	clock clock.PassiveClock

	// mu guards the fields below it and initialSync's.
	mu sync.Mutex
	initialSync
	// items holds the queued deltas with their keys, computed once when they were queued.
	items  ring.Ring[keyedDelta]
	waker  popWaker
	closed bool
	// batchKeys is PopBatch's scratch set of the keys in the batch being built.
	batchKeys map[string]struct{}
}

// keyedDelta is a queued delta and the key of its object ("" for ReplacedAll, SyncAll and
// Bookmark).
type keyedDelta struct {
	Delta
	key string
}

var (
	_ QueueWithBatch    = &RealFIFO{}
	_ TransformingStore = &RealFIFO{}
	_ DoneChecker       = &RealFIFO{}
	// A Reflector hands RealFIFO an already transformed watch-list without a second
	// transform.
	_ transformedReplacer = &RealFIFO{}
)

// NewRealFIFO returns a non-atomic RealFIFO. knownObjects must not be nil (it panics, like
// NewRealFIFOWithOptions).
//
// Deprecated: use NewRealFIFOWithOptions.
func NewRealFIFO(keyFunc KeyFunc, knownObjects KeyListerGetter, transformer TransformFunc) *RealFIFO {
	return NewRealFIFOWithOptions(RealFIFOOptions{
		KeyFunction:  keyFunc,
		KnownObjects: knownObjects,
		Transformer:  transformer,
	})
}

// NewRealFIFOWithOptions returns an empty RealFIFO configured by opts.
//
// Like client-go, it panics on an invalid combination of options, which is a programming
// error rather than something a caller can recover from: AtomicEvents with KnownObjects set;
// or, without AtomicEvents, KnownObjects nil, UnlockWhileProcessing set or
// EmitDeltaTypeBookmark set. The panic message names the offending option.
func NewRealFIFOWithOptions(opts RealFIFOOptions) *RealFIFO {
	if msg := validateRealFIFOOptions(&opts); msg != "" {
		panic("cache: invalid RealFIFOOptions: " + msg)
	}
	f := &RealFIFO{
		logger:                klog.Background(),
		initialSync:           newInitialSync("RealFIFO"),
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		transformer:           opts.Transformer,
		batchSize:             defaultBatchSize,
		emitAtomicEvents:      opts.AtomicEvents,
		unlockWhileProcessing: opts.UnlockWhileProcessing,
		emitDeltaTypeBookmark: opts.EmitDeltaTypeBookmark,
		identifier:            opts.Identifier,
		metrics:               newFIFOMetrics(opts.Identifier, opts.MetricsProvider),
		timeAlways:            opts.Identifier.Reserved(),
		clock:                 clock.RealClock{},
		items:                 *ring.New[keyedDelta](queueRingMin),
	}
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKeyFunc
	}
	if opts.Logger != nil {
		f.logger = *opts.Logger
	}
	if opts.Name != "" {
		f.name = opts.Name
	}
	if name := opts.Identifier.Name(); name != "" {
		f.name = name
	}
	f.logger = klog.LoggerWithName(f.logger, f.name)
	return f
}

// validateRealFIFOOptions returns what is wrong with opts, or "".
func validateRealFIFOOptions(opts *RealFIFOOptions) string {
	if opts.AtomicEvents {
		if opts.KnownObjects != nil {
			return "KnownObjects must be nil when AtomicEvents is true"
		}
		return ""
	}
	switch {
	case opts.KnownObjects == nil:
		return "KnownObjects must be set when AtomicEvents is false"
	case opts.UnlockWhileProcessing:
		return "UnlockWhileProcessing requires AtomicEvents"
	case opts.EmitDeltaTypeBookmark:
		return "EmitDeltaTypeBookmark requires AtomicEvents"
	}
	return ""
}

// keyOf returns the key of obj, which may also be a Deltas (its newest object), a Delta or a
// DeletedFinalStateUnknown (its Key).
func (f *RealFIFO) keyOf(obj interface{}) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{obj, ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// Transformer returns the queue's TransformFunc, or nil. It makes RealFIFO a
// TransformingStore.
func (f *RealFIFO) Transformer() TransformFunc {
	return f.transformer
}

// HasSynced reports whether every delta queued by the first Replace has been popped and
// processed (the process function returned), or whether an Add, Update or Delete came before
// any Replace. It does not take the queue's lock.
func (f *RealFIFO) HasSynced() bool {
	return IsDone(f)
}

// Add queues an Added delta for obj. It fails with a KeyError if obj has no key, or with the
// transformer's error; then nothing is queued.
func (f *RealFIFO) Add(obj interface{}) error {
	return f.record(Added, obj)
}

// Update queues an Updated delta for obj. It fails like Add.
func (f *RealFIFO) Update(obj interface{}) error {
	return f.record(Updated, obj)
}

// Delete queues a Deleted delta for obj, whether or not the queue or KnownObjects know it: the
// consumer decides what an unknown deletion means. It fails like Add.
func (f *RealFIFO) Delete(obj interface{}) error {
	return f.record(Deleted, obj)
}

// record queues a watch event. The key and the transform are computed before the lock is
// taken; the key is kept with the delta, so that it is computed only once.
func (f *RealFIFO) record(action DeltaType, obj interface{}) error {
	key, err := f.keyOf(obj)
	if err != nil {
		err = KeyError{obj, err}
	} else if _, isTombstone := obj.(DeletedFinalStateUnknown); !isTombstone && f.transformer != nil {
		obj, err = f.transformer(obj)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populateLocked(0)
	if err != nil {
		return err
	}
	f.pushLocked(Delta{Type: action, Object: obj}, key)
	return nil
}

// pushLocked queues d, whose object has the given key, and wakes the consumer.
func (f *RealFIFO) pushLocked(d Delta, key string) {
	f.items.Push(keyedDelta{Delta: d, key: key})
	f.waker.wakeLocked()
	f.metrics.numberOfQueuedItem.Set(float64(f.items.Len()))
}

// Bookmark queues a Bookmark delta carrying resourceVersion if EmitDeltaTypeBookmark is set;
// otherwise it does nothing. It never fails.
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	if !f.emitDeltaTypeBookmark {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushLocked(Delta{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: resourceVersion}}, "")
	return nil
}

// Close marks the queue closed and wakes every Pop. Pop and PopBatch keep handing out what is
// queued and return ErrFIFOClosed once the queue is empty. Writes are still accepted.
func (f *RealFIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.waker.wakeLocked()
}

// IsClosed reports whether Close was called.
func (f *RealFIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// waitLocked blocks until a delta is queued, or returns false if the queue is closed and
// empty.
func (f *RealFIFO) waitLocked() bool {
	for f.items.Len() == 0 {
		if f.closed {
			f.waker.wakeLocked() // let any other waiting consumer return too
			return false
		}
		f.waker.waitLocked(&f.mu)
	}
	return true
}

// Pop blocks until a delta is queued or the queue is closed and empty (then it returns
// ErrFIFOClosed). It removes the oldest delta and calls process with a Deltas holding just
// that delta and whether it belongs to the first Replace's population; it returns that Deltas
// and process's error.
//
// process runs with the queue locked, unless UnlockWhileProcessing is set and fewer than two
// batches (2000 deltas) are queued. The delta counts as processed (for HasSynced) once process
// returns. A Pop whose processing takes over 100ms while more than 10 deltas wait is logged as
// "RealFIFO Pop Process".
func (f *RealFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.waitLocked() {
		return nil, ErrFIFOClosed
	}
	isInInitialList := !f.syncedClosed
	popped, _ := f.items.Pop()
	// Boxed once: the same interface value goes to process and back to the caller.
	var item interface{} = Deltas{popped.Delta}
	depth := f.items.Len()
	if depth > 0 {
		f.waker.wakeLocked()
	}
	if f.initialPopulationCount > 0 {
		defer f.countInitialProcessedLocked(1)
	}
	f.metrics.numberOfQueuedItem.Set(float64(depth))

	if f.releaseForProcessingLocked() {
		defer f.mu.Lock()
	}
	timed := f.timeAlways || depth > fifoTraceMinDepth
	var start time.Time
	if timed {
		start = f.clock.Now()
	}
	err := process(item, isInInitialList)
	if timed {
		f.observeProcessing("RealFIFO Pop Process", popped.key, depth, 0, f.clock.Since(start), fifoSlowProcessThreshold)
	}
	return item, err
}

// releaseForProcessingLocked releases mu for the process call if UnlockWhileProcessing is set
// and fewer than two batches are queued (more means the consumer is behind: holding the lock
// then slows producers down). It reports whether it did; the caller must then lock mu again
// once process returns, panics included.
func (f *RealFIFO) releaseForProcessingLocked() bool {
	if f.unlockWhileProcessing && f.items.Len() < 2*f.batchSize {
		f.mu.Unlock()
		return true
	}
	return false
}

// observeProcessing records how long a process call took, and logs it if it took at least
// threshold while more than fifoTraceMinDepth deltas were queued. It touches no guarded field.
func (f *RealFIFO) observeProcessing(msg, key string, depth, batchSize int, elapsed, threshold time.Duration) {
	f.metrics.processingLatency.Observe(elapsed.Seconds())
	if depth > fifoTraceMinDepth {
		f.logSlow(msg, key, depth, batchSize, elapsed, threshold)
	}
}

// logSlow logs a slow Pop or PopBatch (batchSize > 0) with the key of its first delta, the
// queue depth and the queue's identity.
func (f *RealFIFO) logSlow(msg, key string, depth, batchSize int, elapsed, threshold time.Duration) {
	if elapsed < threshold {
		return
	}
	kv := []interface{}{"ID", key, "Depth", depth}
	if batchSize > 0 {
		kv = append(kv, "BatchSize", batchSize)
	}
	if name := f.identifier.Name(); name != "" {
		kv = append(kv, "Name", name)
	}
	if gvr := f.identifier.GroupVersionResource(); !gvr.Empty() {
		kv = append(kv, "Resource", gvr)
	}
	logSlowProcessing(f.logger, msg, elapsed, threshold, kv...)
}

// logSlowProcessing logs msg if elapsed reached threshold, with the reason client-go's traces
// give: a slow consumer holds up the queue.
func logSlowProcessing(logger klog.Logger, msg string, elapsed, threshold time.Duration, kv ...interface{}) {
	if elapsed < threshold {
		return
	}
	kv = append(kv, "Reason", "slow event handlers blocking the queue", "totalTime", elapsed)
	logger.Info(msg, kv...)
}
