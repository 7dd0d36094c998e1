package cache

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// InformerStatus is a snapshot of one running informer, as InformerStatuses returns it.
//
// kcache extension.
type InformerStatus struct {
	// Name is the informer's name: the one given through
	// SharedIndexInformerOptions.Identifier, or a default one (see InformerStatuses).
	Name string
	// DefaultName is true when Name is a default name rather than one the program gave.
	DefaultName bool
	// Resource is the resource served, when known (informers of the informers factory, or
	// named through the Identifier); zero otherwise.
	Resource schema.GroupVersionResource
	// Type describes the objects: the example object's Go type, or the GroupVersionKind of an
	// unstructured example.
	Type string

	// Synced is the informer's HasSynced.
	Synced bool
	// StartedAt is when Run was called; SyncedAt when the informer synced (zero until then).
	StartedAt, SyncedAt time.Time
	// StartupLatency is SyncedAt - StartedAt once synced, and 0 before.
	StartupLatency time.Duration
	// NotSyncedReason says, while Synced is false, why, in words a user can act on: the
	// listing in progress and its count, a watch-list stream waiting for its end bookmark, a
	// failing LIST with the server's status and the retry interval. Empty once synced.
	NotSyncedReason string

	// Objects is the number of objects in the informer's store.
	Objects int
	// LastResourceVersionSeen is the last resource version the Reflector saw from the server
	// (LastSyncResourceVersion).
	LastResourceVersionSeen string
	// LastResourceVersionProcessed is the newest resource version processed into the store
	// (LastProcessedResourceVersion).
	LastResourceVersionProcessed string

	// Lists counts the full listings (LIST or streaming watch-list) started; Relists those
	// after the first, by cause.
	Lists   uint64
	Relists RelistCounts
	// WatchRestarts counts the watches started after the first.
	WatchRestarts uint64
	// LastWatchError is the last error a watch ended or failed to start with, at
	// LastWatchErrorAt; empty if none.
	LastWatchError   string
	LastWatchErrorAt time.Time

	// EventsIn counts the changes the informer has applied to its store (each object of a
	// list counts); EventsPerSecond is their rate since the previous InformerStatuses call
	// (or since the start, on the first call).
	EventsIn        uint64
	EventsPerSecond float64

	// Handlers are the informer's event handlers, in the order they were added.
	Handlers []HandlerStatus
}

// HandlerStatus is a snapshot of one event handler of an informer.
//
// kcache extension.
type HandlerStatus struct {
	// Name is the handler's name as it appears in logs, with "#2", "#3"… appended for the
	// second and later handlers of the same name on the informer.
	Name string
	// Synced is the registration's HasSynced.
	Synced bool
	// Pending is the number of notifications waiting (object keys while the handler's
	// listener coalesces; see HandlerOptions.MaxPending).
	Pending int
	// Lag is the age of the oldest waiting notification, 0 when none waits. It is measured
	// only after EnableInformerTiming, and reads 0 before. Notifications queued less than 1ms
	// after a dated one share its date, so it may read high by up to 1ms; a handler keeps 64
	// dates, so when it falls further behind than that it may read high by up to the time
	// between two of them.
	Lag time.Duration
	// Processed counts the handler calls that returned (or panicked).
	Processed uint64
	// Coalesced counts the notifications folded into a newer one for the same object, never
	// delivered on their own; CoalescingEpisodes the switches to coalescing.
	Coalesced, CoalescingEpisodes uint64
	// Panics counts the panics contained (HandlerOptions.ContainPanics).
	Panics uint64
	// HandlerTime is the distribution of the time spent in each handler call, measured only
	// after EnableInformerTiming. A call made after the handler waited for work is timed,
	// unless a timed call started less than 1ms before its notification's date (see Lag); of the
	// calls made back to back (the handler is busy), one in 16 is timed. A call not timed is
	// counted with the next timed one, so that a handler getting notifications faster than one
	// a millisecond pays about two clock reads per 16 calls. Count and Sum are therefore
	// exact for a handler that gets fewer and estimates for a busier one (Count lags by the
	// calls since the last timed one); Processed is exact.
	HandlerTime DurationHistogram
}

