package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kcache/cache/internal/heap"
)

// ErrResourceVersionNotReached is returned (wrapped, together with the context's error) by
// WaitForResourceVersion when the context ends before the informer's store reflects the
// version waited for. The wait leaves nothing behind.
//
// kcache extension.
var ErrResourceVersionNotReached = errors.New("cache: resource version not processed yet")

// ErrInformerStopped is returned (wrapped) by WaitForResourceVersion when the informer stops,
// or has stopped, before its store reflects the version waited for: it will never reflect it.
//
// kcache extension.
var ErrInformerStopped = errors.New("cache: informer stopped")

// ErrResourceVersionWaitUnsupported is returned by the package-level WaitForResourceVersion
// and GetByKeyAtLeast for an informer that does not implement ResourceVersionWaiter (one not
// made by this package).
//
// kcache extension.
var ErrResourceVersionWaitUnsupported = errors.New("cache: informer cannot wait for a resource version")

// ResourceVersionWaiter is implemented by the shared informers of this package
// (NewSharedIndexInformer and friends, the informers package, the typed view of
// NewTypedSharedIndexInformer). It is a separate interface so that SharedIndexInformer stays
// client-go's; reach it with a type assertion, or through the package-level
// WaitForResourceVersion.
//
// An informer counts a resource version as processed once the change that carries it has
// been written to its store: a watch event's object (add, update, delete), a relist (the
// list's version, including the initial list), or a bookmark's version. Processed versions
// only move forward. Handlers are told asynchronously, so a processed version says nothing
// about them.
//
// kcache extension.
type ResourceVersionWaiter interface {
	// LastProcessedResourceVersion returns the newest resource version the informer has
	// processed into its store, or "" before the first one. Safe for concurrent use; O(1).
	LastProcessedResourceVersion() string

	// WaitForResourceVersion returns nil once the informer's store reflects rv: the informer
	// has processed rv itself or any newer version (a later event, a relist, a bookmark). It
	// returns at once if that is already so, and does not poll: the informer wakes it when it
	// processes a version at or past rv, without ever waiting for the waiter.
	//
	// Its other results, each checked with errors.Is:
	//   - rv not a decimal resource version (see CompareResourceVersion), or the informer's
	//     own versions not comparable: ErrResourceVersionNotComparable, at once.
	//   - ctx ends first: ErrResourceVersionNotReached together with ctx's error
	//     (context.DeadlineExceeded, context.Canceled or the cause).
	//   - the informer stops first, or has stopped: ErrInformerStopped.
	//
	// An informer that has not synced yet (or not started) waits for its initial list, whose
	// version decides. A version the informer will never see an event for — the write of
	// another resource kept in the same etcd, or of an object outside the informer's label or
	// field selector — is reflected as soon as the informer processes any later version, since
	// etcd numbers all its writes with one counter: the next event of the informer's own
	// objects, a relist or a bookmark (the API server sends one about every minute on a quiet
	// watch). Until then the wait is bounded only by ctx.
	WaitForResourceVersion(ctx context.Context, rv string) error
}

// WaitForResourceVersion waits until informer's store reflects rv; see
// ResourceVersionWaiter.WaitForResourceVersion. For an informer that does not implement
// ResourceVersionWaiter it returns ErrResourceVersionWaitUnsupported at once.
//
// kcache extension.
func WaitForResourceVersion(ctx context.Context, informer SharedInformer, rv string) error {
	w, ok := informer.(ResourceVersionWaiter)
	if !ok {
		return ErrResourceVersionWaitUnsupported
	}
	return w.WaitForResourceVersion(ctx, rv)
}

