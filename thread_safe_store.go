package cache

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kcache/cache/internal/features"
)

// ThreadSafeStore is the concurrent, indexed map underneath Store and Indexer. Unlike them it is
// keyed by the caller: every write names the key explicitly.
//
// Objects it returns are shared with the store; modifying one corrupts the indices and races with
// other readers. Treat them as read-only.
type ThreadSafeStore interface {
	Add(key string, obj interface{})
	Update(key string, obj interface{})
	// Delete removes key. It does not advance the store's resource version; prefer
	// DeleteWithObject, which records the deleted object's resource version.
	Delete(key string)
	DeleteWithObject(key string, obj interface{})
	Get(key string) (item interface{}, exists bool)
	List() []interface{}
	ListKeys() []string
	Replace(items map[string]interface{}, resourceVersion string)
	Index(indexName string, obj interface{}) ([]interface{}, error)
	IndexKeys(indexName, indexedValue string) ([]string, error)
	Bookmark(rv string)
	LastStoreSyncResourceVersion() string
	ListIndexFuncValues(name string) []string
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
	GetIndexers() Indexers

	// AddIndexers adds index functions and indexes the objects already stored.
	AddIndexers(newIndexers Indexers) error
	// Resync does nothing and always returns nil.
	//
	// Deprecated: it exists only to satisfy the interface.
	Resync() error
}

// ThreadSafeStoreWithTransaction is a ThreadSafeStore that applies a batch of writes under one
// lock acquisition.
type ThreadSafeStoreWithTransaction interface {
	ThreadSafeStore
	// Transaction applies the writes in order under one write lock.
	Transaction(fns ...ThreadSafeStoreTransaction)
}

// ThreadSafeStoreTransaction is a Transaction together with the key of its object.
type ThreadSafeStoreTransaction struct {
	Transaction
	Key string
}

// ThreadSafeStoreOption configures a ThreadSafeStore made by NewThreadSafeStore.
type ThreadSafeStoreOption = func(*threadSafeMap)

// WithThreadSafeStoreMetrics makes the store publish its latest resource version under
// identifier, through metricsProvider or, when metricsProvider is nil, through the provider set
// with SetInformerMetricsProvider. Nothing is published unless identifier is Reserved.
func WithThreadSafeStoreMetrics(identifier InformerNameAndResource, metricsProvider InformerMetricsProvider) ThreadSafeStoreOption {
	return func(c *threadSafeMap) {
		c.metrics = newStoreMetrics(identifier, metricsProvider)
	}
}

// NewThreadSafeStore returns an empty ThreadSafeStore indexed by indexers. The store copies
// indexers: AddIndexers never writes to the caller's map (client-go's does).
//
// indices is accepted for compatibility and its content is ignored: the store always starts
// with empty indices, consistent with its empty content. NewThreadSafeStore panics if an
// IndexFunc in indexers is nil, a programming error client-go only detects, by panicking, at
// the first write.
//
// The returned store also implements ThreadSafeStoreWithTransaction. It caches each object's
// index values, so an update calls every IndexFunc once and a delete calls none, and it calls
// index functions before taking its lock. Replace builds the new content and its indices
// before taking the lock and holds it only to swap them in, so a relist does not stall readers.
//
// IndexFunc errors: where client-go panics, this store rejects the write. All index values of
// the new object are computed before anything changes; if one fails, the key keeps its previous
// object and index entries (or stays absent), no resource version is recorded, and the error
// (naming the key and the index) goes to utilruntime.HandleError. In Replace only the failing
// objects are affected. AddIndexers returns the error and adds no index.
func NewThreadSafeStore(indexers Indexers, indices Indices, opts ...ThreadSafeStoreOption) ThreadSafeStore {
	return newThreadSafeMap(indexers, opts...)
}

func newThreadSafeMap(indexers Indexers, opts ...ThreadSafeStoreOption) *threadSafeMap {
	set, err := newIndexerSet(indexers)
	if err != nil {
		panic(err)
	}
	c := &threadSafeMap{state: newStoreState(0, len(set.funcs))}
	c.indexers.Store(set)
	for _, opt := range opts {
		opt(c)
	}
	if c.metrics == nil {
		c.metrics = newStoreMetrics(InformerNameAndResource{}, nil)
	}
	return c
}

