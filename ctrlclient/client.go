package ctrlclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
)

// DefaultTimeout is the Options.Timeout of a zero Options.
const DefaultTimeout = 2 * time.Second

// ErrCacheBehind is returned (wrapped, together with cache.ErrResourceVersionNotReached and the
// context's error) by a read whose wait for the cache timed out, when Options.ErrorOnTimeout is
// set.
var ErrCacheBehind = errors.New("ctrlclient: the cache has not caught up with this client's writes")

// Options configures a Client. The zero value is valid.
type Options struct {
	// Timeout bounds the wait of one read for the cache; the read's own context bounds it too.
	// Defaults to DefaultTimeout (2 seconds) if zero or negative.
	Timeout time.Duration

	// ErrorOnTimeout, when true, makes a read whose wait timed out fail with an error wrapping
	// ErrCacheBehind, without reading. Defaults to false: the read is made (it may be older
	// than this client's writes) and counted in Stats.TimedOut.
	ErrorOnTimeout bool

	// DisableFor lists the objects whose reads do not go to the cache, as
	// client.CacheOptions.DisableFor: their reads never wait. NewClient takes it from the
	// manager's client options. Defaults to none.
	DisableFor []client.Object

	// Unstructured tells that unstructured reads go to the cache, as
	// client.CacheOptions.Unstructured; if false they never wait. NewClient takes it from the
	// manager's client options. Defaults to false.
	Unstructured bool
}

// Stats counts the reads of a Client since it was made.
type Stats struct {
	// Checked counts the reads that were compared with this client's writes: reads of a kind
	// it wrote, served by a kcache informer.
	Checked uint64
	// Waited counts the checked reads that found the cache behind and waited for it.
	Waited uint64
	// TimedOut counts the waits that ended at Options.Timeout or at the read's context before
	// the cache caught up.
	TimedOut uint64
}

// NewClient returns a client.NewClientFunc for manager.Options.NewClient: it builds the
// manager's client as controller-runtime does (client.New) and wraps it with New, taking the
// cache, DisableFor and Unstructured from the client options the manager passes.
func NewClient(opts Options) client.NewClientFunc {
	return func(config *rest.Config, options client.Options) (client.Client, error) {
		c, err := client.New(config, options)
		if err != nil {
			return nil, err
		}
		var informers crcache.Informers
		if options.Cache != nil {
			informers, _ = options.Cache.Reader.(crcache.Informers)
			opts.DisableFor = append(append([]client.Object(nil), opts.DisableFor...), options.Cache.DisableFor...)
			opts.Unstructured = opts.Unstructured || options.Cache.Unstructured
		}
		rc, err := New(c, informers, opts)
		if err != nil {
			return nil, err
		}
		return rc, nil
	}
}

// New returns c with read-your-writes: writes through the returned client are recorded, and its
// cached reads wait for informers (typically the manager's cache, mgr.GetCache()) to reflect
// them; see the package documentation. A nil informers makes every read pass through. It fails
// if an object of opts.DisableFor has no kind in c's scheme.
func New(c client.Client, informers crcache.Informers, opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	rc := &Client{Client: c, informers: informers, opts: opts, uncached: map[schema.GroupVersionKind]bool{}, kinds: map[schema.GroupVersionKind]*kindState{}}
	for _, obj := range opts.DisableFor {
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil {
			return nil, fmt.Errorf("ctrlclient: DisableFor: %w", err)
		}
		rc.uncached[gvk] = true
	}
	return rc, nil
}

// Client is a client.Client with read-your-writes on a kcache cache; create it with New or
// NewClient. Methods it does not override are the wrapped client's. Safe for concurrent use.
type Client struct {
	client.Client
	informers crcache.Informers
	opts      Options
	// uncached holds the kinds of Options.DisableFor. Read-only after New.
	uncached map[schema.GroupVersionKind]bool

	// mu guards kinds.
	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kindState

	checked, waited, timedOut atomic.Uint64
}

var _ client.Client = (*Client)(nil)

// kindState is what the client wrote of one kind, and the informers that serve its reads.
type kindState struct {
	// mu guards the fields below.
	mu sync.Mutex
	// rv is the newest resourceVersion written, "" if none.
	rv string
	// deletes maps each key deleted through the client, and not yet seen gone by the cache, to
	// its UID ("" if unknown).
	deletes map[types.NamespacedName]types.UID
	// informers maps a representation to the kcache informer serving its reads (nil: not a
	// kcache informer, reads pass through).
	informers map[representation]*kcacheInformer
}

type kcacheInformer struct {
	waiter  cache.ResourceVersionWaiter
	indexer cache.Indexer
}

// representation tells the three kinds of objects controller-runtime caches apart.
type representation int8

const (
	typed representation = iota
	unstructuredObjects
	metadataOnly
)

func representationOf(obj runtime.Object) representation {
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
		return unstructuredObjects
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return metadataOnly
	}
	return typed
}

// Stats returns the client's read counters.
func (c *Client) Stats() Stats {
	return Stats{Checked: c.checked.Load(), Waited: c.waited.Load(), TimedOut: c.timedOut.Load()}
}