// GetByKeyAtLeast reads key from informer's store once the store reflects rv for that key: at
// once if the stored object's resource version is rv or newer, otherwise after
// WaitForResourceVersion(ctx, informer, rv), whose error it returns (with a nil object). An
// object deleted at or before rv is then reported as not existing. Typical use: read back an
// object right after writing it, with rv the version the write returned.
//
// kcache extension.
func GetByKeyAtLeast(ctx context.Context, informer SharedIndexInformer, key, rv string) (item interface{}, exists bool, err error) {
	w, ok := informer.(ResourceVersionWaiter)
	if !ok {
		return nil, false, ErrResourceVersionWaitUnsupported
	}
	indexer := informer.GetIndexer()
	if obj, exists, err := indexer.GetByKey(key); err == nil && exists && objectAtLeast(obj, rv) {
		return obj, true, nil
	}
	if err := w.WaitForResourceVersion(ctx, rv); err != nil {
		return nil, false, err
	}
	return indexer.GetByKey(key)
}

// TypedGetByKeyAtLeast is GetByKeyAtLeast for a typed informer. A stored object that is not a
// T is an error.
//
// kcache extension.
func TypedGetByKeyAtLeast[T Object](ctx context.Context, informer TypedSharedIndexInformer[T], key, rv string) (T, bool, error) {
	var zero T
	obj, exists, err := GetByKeyAtLeast(ctx, informer, key, rv)
	if err != nil || !exists {
		return zero, false, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, false, fmt.Errorf("cache: object at %q is %T, not %T", key, obj, zero)
	}
	return t, true, nil
}

// objectAtLeast reports whether obj's resource version is rv or newer.
func objectAtLeast(obj interface{}, rv string) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	c, err := CompareResourceVersion(m.GetResourceVersion(), rv)
	return err == nil && c >= 0
}

// deltasResourceVersion returns the resource version an informer has processed once deltas
// are applied: that of the newest delta that carries one (an object's own version for adds,
// updates and deletes, the list's for a relist, the bookmark's), or "" if none does. Resyncs
// (Sync, SyncAll) and tombstones carry old states and count for nothing.
func deltasResourceVersion(deltas []Delta) string {
	for i := len(deltas) - 1; i >= 0; i-- {
		d := deltas[i]
		switch d.Type {
		case Added, Updated, Deleted, Replaced:
			if _, ok := d.Object.(DeletedFinalStateUnknown); ok {
				continue
			}
			if m, err := meta.Accessor(d.Object); err == nil {
				if rv := m.GetResourceVersion(); rv != "" {
					return rv
				}
			}
		case ReplacedAll:
			if info, ok := d.Object.(ReplacedAllInfo); ok && info.ResourceVersion != "" {
				return info.ResourceVersion
			}
		case Bookmark:
			if info, ok := d.Object.(BookmarkInfo); ok && info.ResourceVersion != "" {
				return info.ResourceVersion
			}
		}
	}
	return ""
}

// resourceVersionTracker records the newest resource version an informer processed and wakes
// the goroutines waiting for a version. The informer calls advance after each store write and
// stop when it stops; neither ever waits for a waiter. With nobody waiting, advance costs one
// uncontended lock and a comparison.
type resourceVersionTracker struct {
	// mu guards the fields below.
	mu sync.Mutex
	// last is the newest version processed, "" before the first.
	last    string
	stopped bool
	// waiters holds the pending waits, the oldest version first. Created on first use.
	waiters *heap.Keyed[*rvWaiter, *rvWaiter]
}

// rvWaiter is one pending wait: done is closed, with err set before, when it is over.
type rvWaiter struct {
	rv   string
	done chan struct{}
	err  error
}

// lastProcessed returns the newest version processed.
func (t *resourceVersionTracker) lastProcessed() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// advance records rv as processed, unless it is empty or not newer than the last one (a
// version that cannot be compared replaces the last one: the informer's server then issues
// opaque versions, and the waiters are told so), and releases the waits it satisfies.
func (t *resourceVersionTracker) advance(rv string) {
	if rv == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	comparable := comparableResourceVersion(rv)
	if comparable && comparableResourceVersion(t.last) && compareComparableResourceVersions(rv, t.last) <= 0 {
		return
	}
	t.last = rv
	if t.waiters == nil || t.waiters.Len() == 0 {
		return
	}
	if !comparable {
		t.releaseAllLocked(fmt.Errorf("%w: the informer processed %q", ErrResourceVersionNotComparable, rv))
		return
	}
	for {
		_, w, ok := t.waiters.Peek()
		if !ok || compareComparableResourceVersions(w.rv, rv) > 0 {
			return
		}
		t.waiters.Pop()
		close(w.done)
	}
}