// threadSafeMap is the ThreadSafeStore of this package, and the storage under every Store and
// Indexer it creates.
//
// Objects live in dense slices indexed through a key→slot map, so List and ListKeys are a
// single copy, and each object's index values are cached next to it. Indices map each value to
// the slots of its objects, so ByIndex reads the objects without a key lookup each (3–4× faster
// than a set of keys, and 12 bytes less per object and index). Caching means an update
// runs each IndexFunc once (on the new object) instead of twice, index values are computed
// before the lock is taken, and a delete runs no user code at all. It also means that an object
// modified in place after it was stored (which is forbidden) is still removed from exactly the
// index entries it was added under.
//
// IndexFunc errors: client-go panics when an IndexFunc fails during a write. This store instead
// rejects the write: every index value of the new object is computed before anything is
// changed, and if one fails the object's key keeps its previous object and index entries (or
// stays absent) and its resource version is not recorded. Store and Indexer methods return the
// error; the ThreadSafeStore methods, which have no error result, report it through
// utilruntime.HandleError. In Replace, only the failing objects are affected: each keeps its
// previous state and the rest of the list is applied.
type threadSafeMap struct {
	// indexers is the current set of index functions. It is replaced only under mu (by
	// AddIndexers) and loaded without mu by writers that compute index values before locking.
	indexers atomic.Pointer[indexerSet]

	// mu guards state, rv and gen.
	mu    sync.RWMutex
	state storeState
	rv    string
	// gen counts writes, so that AddIndexers can tell whether the content changed while it
	// computed index values without the lock.
	gen uint64

	// metrics is never nil.
	metrics *storeMetrics

	// compact, when set, makes the store keep each object as a *compactEntry (see
	// WithCompactStorage): writes encode before taking the lock, reads decode after releasing
	// it. Index values are always computed from the objects given.
	compact *compactCodec

	// unlockedHook, when set (only by tests), runs after a write computed index values without
	// the lock and before it takes the lock, so tests can interleave a concurrent change.
	unlockedHook func()
}

// withCompact makes the store compact (see WithCompactStorage); nil keeps objects as given.
func withCompact(compact *compactCodec) ThreadSafeStoreOption {
	return func(c *threadSafeMap) { c.compact = compact }
}

// toStored returns what the store keeps for obj.
func (c *threadSafeMap) toStored(obj interface{}) (interface{}, error) {
	if c.compact == nil {
		return obj, nil
	}
	return c.compact.encode(obj)
}

// fromStored returns the object the store keeps as stored.
func (c *threadSafeMap) fromStored(stored interface{}) interface{} {
	if c.compact == nil {
		return stored
	}
	return c.compact.decode(stored)
}

// fromStoredAll is fromStored for every element of stored, in place.
func (c *threadSafeMap) fromStoredAll(stored []interface{}) []interface{} {
	if c.compact == nil {
		return stored
	}
	return c.compact.decodeAll(stored)
}

// afterUnlockedWork runs the test hook, if any.
func (c *threadSafeMap) afterUnlockedWork() {
	if c.unlockedHook != nil {
		c.unlockedHook()
	}
}

var _ ThreadSafeStoreWithTransaction = &threadSafeMap{}

// Add is Update.
func (c *threadSafeMap) Add(key string, obj interface{}) {
	c.Update(key, obj)
}

// Update stores obj under key, replacing any previous object, and records obj's resource
// version. A nil obj is stored but indexed under no value. If an IndexFunc fails, nothing
// changes and the error goes to utilruntime.HandleError.
func (c *threadSafeMap) Update(key string, obj interface{}) {
	if err := c.update(key, obj); err != nil {
		utilruntime.HandleError(err)
	}
}

