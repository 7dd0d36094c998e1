package cache

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// fakeThreadSafeMap reports every expiry of a fake ExpirationCache on deletedKeys.
type fakeThreadSafeMap struct {
	ThreadSafeStore
	deletedKeys chan<- string
}

// Delete is called only when an entry expires. As in client-go, with a nil deletedKeys the
// entry is not deleted at all; otherwise it is deleted and its key sent on deletedKeys, which
// blocks until the test receives it unless the channel has room.
func (c *fakeThreadSafeMap) Delete(key string) {
	if c.deletedKeys != nil {
		c.ThreadSafeStore.Delete(key)
		c.deletedKeys <- key
	}
}

// FakeExpirationPolicy expires every entry except those whose key, computed by
// RetrieveKeyFunc from the *TimestampedEntry, is in NeverExpire.
type FakeExpirationPolicy struct {
	NeverExpire     sets.Set[string]
	RetrieveKeyFunc KeyFunc
}

// IsExpired reports whether obj's key is missing from NeverExpire.
func (p *FakeExpirationPolicy) IsExpired(obj *TimestampedEntry) bool {
	key, _ := p.RetrieveKeyFunc(obj)
	return !p.NeverExpire.Has(key)
}

// NewFakeExpirationStore returns an ExpirationCache for tests: entries are timestamped with
// cacheClock, and the key of every expired entry is sent on deletedKeys (see fakeThreadSafeMap).
func NewFakeExpirationStore(keyFunc KeyFunc, deletedKeys chan<- string, expirationPolicy ExpirationPolicy, cacheClock clock.Clock) Store {
	return &ExpirationCache{
		cacheStorage:     &fakeThreadSafeMap{NewThreadSafeStore(Indexers{}, Indices{}), deletedKeys},
		keyFunc:          keyFunc,
		clock:            cacheClock,
		expirationPolicy: expirationPolicy,
	}
}