// state returns the state of gvk, creating it if create is set (else nil if absent).
func (c *Client) state(gvk schema.GroupVersionKind, create bool) *kindState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.kinds[gvk]
	if st == nil && create {
		st = &kindState{informers: map[representation]*kcacheInformer{}}
		c.kinds[gvk] = st
	}
	return st
}

// Get implements client.Reader: it waits (see the package documentation), then reads.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.waitForWrites(ctx, obj, obj, &key); err != nil {
		return err
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// List implements client.Reader: it waits (see the package documentation), then reads.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.waitForWrites(ctx, list, nil, nil); err != nil {
		return err
	}
	return c.Client.List(ctx, list, opts...)
}

// waitForWrites waits until the informer serving a read of target (an object or a list) has
// processed this client's writes of its kind: all of them, or for key only the newest version
// and key's pending delete. sample is an object of the read's type, nil to build one.
func (c *Client) waitForWrites(ctx context.Context, target runtime.Object, sample client.Object, key *client.ObjectKey) error {
	if c.informers == nil {
		return nil
	}
	gvk, err := apiutil.GVKForObject(target, c.Scheme())
	if err != nil {
		return nil // the read itself reports it
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	rep := representationOf(target)
	if c.uncached[gvk] || (rep == unstructuredObjects && !c.opts.Unstructured) {
		return nil
	}
	st := c.state(gvk, false)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	rv := st.rv
	var deletes map[types.NamespacedName]types.UID
	for k, uid := range st.deletes {
		if key == nil || k == *key {
			if deletes == nil {
				deletes = map[types.NamespacedName]types.UID{}
			}
			deletes[k] = uid
		}
	}
	st.mu.Unlock()
	if rv == "" && len(deletes) == 0 {
		return nil
	}
	if sample == nil {
		if sample, err = newObject(c.Scheme(), gvk, rep); err != nil {
			return nil
		}
	}
	inf, err := c.informerFor(ctx, st, rep, sample)
	if err != nil || inf == nil {
		return nil // not kcache's, or the read will fail the same way
	}
	c.checked.Add(1)
	waitCtx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	waited := false
	if rv != "" && !processed(inf.waiter, rv) {
		waited = true
		err = inf.waiter.WaitForResourceVersion(waitCtx, rv)
	}
	for k, uid := range deletes {
		if err != nil {
			break
		}
		var w bool
		w, err = cache.WaitForDeletion(waitCtx, inf.waiter, inf.indexer, storeKey(k), uid)
		waited = waited || w
		if err == nil {
			st.mu.Lock()
			if st.deletes[k] == uid {
				delete(st.deletes, k)
			}
			st.mu.Unlock()
		}
	}
	if waited {
		c.waited.Add(1)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cache.ErrResourceVersionNotReached):
		c.timedOut.Add(1)
		if c.opts.ErrorOnTimeout {
			return fmt.Errorf("%w: %s: %w", ErrCacheBehind, gvk.Kind, err)
		}
		return nil
	case errors.Is(err, cache.ErrInformerStopped):
		// The informer was removed (or the cache stopped): look it up again next time.
		st.mu.Lock()
		delete(st.informers, rep)
		st.mu.Unlock()
		return nil
	default:
		return nil // versions that cannot be compared: nothing to wait for
	}
}

// processed reports whether w has processed rv already.
func processed(w cache.ResourceVersionWaiter, rv string) bool {
	c, err := cache.CompareResourceVersion(w.LastProcessedResourceVersion(), rv)
	return err == nil && c >= 0
}

// storeKey is key as the informer's store keys it (cache.MetaNamespaceKeyFunc).
func storeKey(key types.NamespacedName) string {
	if key.Namespace == "" {
		return key.Name
	}
	return key.Namespace + "/" + key.Name
}

// informerFor returns the kcache informer serving reads of sample's representation, or nil if
// the cache's informer is not kcache's. It asks the cache once per kind and representation.
func (c *Client) informerFor(ctx context.Context, st *kindState, rep representation, sample client.Object) (*kcacheInformer, error) {
	st.mu.Lock()
	inf, known := st.informers[rep]
	st.mu.Unlock()
	if known {
		return inf, nil
	}
	got, err := c.informers.GetInformer(ctx, sample)
	if err != nil {
		return nil, err
	}
	if si, ok := got.(toolscache.SharedIndexInformer); ok {
		if k, ok := clientgo.Unwrap(si); ok {
			if w, ok := k.(cache.ResourceVersionWaiter); ok {
				inf = &kcacheInformer{waiter: w, indexer: k.GetIndexer()}
			}
		}
	}
	st.mu.Lock()
	st.informers[rep] = inf
	st.mu.Unlock()
	return inf, nil
}

// newObject returns an empty object of gvk in representation rep, for informer lookups.
func newObject(scheme *runtime.Scheme, gvk schema.GroupVersionKind, rep representation) (client.Object, error) {
	switch rep {
	case unstructuredObjects:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	case metadataOnly:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		return m, nil
	}
	raw, err := scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	obj, ok := raw.(client.Object)
	if !ok {
		return nil, fmt.Errorf("ctrlclient: %T is not a client.Object", raw)
	}
	return obj, nil
}
