package cache

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// mutationCacheSize is how many recent mutations a MutationCache remembers.
const mutationCacheSize = 100

// MutationCache overlays an informer's store with the objects the program itself just wrote
// (Mutation), so that reads right after a write see it even before the watch delivers it.
// Reads return the newer of the store's copy and the remembered one. Implementations are safe
// for concurrent use.
type MutationCache interface {
	GetByKey(key string) (interface{}, bool, error)
	ByIndex(indexName, indexKey string) ([]interface{}, error)
	Mutation(interface{})
}

// ResourceVersionComparator orders two versions of an object: negative if lhs is older than
// rhs, 0 if the same, positive if newer.
type ResourceVersionComparator interface {
	CompareResourceVersion(lhs, rhs runtime.Object) int
}

// NewIntegerResourceVersionMutationCache returns a MutationCache over backingCache (and
// indexer, for ByIndex; it may be nil) for objects whose resource versions are integers that
// grow with every write, as etcd's are. It remembers the last 100 mutations, each for ttl, and
// forgets one as soon as the store has caught up with it.
//
// If includeAdds is true, a remembered object is returned even when the store does not have it
// (yet); it may then be returned for up to ttl after it was deleted. If false, an object missing
// from the store is reported missing.
//
// A resource version that is not an integer is not comparable: where client-go panics, kcache
// treats the store's copy as the newer one.
func NewIntegerResourceVersionMutationCache(logger klog.Logger, backingCache Store, indexer Indexer, ttl time.Duration, includeAdds bool) MutationCache {
	return newIntegerResourceVersionMutationCache(logger, backingCache, indexer, ttl, includeAdds, clock.RealClock{})
}

func newIntegerResourceVersionMutationCache(logger klog.Logger, backingCache Store, indexer Indexer, ttl time.Duration, includeAdds bool, clk clock.PassiveClock) *mutationCache {
	return &mutationCache{
		logger:       logger,
		backingCache: backingCache,
		indexer:      indexer,
		mutations:    utilcache.NewLRUExpireCacheWithClock(mutationCacheSize, clk),
		comparator:   integerResourceVersions{},
		ttl:          ttl,
		includeAdds:  includeAdds,
	}
}

// mutationCache is the MutationCache of NewIntegerResourceVersionMutationCache.
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
// backing, forgetting a mutation the store has caught up with.
func (c *mutationCache) newerLocked(key string, backing runtime.Object) runtime.Object {
	remembered, ok := c.mutations.Get(key)
	if !ok {
		return backing
	}
	mutated, ok := remembered.(runtime.Object)
	if !ok {
		return backing
	}
	if c.comparator.CompareResourceVersion(backing, mutated) >= 0 {
		c.mutations.Remove(key)
		return backing
	}
	return mutated
}

// Mutation remembers obj, the result of a write, for ttl, unless an even newer version is
// remembered already. An object without a usable key is reported through
// utilruntime.HandleError and ignored.
func (c *mutationCache) Mutation(obj interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	if robj, ok := obj.(runtime.Object); ok {
		if remembered, found := c.mutations.Get(key); found {
			if prev, ok := remembered.(runtime.Object); ok && c.comparator.CompareResourceVersion(robj, prev) < 0 {
				return
			}
		}
	}
	c.mutations.Add(key, obj, c.ttl)
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