// DurationHistogram is a distribution of durations.
//
// kcache extension.
type DurationHistogram struct {
	// Bounds are the buckets' inclusive upper bounds, ascending; Counts has one more element
	// than Bounds: Counts[i] counts the durations in (Bounds[i-1], Bounds[i]], and the last
	// one those above the last bound. Counts are per bucket, not cumulative.
	Bounds []time.Duration
	Counts []uint64
	// Count is the number of durations and Sum their total.
	Count uint64
	Sum   time.Duration
}

// InformerStatuses returns a snapshot of every running informer of the process (started, not
// stopped), in creation order. An informer is named by its SharedIndexInformerOptions
// .Identifier's name when it has one (client-go's reserved names keep their meaning for
// metrics); otherwise by default after its resource ("pods", "deployments.apps") when known,
// else its example object's type ("v1.Pod", or the Kind of an unstructured example), with
// "#2", "#3"… for the second and later live informers of the same default name, counted in
// creation order. Informers created by the informers factory, NewSharedIndexInformer*, the
// typed constructors and adapters built on them are all included.
//
// The process keeps no reference to an informer for this: an informer that stopped or was
// garbage-collected is gone from the list. Each call costs O(informers + handlers) and takes
// each informer's and handler's lock briefly; it is safe for concurrent use.
//
// kcache extension.
func InformerStatuses() []InformerStatus {
	informers := liveInformers()
	out := make([]InformerStatus, 0, len(informers))
	for _, s := range informers {
		if st, ok := s.informerStatus(); ok {
			out = append(out, st)
		}
	}
	return out
}

// ErrInformerNotFound is returned by InformerKeys and InformerObject when no running informer
// has the name.
//
// kcache extension.
var ErrInformerNotFound = errors.New("cache: no running informer of that name")

// KeyVersion is an object's key in an informer's store and its resourceVersion.
//
// kcache extension.
type KeyVersion struct {
	Key             string
	ResourceVersion string
}

// InformerKeys returns, in key order, at most limit keys (and their resourceVersions) of the
// store of the running informer called name, starting after the key after ("" for the
// first page), and the total number of keys. To page, pass the last key returned as after;
// the last page returns fewer than limit keys. limit <= 0 means 100. Object contents are
// never returned; see InformerObject. It costs O(n log n) for a store of n objects: it lists
// and sorts every key.
//
// kcache extension.
func InformerKeys(name, after string, limit int) (keys []KeyVersion, total int, err error) {
	s := findInformer(name)
	if s == nil {
		return nil, 0, fmt.Errorf("%w: %q", ErrInformerNotFound, name)
	}
	if limit <= 0 {
		limit = 100
	}
	all := s.indexer.ListKeys()
	sort.Strings(all)
	start := sort.SearchStrings(all, after)
	if after != "" && start < len(all) && all[start] == after {
		start++
	}
	end := min(start+limit, len(all))
	keys = make([]KeyVersion, 0, end-start)
	for _, k := range all[start:end] {
		kv := KeyVersion{Key: k}
		if obj, ok, _ := s.indexer.GetByKey(k); ok {
			if m, err := meta.Accessor(obj); err == nil {
				kv.ResourceVersion = m.GetResourceVersion()
			}
		}
		keys = append(keys, kv)
	}
	return keys, len(all), nil
}

// InformerObject returns the object stored under key by the running informer called name.
// The object is the informer's own: it must not be modified. Showing it to a user exposes
// whatever it holds (Secrets included); redact first.
//
// kcache extension.
func InformerObject(name, key string) (obj interface{}, exists bool, err error) {
	s := findInformer(name)
	if s == nil {
		return nil, false, fmt.Errorf("%w: %q", ErrInformerNotFound, name)
	}
	return s.indexer.GetByKey(key)
}

// findInformer returns the running informer called name, or nil.
func findInformer(name string) *sharedIndexInformer {
	for _, s := range liveInformers() {
		if s.status != nil && s.status.name == name && s.status.running() {
			return s
		}
	}
	return nil
}

// informerTracker is what an informer keeps for InformerStatuses.
type informerTracker struct {
	id       uint64
	name     string
	given    bool // name was given through the Identifier
	gvr      schema.GroupVersionResource
	typeName string
	// reflector is given to the informer's Reflector.
	reflector reflectorStatus
	// eventsIn counts the deltas applied.
	eventsIn atomic.Uint64

	// mu guards the fields below.
	mu                  sync.Mutex
	started, stopped    bool
	startedAt, syncedAt time.Time
	// rateAt, rateCount and rate are the previous rate computation.
	rateAt    time.Time
	rateCount uint64
	rate      float64
}

