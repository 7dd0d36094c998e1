package cache

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// defaultMutationCacheSize is how many recent mutations a MutationCache remembers unless
	// MutationCacheOptions.MaxCacheSize says otherwise.
	defaultMutationCacheSize = 100
	// defaultMutationCacheTTL is how long a mutation is remembered unless
	// MutationCacheOptions.TTL says otherwise.
	defaultMutationCacheTTL = 5 * time.Minute
)

// MutationCache overlays an informer's store with the objects the program itself just wrote
// (Mutation), so that reads right after a write see it even before the watch delivers it.
// Reads return the newer of the store's copy and the remembered one. Calling OnAddOrUpdate and
// OnDelete from the informer's event handlers lets it forget a mutation as soon as the store
// has caught up, and ignore a late Mutation of an object that is already deleted.
// Implementations are safe for concurrent use.
type MutationCache interface {
	GetByKey(key string) (interface{}, bool, error)
	ByIndex(indexName, indexKey string) ([]interface{}, error)
	Mutation(interface{})
	OnAddOrUpdate(obj runtime.Object)
	OnDelete(obj runtime.Object)

	// internal keeps implementations inside this package, as in client-go, so that methods
	// can be added later.
	internal()
}

// ResourceVersionComparator orders two versions of an object: negative if lhs is older than
// rhs, 0 if the same, positive if newer.
type ResourceVersionComparator interface {
	CompareResourceVersion(lhs, rhs runtime.Object) int
}

// MutationCacheOptions configures NewIntegerResourceVersionMutationCacheWithOptions. The zero
// value is valid.
type MutationCacheOptions struct {
	// Indexer is what ByIndex searches. Defaults to nil: ByIndex returns an error.
	Indexer Indexer

	// TTL is how long a mutation or delete tombstone is remembered at most. Defaults to 5
	// minutes if zero.
	TTL time.Duration

	// IncludeAdds makes GetByKey and ByIndex return remembered objects the store does not
	// have (yet). Only safe if the program can live with such an object being returned for up
	// to TTL after it was deleted, when the write and the delete come close together.
	// Defaults to false.
	IncludeAdds bool

	// MaxCacheSize is how many keys are remembered at most; the least recently used goes
	// first. Defaults to 100 if zero or, where client-go panics, negative.
	MaxCacheSize int

	// Clock is what TTL is measured on. Defaults to the real clock.
	//
	// kcache extension: client-go always uses the real clock.
	Clock clock.PassiveClock
}

// NewIntegerResourceVersionMutationCacheWithOptions returns a MutationCache over backingCache
// (and options.Indexer, for ByIndex) for objects whose resource versions are integers that grow
// with every write and compare across objects of one resource, as etcd's are.
//
// A mutation is forgotten once its TTL is over, when MaxCacheSize newer keys push it out, when
// a read finds the store at least as new, or when OnAddOrUpdate reports a version at least as
// new. OnDelete leaves a tombstone (for the TTL): a later Mutation of the deleted object (same
// UID, or a version not newer than the delete) is ignored, and a tombstone is never returned.
// Objects that the program created and that were deleted again before the informer saw them
// cannot be told apart from objects not yet seen: with IncludeAdds, check them again after the
// TTL.
//
// A resource version that is not an integer is not comparable: where client-go panics, kcache
// treats the first argument of the comparison as the newer one (the store's copy on reads, the
// new object in Mutation and the OnAddOrUpdate/OnDelete calls).
func NewIntegerResourceVersionMutationCacheWithOptions(logger klog.Logger, backingCache Store, options MutationCacheOptions) MutationCache {
	return newMutationCache(logger, backingCache, options)
}

// NewIntegerResourceVersionMutationCache is NewIntegerResourceVersionMutationCacheWithOptions
// with the given indexer, ttl and includeAdds and the default size of 100. A zero ttl means 5
// minutes.
func NewIntegerResourceVersionMutationCache(logger klog.Logger, backingCache Store, indexer Indexer, ttl time.Duration, includeAdds bool) MutationCache {
	return newMutationCache(logger, backingCache, MutationCacheOptions{Indexer: indexer, TTL: ttl, IncludeAdds: includeAdds})
}