// update is Update returning the IndexFunc error.
func (c *threadSafeMap) update(key string, obj interface{}) error {
	set := c.indexers.Load()
	// The values go to a stack buffer, which put copies into the store's flat value array, so
	// an update allocates nothing beyond what the index functions return.
	var buf [4][]string
	var vals [][]string
	if obj != nil && len(set.funcs) > 0 {
		if len(set.funcs) <= len(buf) {
			vals = buf[:len(set.funcs)]
		} else {
			vals = make([][]string, len(set.funcs))
		}
		if err := set.valuesInto(key, obj, 0, vals); err != nil {
			return err
		}
	}
	rv, hasRV := rvFromObject(obj)
	stored, err := c.toStored(obj)
	if err != nil {
		return fmt.Errorf("cache: key %q: %w", key, err)
	}
	c.afterUnlockedWork()

	if err := c.putLocking(set, key, obj, stored, vals, rv, hasRV); err != nil {
		return err
	}
	if c.compact != nil {
		c.compact.remember(stored, obj)
	}
	return nil
}

// putLocking is update's locked part.
func (c *threadSafeMap) putLocking(set *indexerSet, key string, obj, stored interface{}, vals [][]string, rv string, hasRV bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	vals, err := c.catchUpLocked(set, key, obj, vals)
	if err != nil {
		return err
	}
	c.state.put(key, stored, vals)
	c.gen++
	if hasRV {
		c.setRVLocked(rv)
	}
	return nil
}

// catchUpLocked completes vals, computed with the indexer set, when AddIndexers added indices
// since; this is the only place where index functions run under the lock, and it is rare.
func (c *threadSafeMap) catchUpLocked(set *indexerSet, key string, obj interface{}, vals [][]string) ([][]string, error) {
	cur := c.indexers.Load()
	if cur == set || obj == nil {
		return vals, nil
	}
	more, err := cur.values(key, obj, len(set.funcs))
	if err != nil {
		return nil, err
	}
	copy(more, vals)
	return more, nil
}

// Delete removes key without recording a resource version.
func (c *threadSafeMap) Delete(key string) {
	c.DeleteWithObject(key, nil)
}

// DeleteWithObject removes key and, when obj is not nil and has metadata, records obj's
// resource version. It calls no index function: the stored object's index values are cached.
func (c *threadSafeMap) DeleteWithObject(key string, obj interface{}) {
	var rv string
	var hasRV bool
	if obj != nil {
		rv, hasRV = rvFromObject(obj)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.remove(key)
	c.gen++
	if hasRV {
		c.setRVLocked(rv)
	}
}

// Get returns the object stored under key. O(1).
func (c *threadSafeMap) Get(key string) (item interface{}, exists bool) {
	c.mu.RLock()
	slot, ok := c.state.slots[key]
	if ok {
		item = c.state.obj(slot)
	}
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return c.fromStored(item), true
}

// empty reports whether the store holds nothing.
func (c *threadSafeMap) empty() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state.len() == 0
}

// List returns every stored object in no particular order. It is one allocation and one copy
// (and a decode per object in a compact store).
func (c *threadSafeMap) List() []interface{} {
	c.mu.RLock()
	list := c.state.appendObjs(make([]interface{}, 0, c.state.len()))
	c.mu.RUnlock()
	return c.fromStoredAll(list)
}

// ListKeys returns every key in no particular order.
func (c *threadSafeMap) ListKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state.appendKeys(make([]string, 0, c.state.len()))
}

// Replace makes items the whole content and records resourceVersion. The new content and its
// indices are built before the lock is taken; the lock is held only to swap them in, so
// readers are not stalled by a relist. Objects whose IndexFunc fails keep their previous state
// (see threadSafeMap) and are reported through utilruntime.HandleError.
func (c *threadSafeMap) Replace(items map[string]interface{}, resourceVersion string) {
	keys := make([]string, 0, len(items))
	objs := make([]interface{}, 0, len(items))
	for k, obj := range items {
		keys = append(keys, k)
		objs = append(objs, obj)
	}
	if err := c.replace(keys, objs, resourceVersion); err != nil {
		utilruntime.HandleError(err)
	}
}

// replace is Replace from parallel key and object slices; a repeated key keeps its last
// object. It returns the IndexFunc errors, joined.
func (c *threadSafeMap) replace(keys []string, objs []interface{}, resourceVersion string) error {
	_, err := c.replaceAt(keys, objs, resourceVersion, anyGen)
	return err
}

// anyGen tells replaceAt to replace whatever the store's generation.
const anyGen = ^uint64(0)