func (t *informerTracker) running() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.started && !t.stopped
}

// newInformerTracker registers s and returns its tracker.
func newInformerTracker(s *sharedIndexInformer, options SharedIndexInformerOptions) *informerTracker {
	gvr := options.Identifier.GroupVersionResource()
	id, name := registerInformer(s, options.Identifier.Name(), gvr, s.objectType)
	t := &informerTracker{id: id, name: name, given: options.Identifier.Name() != "", gvr: gvr, typeName: typeDescriptionOf(s.objectType)}
	t.reflector.clock = s.clock
	t.reflector.resource = gvr.Resource
	if t.reflector.resource == "" {
		t.reflector.resource = t.typeName
	}
	return t
}

// markStarted records the start at now.
func (t *informerTracker) markStarted(now time.Time) {
	t.mu.Lock()
	t.started, t.startedAt, t.rateAt = true, now, now
	t.mu.Unlock()
}

// markSynced records the sync at now.
func (t *informerTracker) markSynced(now time.Time) {
	t.mu.Lock()
	t.syncedAt = now
	t.mu.Unlock()
}

// markStopped records the stop and removes the informer from the registry.
func (t *informerTracker) markStopped() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	unregisterInformer(registration{id: t.id, name: t.name, owned: !t.given})
}

// informerStatus returns the informer's status; false unless it is running.
func (s *sharedIndexInformer) informerStatus() (InformerStatus, bool) {
	t := s.status
	if t == nil {
		return InformerStatus{}, false
	}
	now := s.clock.Now()
	synced := s.HasSynced()
	events := t.eventsIn.Load()
	t.mu.Lock()
	if !t.started || t.stopped {
		t.mu.Unlock()
		return InformerStatus{}, false
	}
	st := InformerStatus{
		Name:        t.name,
		DefaultName: !t.given,
		Resource:    t.gvr,
		Type:        t.typeName,
		Synced:      synced,
		StartedAt:   t.startedAt,
		EventsIn:    events,
	}
	if synced && !t.syncedAt.IsZero() {
		st.SyncedAt = t.syncedAt
		st.StartupLatency = t.syncedAt.Sub(t.startedAt)
	}
	if elapsed := now.Sub(t.rateAt); elapsed >= time.Second || t.rateCount == 0 && elapsed > 0 {
		t.rate = float64(events-t.rateCount) / elapsed.Seconds()
		t.rateAt, t.rateCount = now, events
	}
	st.EventsPerSecond = t.rate
	t.mu.Unlock()

	r := t.reflector.snapshot(synced)
	st.NotSyncedReason = r.reason
	st.Lists, st.Relists, st.WatchRestarts = r.lists, r.relists, r.watchRestarts
	st.LastWatchError, st.LastWatchErrorAt = r.watchErr, r.watchErrAt
	st.LastResourceVersionSeen = s.LastSyncResourceVersion()
	st.LastResourceVersionProcessed = s.LastProcessedResourceVersion()
	st.Objects = storeLen(s.indexer)
	st.Handlers = s.processor.handlerStatuses(now)
	return st, true
}

// storeLen returns the number of objects in store.
func storeLen(store Store) int {
	if c, ok := store.(*cache); ok {
		return c.storage.len()
	}
	return len(store.ListKeys())
}

// len returns the number of stored objects. O(1).
func (c *threadSafeMap) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state.len()
}

// observeDeltas counts the changes in deltas about to be applied and, with
// EnableInformerTiming, dates the notifications they cause. Call it under blockDeltas.
func (s *sharedIndexInformer) observeDeltas(deltas []Delta) {
	if s.status == nil {
		return
	}
	s.status.eventsIn.Add(uint64(changesIn(deltas)))
	if informerTiming.Load() {
		s.processor.setStamp()
	}
}

// changesIn counts the changes deltas bring to a store, as InformerStatus.EventsIn reports
// them: one per added, updated or deleted object, one per object of a list (a ReplacedAll
// delta carries a whole list), and none for a bookmark or a resync.
func changesIn(deltas []Delta) int {
	n := 0
	for _, d := range deltas {
		switch d.Type {
		case Added, Updated, Deleted, Replaced:
			n++
		case ReplacedAll:
			if info, ok := d.Object.(ReplacedAllInfo); ok {
				n += len(info.Objects)
			}
		}
	}
	return n
}