func newMutationCache(logger klog.Logger, backingCache Store, options MutationCacheOptions) *mutationCache {
	size, ttl, clk := options.MaxCacheSize, options.TTL, options.Clock
	if size <= 0 {
		size = defaultMutationCacheSize
	}
	if ttl == 0 {
		ttl = defaultMutationCacheTTL
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &mutationCache{
		logger:       logger,
		backingCache: backingCache,
		indexer:      options.Indexer,
		mutations:    utilcache.NewLRUExpireCacheWithClock(size, clk),
		comparator:   integerResourceVersions{},
		ttl:          ttl,
		includeAdds:  options.IncludeAdds,
	}
}

// mutationTombstone is what OnDelete remembers for a deleted object: its identity and the
// version at which it was deleted. It is never returned to the caller.
type mutationTombstone struct {
	// deleted carries the deleted object's name, namespace, UID and resource version, in a
	// form the comparator accepts.
	deleted *metav1.PartialObjectMetadata
}

// mutationCache is the MutationCache of NewIntegerResourceVersionMutationCache. The values in
// mutations are the objects given to Mutation or *mutationTombstone.
type mutationCache struct {
	logger       klog.Logger
	backingCache Store
	indexer      Indexer
	comparator   ResourceVersionComparator
	ttl          time.Duration
	includeAdds  bool

	// mu serialises reads and writes so that a read's evictions cannot race a Mutation.
	mu        sync.Mutex
	mutations *utilcache.LRUExpireCache
}

func (c *mutationCache) internal() {}

// rememberedLocked returns what is remembered for key as a comparable object: a mutation that
// is a runtime.Object, or a tombstone's deleted metadata (tomb true).
func (c *mutationCache) rememberedLocked(key string) (obj runtime.Object, tomb bool, ok bool) {
	v, found := c.mutations.Get(key)
	if !found {
		return nil, false, false
	}
	if t, isTomb := v.(*mutationTombstone); isTomb {
		return t.deleted, true, true
	}
	obj, ok = v.(runtime.Object)
	return obj, false, ok
}

// GetByKey returns the newer of the store's object and the remembered mutation for key.
func (c *mutationCache) GetByKey(key string) (interface{}, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	obj, exists, err := c.backingCache.GetByKey(key)
	if err != nil {
		return nil, false, err
	}
	if !exists {
		if !c.includeAdds {
			return nil, false, nil
		}
		if obj, exists = c.mutations.Get(key); !exists {
			return nil, false, nil
		}
		if _, tomb := obj.(*mutationTombstone); tomb {
			return nil, false, nil
		}
	}
	if robj, ok := obj.(runtime.Object); ok {
		return c.newerLocked(key, robj), true, nil
	}
	return obj, true, nil
}

// ByIndex returns the newer version of every object the indexer lists under indexKey of
// indexName and, with includeAdds, the remembered mutations the index function puts there too.
// It fails if the cache has no indexer.
func (c *mutationCache) ByIndex(indexName, indexKey string) ([]interface{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.indexer == nil {
		return nil, errors.New("no indexer has been provided to the mutation cache")
	}
	keys, err := c.indexer.IndexKeys(indexName, indexKey)
	if err != nil {
		return nil, err
	}
	var items []interface{}
	seen := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		seen[key] = struct{}{}
		obj, exists, err := c.indexer.GetByKey(key)
		if err != nil {
			return nil, err
		}
		if !exists {
			continue
		}
		if robj, ok := obj.(runtime.Object); ok {
			obj = c.newerLocked(key, robj)
		}
		items = append(items, obj)
	}
	if !c.includeAdds {
		return items, nil
	}
	indexFunc := c.indexer.GetIndexers()[indexName]
	if indexFunc == nil {
		return items, nil
	}
	// Keys come oldest first, so reading them all keeps the LRU order.
	for _, k := range c.mutations.Keys() {
		key, _ := k.(string)
		if _, dup := seen[key]; dup {
			continue
		}
		obj, ok := c.mutations.Get(k)
		if !ok {
			continue
		}
		if _, tomb := obj.(*mutationTombstone); tomb {
			continue
		}
		values, err := indexFunc(obj)
		if err != nil {
			c.logger.V(4).Info("Unable to calculate an index entry for mutation cache entry", "key", key, "err", err)
			continue
		}
		for _, v := range values {
			if v == indexKey {
				items = append(items, obj)
				break
			}
		}
	}
	return items, nil
}

// newerLocked returns the remembered mutation for key if it is newer than backing, otherwise
// backing, forgetting a mutation or tombstone the store has caught up with. A tombstone newer
// than the store's copy (possible only if OnDelete was called before the store deleted the
// object) is kept but not returned.
func (c *mutationCache) newerLocked(key string, backing runtime.Object) runtime.Object {
	remembered, tomb, ok := c.rememberedLocked(key)
	if !ok {
		return backing
	}
	if c.comparator.CompareResourceVersion(backing, remembered) >= 0 {
		c.mutations.Remove(key)
		return backing
	}
	if tomb {
		return backing
	}
	return remembered
}

// Mutation remembers obj, the result of a write, for the TTL, unless an even newer version is
// remembered already, or the object is known to be deleted: a tombstone for its key with the
// same UID or with a version at least as new. An object without a usable key is reported
// through utilruntime.HandleError and ignored.
func (c *mutationCache) Mutation(obj interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	if robj, ok := obj.(runtime.Object); ok {
		if prev, tomb, found := c.rememberedLocked(key); found {
			cmp := c.comparator.CompareResourceVersion(robj, prev)
			if cmp < 0 {
				return
			}
			if tomb && (cmp == 0 || sameUID(robj, prev)) {
				return
			}
		}
	}
	c.mutations.Add(key, obj, c.ttl)
}

// OnAddOrUpdate tells the cache that the store now holds obj, typically from an informer
// handler's OnAdd and OnUpdate. A remembered mutation or tombstone for its key that is not newer
// than obj is forgotten. An object without a usable key is reported through
// utilruntime.HandleError and ignored.
func (c *mutationCache) OnAddOrUpdate(obj runtime.Object) {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, _, found := c.rememberedLocked(key); found && c.comparator.CompareResourceVersion(obj, prev) >= 0 {
		c.mutations.Remove(key)
	}
}

// OnDelete tells the cache that obj was deleted from the store, typically from an informer
// handler's OnDelete (pass the tombstone's Obj for a DeletedFinalStateUnknown). A remembered
// mutation of the same object (same UID, or a version not newer than obj) is replaced by a
// tombstone kept for the TTL; a newer mutation of a different object under the same key (it was
// re-created) is kept. Without metadata obj is ignored.
func (c *mutationCache) OnDelete(obj runtime.Object) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, _, found := c.rememberedLocked(key); found &&
		c.comparator.CompareResourceVersion(obj, prev) < 0 && !sameUID(obj, prev) {
		return
	}
	c.mutations.Add(key, &mutationTombstone{deleted: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace:       accessor.GetNamespace(),
		Name:            accessor.GetName(),
		UID:             accessor.GetUID(),
		ResourceVersion: accessor.GetResourceVersion(),
	}}}, c.ttl)
}

// sameUID reports whether a and b have the same UID (both without metadata count as
// different).
func sameUID(a, b runtime.Object) bool {
	am, errA := meta.Accessor(a)
	bm, errB := meta.Accessor(b)
	return errA == nil && errB == nil && am.GetUID() == bm.GetUID()
}

// integerResourceVersions compares resource versions as unsigned integers; "" is 0.
type integerResourceVersions struct{}

// resourceVersion parses obj's resource version.
func (integerResourceVersions) resourceVersion(obj runtime.Object) (uint64, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	rv := accessor.GetResourceVersion()
	if rv == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cache: resource version %q is not an integer: %w", rv, err)
	}
	return v, nil
}

// CompareResourceVersion orders lhs and rhs by resource version. If either cannot be parsed,
// it returns 1: lhs counts as newer, which is the store's copy on reads and the new object in
// Mutation.
func (c integerResourceVersions) CompareResourceVersion(lhs, rhs runtime.Object) int {
	l, errL := c.resourceVersion(lhs)
	r, errR := c.resourceVersion(rhs)
	switch {
	case errL != nil || errR != nil:
		return 1
	case l < r:
		return -1
	case l > r:
		return 1
	default:
		return 0
	}
}