// stop fails every pending and future wait for a version not yet processed with
// ErrInformerStopped.
func (t *resourceVersionTracker) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.waiters != nil {
		t.releaseAllLocked(t.stoppedErrorLocked())
	}
}

func (t *resourceVersionTracker) stoppedErrorLocked() error {
	return fmt.Errorf("%w (last processed resource version %q)", ErrInformerStopped, t.last)
}

// releaseAllLocked ends every pending wait with err.
func (t *resourceVersionTracker) releaseAllLocked(err error) {
	for {
		_, w, ok := t.waiters.Pop()
		if !ok {
			return
		}
		w.err = err
		close(w.done)
	}
}

// wait implements ResourceVersionWaiter.WaitForResourceVersion.
func (t *resourceVersionTracker) wait(ctx context.Context, rv string) error {
	if !comparableResourceVersion(rv) {
		return fmt.Errorf("%w: %q", ErrResourceVersionNotComparable, rv)
	}
	t.mu.Lock()
	switch {
	case t.last != "" && !comparableResourceVersion(t.last):
		t.mu.Unlock()
		return fmt.Errorf("%w: the informer processed %q", ErrResourceVersionNotComparable, t.last)
	case t.last != "" && compareComparableResourceVersions(t.last, rv) >= 0:
		t.mu.Unlock()
		return nil
	case t.stopped:
		err := t.stoppedErrorLocked()
		t.mu.Unlock()
		return err
	}
	if t.waiters == nil {
		t.waiters = heap.NewKeyed[*rvWaiter](func(a, b *rvWaiter) bool {
			return compareComparableResourceVersions(a.rv, b.rv) < 0
		})
	}
	w := &rvWaiter{rv: rv, done: make(chan struct{})}
	t.waiters.Set(w, w)
	t.mu.Unlock()

	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
	}
	t.mu.Lock()
	_, pending := t.waiters.Remove(w)
	last := t.last
	t.mu.Unlock()
	if !pending {
		// Released while ctx ended: the release decides.
		return w.err
	}
	return fmt.Errorf("%w: waiting for %q, last processed %q: %w", ErrResourceVersionNotReached, rv, last, context.Cause(ctx))
}

// WaitForDeletion waits until indexer no longer holds the object a client deleted at key: the
// key is absent, or holds an object with another UID (a new object under the same name; with
// uid empty, any object there counts as the deleted one), or one marked for deletion. It wakes
// each time w processes a newer resource version, without polling, and reports whether it had
// to wait. Its errors are those of w.WaitForResourceVersion (ErrResourceVersionNotReached when
// ctx ends first, ErrInformerStopped, ErrResourceVersionNotComparable). indexer is the store w
// fills, normally its informer's GetIndexer(). An object without metadata counts as gone, and
// so does a lookup that fails.
//
// kcache extension.
func WaitForDeletion(ctx context.Context, w ResourceVersionWaiter, indexer Indexer, key string, uid types.UID) (waited bool, err error) {
	for {
		last := w.LastProcessedResourceVersion()
		obj, exists, err := indexer.GetByKey(key)
		if err != nil || !exists {
			return waited, nil
		}
		o, merr := meta.Accessor(obj)
		if merr != nil || (uid != "" && o.GetUID() != uid) || o.GetDeletionTimestamp() != nil {
			return waited, nil
		}
		waited = true
		if err := w.WaitForResourceVersion(ctx, nextResourceVersion(last)); err != nil {
			return waited, err
		}
	}
}

// nextResourceVersion returns the smallest decimal version newer than rv: "1" for "", and rv
// itself if it cannot be compared (the wait then reports ErrResourceVersionNotComparable).
func nextResourceVersion(rv string) string {
	if rv == "" {
		return "1"
	}
	if _, err := CompareResourceVersion(rv, rv); err != nil {
		return rv
	}
	b := []byte(rv)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}