// replaceAt is replace, done only if the store is still at generation gen when the new content
// is ready (always for anyGen); ok reports whether it replaced.
func (c *threadSafeMap) replaceAt(keys []string, objs []interface{}, resourceVersion string, gen uint64) (ok bool, err error) {
	set := c.indexers.Load()
	next, failed, errs := buildStoreState(set, keys, objs)
	if c.compact != nil {
		failed, errs = c.encodeState(&next, failed, errs)
	}
	c.afterUnlockedWork()

	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != anyGen && c.gen != gen {
		return false, nil
	}
	if cur := c.indexers.Load(); cur != set {
		// AddIndexers ran meanwhile: rebuild with every index (rare).
		next, failed, errs = buildStoreState(cur, next.appendKeys(nil), c.fromStoredAll(next.appendObjs(nil)))
		if c.compact != nil {
			failed, errs = c.encodeState(&next, failed, errs)
		}
	}
	// Walk the failed slots from the highest down, so that a slot freed by remove is only
	// refilled from a higher slot, which has already been handled.
	for i := len(failed) - 1; i >= 0; i-- {
		slot := failed[i]
		key := next.key(slot)
		if old, ok := c.state.slots[key]; ok {
			next.setObj(slot, c.state.obj(old))
			next.indexSlot(slot, c.state.valuesAt(old))
		} else {
			next.remove(key)
		}
	}
	c.state = next
	c.gen++
	c.setRVLocked(resourceVersion)
	return true, errors.Join(errs...)
}

// Index returns the stored objects that share at least one value of the named index with obj,
// each once. The index function runs on obj before the lock is taken.
func (c *threadSafeMap) Index(indexName string, obj interface{}) ([]interface{}, error) {
	set := c.indexers.Load()
	pos, ok := set.pos[indexName]
	if !ok {
		return nil, errIndexNotFound(indexName)
	}
	values, err := set.funcs[pos](obj)
	if err != nil {
		return nil, err
	}

	c.mu.RLock()
	idx := c.state.indices[pos]
	var objs []interface{}
	if len(values) == 1 {
		objs = c.objectsLocked(idx.slotsOf(values[0]))
	} else {
		slots := slotSet{}
		for _, v := range values {
			for slot := range idx.slotsOf(v) {
				slots[slot] = struct{}{}
			}
		}
		objs = c.objectsLocked(slots)
	}
	c.mu.RUnlock()
	return c.fromStoredAll(objs), nil
}

// objectsLocked returns the objects in slots. O(len(slots)), no key lookups.
func (c *threadSafeMap) objectsLocked(slots slotSet) []interface{} {
	list := make([]interface{}, 0, len(slots))
	chunks := c.state.chunks
	for slot := range slots {
		list = append(list, chunks[slot>>slotChunkBits].objs[slot&slotChunkMask])
	}
	return list
}

// indexLocked returns the named index, or client-go's "does not exist" error.
func (c *threadSafeMap) indexLocked(indexName string) (index, error) {
	pos, ok := c.indexers.Load().pos[indexName]
	if !ok {
		return nil, errIndexNotFound(indexName)
	}
	return c.state.indices[pos], nil
}

// ByIndex returns the stored objects whose values for the named index include indexedValue,
// in no particular order. O(number of matches).
func (c *threadSafeMap) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	c.mu.RLock()
	idx, err := c.indexLocked(indexName)
	if err != nil {
		c.mu.RUnlock()
		return nil, err
	}
	objs := c.objectsLocked(idx.slotsOf(indexedValue))
	c.mu.RUnlock()
	return c.fromStoredAll(objs), nil
}

// IndexKeys returns, sorted, the keys of the stored objects whose values for the named index
// include indexedValue.
func (c *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	idx, err := c.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	set := idx.slotsOf(indexedValue)
	keys := make([]string, 0, len(set))
	for slot := range set {
		keys = append(keys, c.state.key(int(slot)))
	}
	slices.Sort(keys)
	return keys, nil
}

// ListIndexFuncValues returns the values the named index holds, in no particular order; none
// for an unknown index.
func (c *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	idx, err := c.indexLocked(indexName)
	if err != nil {
		return []string{}
	}
	values := make([]string, 0, len(idx))
	for v := range idx {
		values = append(values, v)
	}
	return values
}

