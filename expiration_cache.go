package cache

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ExpirationCache is a Store whose entries expire. Every object is stored with the time it was
// added (a TimestampedEntry); an ExpirationPolicy decides when an entry has expired. Expiry is
// lazy: Get, GetByKey and List drop the expired entries they come across and do not return
// them, while ListKeys returns every key still stored, expired or not.
//
// Writes and expiry share one lock, so nothing is added while an entry is being expired; the
// policy runs under that lock and must be fast. Create one with NewTTLStore or
// NewExpirationStore.
type ExpirationCache struct {
	cacheStorage     ThreadSafeStore
	keyFunc          KeyFunc
	clock            clock.Clock
	expirationPolicy ExpirationPolicy
	// expirationLock serialises writes and expiry checks.
	expirationLock sync.Mutex
}

var _ Store = &ExpirationCache{}

// ExpirationPolicy decides whether a stored entry has expired.
type ExpirationPolicy interface {
	IsExpired(obj *TimestampedEntry) bool
}

// TTLPolicy expires entries older than TTL, measured with Clock. A TTL of zero or less never
// expires anything. A nil Clock means the real clock.
type TTLPolicy struct {
	// TTL is the age past which an entry expires.
	TTL time.Duration

	// Clock tells the time.
	Clock clock.Clock
}

// IsExpired reports whether obj is older than the TTL.
func (p *TTLPolicy) IsExpired(obj *TimestampedEntry) bool {
	return p.TTL > 0 && p.clock().Since(obj.Timestamp) > p.TTL
}

func (p *TTLPolicy) clock() clock.Clock {
	if p.Clock == nil {
		return clock.RealClock{}
	}
	return p.Clock
}

// TimestampedEntry is what an ExpirationCache stores: the object and when it was added.
// Timestamps come from the local clock; do not compare them with times from other machines.
type TimestampedEntry struct {
	Obj       interface{}
	Timestamp time.Time
	key       string
}

// NewTTLStore returns an ExpirationCache whose entries expire ttl after they were added (never,
// for ttl <= 0), by the real clock.
func NewTTLStore(keyFunc KeyFunc, ttl time.Duration) Store {
	return NewExpirationStore(keyFunc, &TTLPolicy{TTL: ttl, Clock: clock.RealClock{}})
}

// NewExpirationStore returns an ExpirationCache with the given policy. When the policy is a
// *TTLPolicy with a Clock, entries are timestamped with that clock (so a fake clock controls
// both ends); otherwise with the real clock. client-go always timestamps with the real clock.
func NewExpirationStore(keyFunc KeyFunc, expirationPolicy ExpirationPolicy) Store {
	c := clock.Clock(clock.RealClock{})
	if ttl, ok := expirationPolicy.(*TTLPolicy); ok && ttl.Clock != nil {
		c = ttl.Clock
	}
	return &ExpirationCache{
		cacheStorage:     NewThreadSafeStore(Indexers{}, Indices{}),
		keyFunc:          keyFunc,
		clock:            c,
		expirationPolicy: expirationPolicy,
	}
}

// getOrExpireLocked returns the object under key, deleting it instead if it expired.
func (c *ExpirationCache) getOrExpireLocked(key string) (interface{}, bool) {
	item, _ := c.cacheStorage.Get(key)
	entry, ok := item.(*TimestampedEntry)
	if !ok {
		return nil, false
	}
	if c.expirationPolicy.IsExpired(entry) {
		c.cacheStorage.Delete(key)
		return nil, false
	}
	return entry.Obj, true
}

// GetByKey returns the unexpired object stored under key; an expired one is deleted.
func (c *ExpirationCache) GetByKey(key string) (interface{}, bool, error) {
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	obj, exists := c.getOrExpireLocked(key)
	return obj, exists, nil
}

// Get returns the unexpired object stored under obj's key; an expired one is deleted. It fails
// only with a KeyError.
func (c *ExpirationCache) Get(obj interface{}) (interface{}, bool, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return nil, false, KeyError{obj, err}
	}
	return c.GetByKey(key)
}

// List returns the unexpired objects and deletes the expired ones. It checks every entry under
// one lock acquisition (client-go locks once per entry).
func (c *ExpirationCache) List() []interface{} {
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	items := c.cacheStorage.List()
	list := make([]interface{}, 0, len(items))
	for _, item := range items {
		entry, ok := item.(*TimestampedEntry)
		if !ok {
			continue
		}
		if c.expirationPolicy.IsExpired(entry) {
			c.cacheStorage.Delete(entry.key)
			continue
		}
		list = append(list, entry.Obj)
	}
	return list
}

// ListKeys returns every stored key, including those of expired entries not yet dropped.
func (c *ExpirationCache) ListKeys() []string {
	return c.cacheStorage.ListKeys()
}

// LastStoreSyncResourceVersion returns the latest resource version recorded by Add, Update,
// Delete, Replace or Bookmark ("" while the AtomicFIFO feature is off).
func (c *ExpirationCache) LastStoreSyncResourceVersion() string {
	return c.cacheStorage.LastStoreSyncResourceVersion()
}

// Bookmark records rv as the latest resource version seen.
func (c *ExpirationCache) Bookmark(rv string) {
	c.cacheStorage.Bookmark(rv)
}

// Add stores obj under its key with the current time, replacing any entry there, and records
// obj's resource version (client-go records none on Add, because it looks for one on the
// TimestampedEntry). It fails only with a KeyError.
func (c *ExpirationCache) Add(obj interface{}) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	rv, hasRV := rvFromObject(obj)
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	c.cacheStorage.Add(key, &TimestampedEntry{Obj: obj, Timestamp: c.clock.Now(), key: key})
	if hasRV {
		c.cacheStorage.Bookmark(rv)
	}
	return nil
}

// Update is Add: it also refreshes the entry's timestamp.
func (c *ExpirationCache) Update(obj interface{}) error {
	return c.Add(obj)
}

// Delete removes the entry under obj's key and records obj's resource version. It fails only
// with a KeyError.
func (c *ExpirationCache) Delete(obj interface{}) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	c.cacheStorage.DeleteWithObject(key, obj)
	return nil
}

// Replace makes list the whole content, every entry stamped with the same time, and records
// resourceVersion. If a key cannot be computed it returns the KeyError and changes nothing.
func (c *ExpirationCache) Replace(list []interface{}, resourceVersion string) error {
	items := make(map[string]interface{}, len(list))
	ts := c.clock.Now()
	for _, item := range list {
		key, err := c.keyFunc(item)
		if err != nil {
			return KeyError{item, err}
		}
		items[key] = &TimestampedEntry{Obj: item, Timestamp: ts, key: key}
	}
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	c.cacheStorage.Replace(items, resourceVersion)
	return nil
}

// Resync does nothing.
func (c *ExpirationCache) Resync() error {
	return nil
}
