package informers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
)

// DefaultReadYourWritesTimeout is the ReadYourWritesOptions.Timeout of a zero options value.
const DefaultReadYourWritesTimeout = 2 * time.Second

// ReadYourWritesOptions configures NewReadYourWrites. The zero value is valid.
//
// kcache extension.
type ReadYourWritesOptions struct {
	// Timeout bounds the wait of one read; the read's context bounds it too. Defaults to
	// DefaultReadYourWritesTimeout (2 seconds) if zero or negative.
	Timeout time.Duration

	// ErrorOnTimeout, when true, makes a read whose wait timed out fail with the wait's error
	// (wrapping cache.ErrResourceVersionNotReached). Defaults to false: the read is made from
	// the cache as it is (it may be older than the recorded writes) and counted in TimedOut.
	ErrorOnTimeout bool
}

// ReadYourWrites gives a controller's reads of an informer's cache its own writes: it records
// the objects the controller wrote through its typed client and makes Get and List wait until
// the informer's store reflects them (see cache.ResourceVersionWaiter), so that a reconcile that
// updated an object and reads it back never gets the state from before its write. Create one
// per informer with NewReadYourWrites; safe for concurrent use.
//
// Record a create, update or patch by passing the call's results through Record, and a delete
// with RecordDelete:
//
//	pod, err = ryw.Record(clientset.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{}))
//	...
//	pod, err = ryw.Get(ctx, ns, name) // waits for the update above if the cache is behind
//
// Get and List wait for the newest version recorded (and, for Get, for a recorded delete of
// that key to reach the cache; for List, for every recorded delete). A version the informer
// will never see (a write outside its selector) is waited for until any later version arrives
// or the timeout; see cache.ResourceVersionWaiter for every case.
//
// kcache extension.
type ReadYourWrites[T Object] struct {
	informer TypedInformer[T]
	lister   listers.ResourceIndexer[T]
	opts     ReadYourWritesOptions

	// mu guards rv and deletes.
	mu sync.Mutex
	// rv is the newest version recorded, "" if none.
	rv string
	// deletes maps each key deleted (cache key, "namespace/name") to the deleted object's UID,
	// until the cache no longer holds that object.
	deletes map[string]types.UID

	timedOut atomic.Uint64
}

// NewReadYourWrites returns a ReadYourWrites over informer (typically For[T](factory, …)),
// whose informer must be a kcache informer; reads of one that is not wait for nothing.
//
// kcache extension.
func NewReadYourWrites[T Object](informer TypedInformer[T], opts ReadYourWritesOptions) *ReadYourWrites[T] {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultReadYourWritesTimeout
	}
	return &ReadYourWrites[T]{informer: informer, lister: informer.Lister(), opts: opts}
}

// Record records the resourceVersion of obj, the object a create, update or patch returned, and
// returns obj and err unchanged, so that it wraps the call. Nothing is recorded when err is not
// nil or obj has no comparable resourceVersion.
func (r *ReadYourWrites[T]) Record(obj T, err error) (T, error) {
	var zero T
	if err != nil || obj == zero {
		return obj, err
	}
	m, merr := meta.Accessor(obj)
	if merr != nil {
		return obj, err
	}
	rv := m.GetResourceVersion()
	if _, cerr := cache.CompareResourceVersion(rv, rv); cerr != nil {
		return obj, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rv == "" {
		r.rv = rv
	} else if c, _ := cache.CompareResourceVersion(rv, r.rv); c > 0 {
		r.rv = rv
	}
	return obj, err
}

// RecordDelete records that obj (namespace, name and, if set, UID) was deleted: later reads
// wait until the cache no longer holds it, or holds it marked for deletion (an object with
// finalizers). Call it after a successful delete; the deletion's resourceVersion is not
// available from a typed client.
func (r *ReadYourWrites[T]) RecordDelete(obj T) {
	var zero T
	if obj == zero {
		return
	}
	var uid types.UID
	if m, err := meta.Accessor(obj); err == nil {
		uid = m.GetUID()
	}
	key := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deletes == nil {
		r.deletes = map[string]types.UID{}
	}
	r.deletes[key] = uid
}

// TimedOut returns how many reads stopped waiting at the timeout (or their context) before the
// cache reflected the recorded writes.
func (r *ReadYourWrites[T]) TimedOut() uint64 { return r.timedOut.Load() }

// Get returns the object namespace/name (name alone for a cluster-scoped one) from the
// informer's cache once the cache reflects the recorded writes, with the lister's NotFound
// error if it is not there.
func (r *ReadYourWrites[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	if err := r.wait(ctx, &key); err != nil {
		var zero T
		return zero, err
	}
	if namespace == "" {
		return r.lister.Get(name)
	}
	return listers.NewNamespaced(r.lister, namespace).Get(name)
}

// List returns the objects of namespace ("" for all) that selector matches from the informer's
// cache, once the cache reflects the recorded writes.
func (r *ReadYourWrites[T]) List(ctx context.Context, namespace string, selector labels.Selector) ([]T, error) {
	if err := r.wait(ctx, nil); err != nil {
		return nil, err
	}
	if namespace == "" {
		return r.lister.List(selector)
	}
	return listers.NewNamespaced(r.lister, namespace).List(selector)
}

// wait waits for the newest recorded version and for the recorded deletes (of key only, if
// key is not nil). It returns an error only for a timeout with ErrorOnTimeout set.
func (r *ReadYourWrites[T]) wait(ctx context.Context, key *string) error {
	inf := r.informer.Informer()
	w, ok := inf.(cache.ResourceVersionWaiter)
	if !ok {
		return nil
	}
	r.mu.Lock()
	rv := r.rv
	var deletes map[string]types.UID
	for k, uid := range r.deletes {
		if key == nil || k == *key {
			if deletes == nil {
				deletes = map[string]types.UID{}
			}
			deletes[k] = uid
		}
	}
	r.mu.Unlock()
	if rv == "" && len(deletes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	var err error
	if rv != "" {
		err = w.WaitForResourceVersion(ctx, rv)
	}
	for k, uid := range deletes {
		if err != nil {
			break
		}
		if _, err = cache.WaitForDeletion(ctx, w, inf.GetIndexer(), k, uid); err == nil {
			r.mu.Lock()
			if r.deletes[k] == uid {
				delete(r.deletes, k)
			}
			r.mu.Unlock()
		}
	}
	if errors.Is(err, cache.ErrResourceVersionNotReached) {
		r.timedOut.Add(1)
		if r.opts.ErrorOnTimeout {
			return fmt.Errorf("informers: read waited for the cache: %w", err)
		}
	}
	return nil
}