// GetIndexers returns a copy of the index functions by name; changing it does not change the
// store.
func (c *threadSafeMap) GetIndexers() Indexers {
	return c.indexers.Load().indexers()
}

// AddIndexers adds index functions and indexes every stored object with them. A name already
// in use is an error ("indexer conflict: …"), as is a nil function. If a new IndexFunc fails for
// a stored object, AddIndexers returns the error and adds nothing (client-go panics).
//
// The new index values are computed without the lock; if the store was written meanwhile they
// are recomputed under it.
func (c *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	if len(newIndexers) == 0 {
		return nil
	}
	c.mu.RLock()
	set := c.indexers.Load()
	next, err := set.with(newIndexers)
	if err != nil {
		c.mu.RUnlock()
		return err
	}
	keys := c.state.appendKeys(nil)
	objs := c.state.appendObjs(nil)
	gen := c.gen
	c.mu.RUnlock()
	objs = c.fromStoredAll(objs)

	vals, err := indexValuesFrom(next, len(set.funcs), keys, objs)
	if err != nil {
		return err
	}
	c.afterUnlockedWork()

	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.indexers.Load(); cur != set || c.gen != gen {
		// Written meanwhile: start again under the lock.
		set = cur
		if next, err = set.with(newIndexers); err != nil {
			return err
		}
		objs := c.fromStoredAll(c.state.appendObjs(nil))
		if vals, err = indexValuesFrom(next, len(set.funcs), c.state.appendKeys(nil), objs); err != nil {
			return err
		}
	}
	// Widen every slot's cells from the old number of indices to the new one, and index the
	// objects with the new functions.
	from, to := len(set.funcs), len(next.funcs)
	for i := range c.state.chunks {
		ch := &c.state.chunks[i]
		widened := make([]*[]string, len(ch.keys)*to, cap(ch.keys)*to)
		for o := range ch.keys {
			copy(widened[o*to:], ch.cells[o*from:(o+1)*from])
		}
		ch.cells = widened
	}
	for range newIndexers {
		c.state.indices = append(c.state.indices, index{})
	}
	for slot := range c.state.len() {
		cells := c.state.cellsAt(slot)
		for i := from; i < to; i++ {
			// vals[slot] is nil for a nil object: indexed under nothing.
			cells[i] = c.state.indices[i].insertAll(indexValuesAt(vals[slot], i), slot)
		}
	}
	c.indexers.Store(next)
	c.gen++
	return nil
}

// indexValuesFrom computes the values of the functions of set from position from onwards, for
// every object. The first error is returned.
func indexValuesFrom(set *indexerSet, from int, keys []string, objs []interface{}) ([][][]string, error) {
	vals := make([][][]string, len(keys))
	for i, key := range keys {
		v, err := set.values(key, objs[i], from)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// Bookmark records rv as the latest resource version seen.
func (c *threadSafeMap) Bookmark(rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setRVLocked(rv)
}

// LastStoreSyncResourceVersion returns the latest resource version recorded by a write,
// Replace, Bookmark or Transaction. Like client-go it returns "" unless the AtomicFIFO feature
// is enabled (it is by default).
func (c *threadSafeMap) LastStoreSyncResourceVersion() string {
	if !features.Enabled(features.AtomicFIFO) {
		return ""
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// Resync does nothing.
func (c *threadSafeMap) Resync() error {
	return nil
}

// setRVLocked records rv and publishes it. The gauge is set under the lock so that it always
// ends at the resource version the store holds, even with concurrent writers.
func (c *threadSafeMap) setRVLocked(rv string) {
	c.rv = rv
	if n, err := parseRVForMetrics(rv); err == nil {
		c.metrics.storeResourceVersion.Set(float64(n))
	}
}

// rvFromObject returns obj's resource version, and false for an object without metadata.
func rvFromObject(obj interface{}) (string, bool) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return accessor.GetResourceVersion(), true
}

// parseRVForMetrics turns a resource version into a gauge value: "" is 0, and only the last 15
// digits count, so that the value stays exact in a float64.
func parseRVForMetrics(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	return strconv.ParseInt(rv, 10, 64)
}
