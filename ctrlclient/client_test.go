package ctrlclient_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/ctrlclient"
	fcache "github.com/kcache/cache/testing"
)

// env is a ConfigMap "cluster": a fake API source, a kcache informer on it behind the bridge (the
// manager's cache), and a client whose writes go to the source and whose reads come from the
// informer's store, as a manager's client's do.
type env struct {
	src      *fcache.FakeControllerSource
	informer toolscache.SharedIndexInformer
	inner    *storeClient
}

func newEnv(t *testing.T, names ...string) *env {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	for _, n := range names {
		src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n, UID: types.UID("uid-" + n)}})
	}
	inf := clientgo.NewSharedIndexInformer(src, &v1.ConfigMap{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !toolscache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	return &env{src: src, informer: inf, inner: &storeClient{src: src, store: inf.GetIndexer()}}
}

// wrap returns the read-your-writes client over e's client, with informers as the cache.
func (e *env) wrap(t *testing.T, informers crcache.Informers, opts ctrlclient.Options) *ctrlclient.Client {
	c, err := ctrlclient.New(e.inner, informers, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// informers is a controller-runtime cache that serves one informer for ConfigMaps.
type informers struct {
	crcache.Informers
	informer crcache.Informer
}

func (i informers) GetInformer(_ context.Context, obj client.Object, _ ...crcache.InformerGetOption) (crcache.Informer, error) {
	if _, ok := obj.(*v1.ConfigMap); !ok {
		return nil, fmt.Errorf("no informer for %T", obj)
	}
	return i.informer, nil
}

// storeClient writes to the fake source (a write the informer never sees when hidden is set)
// and reads ConfigMaps from the informer's store.
type storeClient struct {
	client.Client
	src    *fcache.FakeControllerSource
	store  toolscache.Store
	mu     sync.Mutex
	hidden bool
}

func (s *storeClient) hide(h bool) { s.mu.Lock(); s.hidden = h; s.mu.Unlock() }

func (s *storeClient) Scheme() *runtime.Scheme { return scheme.Scheme }

func (s *storeClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	item, exists, err := s.store.GetByKey(key.Namespace + "/" + key.Name)
	if err != nil {
		return err
	}
	if !exists {
		return apierrors.NewNotFound(v1.Resource("configmaps"), key.Name)
	}
	item.(*v1.ConfigMap).DeepCopyInto(obj.(*v1.ConfigMap))
	return nil
}

func (s *storeClient) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l := list.(*v1.ConfigMapList)
	l.Items = nil
	for _, item := range s.store.List() {
		l.Items = append(l.Items, *item.(*v1.ConfigMap).DeepCopy())
	}
	return nil
}

func (s *storeClient) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hidden {
		s.src.ModifyDropWatch(obj.DeepCopyObject())
	} else {
		s.src.Modify(obj.DeepCopyObject())
	}
	obj.SetResourceVersion(strconv.Itoa(s.src.ResourceVersion()))
	return nil
}

func (s *storeClient) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hidden {
		s.src.DeleteDropWatch(obj.DeepCopyObject())
	} else {
		s.src.Delete(obj.DeepCopyObject())
	}
	return nil
}

func (s *storeClient) DeleteAllOf(_ context.Context, _ client.Object, _ ...client.DeleteAllOfOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, item := range s.store.List() {
		s.src.DeleteDropWatch(item.(*v1.ConfigMap).DeepCopy())
	}
	return nil
}

func (s *storeClient) SubResource(string) client.SubResourceClient { return statusClient{s} }

// statusClient writes the status subresource as storeClient writes objects.
type statusClient struct{ s *storeClient }

func (c statusClient) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return errors.New("storeClient: this status call is not used by the tests")
}
func (c statusClient) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return errors.New("storeClient: this status call is not used by the tests")
}
func (c statusClient) Update(ctx context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	return c.s.Update(ctx, obj)
}
func (c statusClient) Patch(ctx context.Context, obj client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
	return c.s.Update(ctx, obj)
}
func (c statusClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return errors.New("storeClient: this status call is not used by the tests")
}

func cm(name, value string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}, Data: map[string]string{"v": value}}
}

func key(name string) client.ObjectKey { return client.ObjectKey{Namespace: "ns", Name: name} }

// TestReadAfterWrite: a read waits for the client's own write, and only when it must.
func TestReadAfterWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "a", "b")
		c := e.wrap(t, informers{informer: e.informer}, ctrlclient.Options{})

		// A kind never written: no check.
		var got v1.ConfigMap
		if err := c.Get(t.Context(), key("a"), &got); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s != (ctrlclient.Stats{}) {
			t.Fatalf("stats after a read of an unwritten kind = %+v, want zero", s)
		}

		// The write is held back from the informer: the read waits for it.
		e.inner.hide(true)
		if err := c.Update(t.Context(), cm("a", "1")); err != nil {
			t.Fatal(err)
		}
		e.inner.hide(false)
		read := make(chan error, 1)
		go func() { read <- c.Get(t.Context(), key("a"), &got) }()
		synctest.Wait()
		if len(read) != 0 {
			t.Fatal("Get returned before the cache reflected the write")
		}
		// Any later version releases it (here another object's update).
		if err := c.Update(t.Context(), cm("b", "1")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := <-read; err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.Checked != 1 || s.Waited != 1 || s.TimedOut != 0 {
			t.Fatalf("stats = %+v, want one checked read that waited", s)
		}

		// Processed already: no wait.
		if err := c.Get(t.Context(), key("b"), &got); err != nil || got.Data["v"] != "1" {
			t.Fatalf("Get(b) = %v, %v", got.Data, err)
		}
		if s := c.Stats(); s.Checked != 2 || s.Waited != 1 {
			t.Fatalf("stats = %+v, want a second checked read that did not wait", s)
		}
	})
}

// TestTimeout: a write the cache never reflects ends the wait at the timeout, with the read
// returned and counted, or with ErrCacheBehind.
func TestTimeout(t *testing.T) {
	for _, errorOnTimeout := range []bool{false, true} {
		t.Run(fmt.Sprintf("ErrorOnTimeout=%v", errorOnTimeout), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "a")
				c := e.wrap(t, informers{informer: e.informer}, ctrlclient.Options{Timeout: 3 * time.Second, ErrorOnTimeout: errorOnTimeout})
				e.inner.hide(true)
				if err := c.Update(t.Context(), cm("a", "new")); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var got v1.ConfigMap
				err := c.Get(t.Context(), key("a"), &got)
				if d := time.Since(start); d != 3*time.Second {
					t.Fatalf("Get returned after %v, want the 3s timeout", d)
				}
				if errorOnTimeout {
					if !errors.Is(err, ctrlclient.ErrCacheBehind) || !errors.Is(err, cache.ErrResourceVersionNotReached) {
						t.Fatalf("Get = %v, want ErrCacheBehind", err)
					}
				} else if err != nil || got.Data != nil {
					t.Fatalf("Get = %v, %v; want the cached (older) object", got.Data, err)
				}
				if s := c.Stats(); s.TimedOut != 1 || s.Waited != 1 {
					t.Fatalf("stats = %+v, want one timed-out wait", s)
				}
				var list v1.ConfigMapList
				if err := c.List(t.Context(), &list); errorOnTimeout != (err != nil) {
					t.Fatalf("List = %v", err)
				}
			})
		})
	}
}

// TestDelete: a read after a delete waits until the cache no longer holds the object.
func TestDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "a", "b")
		c := e.wrap(t, informers{informer: e.informer}, ctrlclient.Options{})
		e.inner.hide(true)
		if err := c.Delete(t.Context(), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}); err != nil {
			t.Fatal(err)
		}
		e.inner.hide(false)
		read := make(chan error, 1)
		var got v1.ConfigMap
		go func() { read <- c.Get(t.Context(), key("a"), &got) }()
		synctest.Wait()
		if len(read) != 0 {
			t.Fatal("Get returned while the cache still held the deleted object")
		}
		// The deletion reaches the cache.
		e.src.Delete(cm("a", ""))
		synctest.Wait()
		if err := <-read; !apierrors.IsNotFound(err) {
			t.Fatalf("Get after the delete = %v, want NotFound", err)
		}
		var list v1.ConfigMapList
		if err := c.List(t.Context(), &list); err != nil || len(list.Items) != 1 {
			t.Fatalf("List = %d items, %v; want b only", len(list.Items), err)
		}
	})
}

// TestPassThrough: reads served by an informer that is not kcache's, reads of uncached kinds
// and clients without a cache never wait.
func TestPassThrough(t *testing.T) {
	cases := []struct {
		name      string
		informers func(e *env) crcache.Informers
		opts      ctrlclient.Options
	}{
		{name: "client-go informer", informers: func(e *env) crcache.Informers {
			return informers{informer: toolscache.NewSharedIndexInformer(e.src, &v1.ConfigMap{}, 0, toolscache.Indexers{})}
		}},
		{name: "DisableFor", informers: func(e *env) crcache.Informers { return informers{informer: e.informer} },
			opts: ctrlclient.Options{DisableFor: []client.Object{&v1.ConfigMap{}}}},
		{name: "no cache", informers: func(*env) crcache.Informers { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "a")
				c := e.wrap(t, tc.informers(e), tc.opts)
				e.inner.hide(true)
				if err := c.Update(t.Context(), cm("a", "new")); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var got v1.ConfigMap
				if err := c.Get(t.Context(), key("a"), &got); err != nil || time.Since(start) != 0 {
					t.Fatalf("Get = %v after %v, want an immediate read", err, time.Since(start))
				}
				if s := c.Stats(); s != (ctrlclient.Stats{}) {
					t.Fatalf("stats = %+v, want zero", s)
				}
			})
		})
	}
}

// TestConcurrentWriters: goroutines each update their own object and read it back at once;
// no read is older than the write before it.
func TestConcurrentWriters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		e := newEnv(t, names...)
		c := e.wrap(t, informers{informer: e.informer}, ctrlclient.Options{ErrorOnTimeout: true})
		var wg sync.WaitGroup
		for _, n := range names {
			wg.Go(func() {
				for i := range 50 {
					obj := cm(n, strconv.Itoa(i))
					if err := c.Update(t.Context(), obj); err != nil {
						t.Error(err)
						return
					}
					var got v1.ConfigMap
					if err := c.Get(t.Context(), key(n), &got); err != nil {
						t.Error(err)
						return
					}
					if cmp, err := cache.CompareResourceVersion(got.ResourceVersion, obj.ResourceVersion); err != nil || cmp < 0 {
						t.Errorf("%s: read %s after writing %s", n, got.ResourceVersion, obj.ResourceVersion)
						return
					}
				}
			})
		}
		wg.Wait()
		if s := c.Stats(); s.Checked != uint64(50*len(names)) || s.TimedOut != 0 {
			t.Fatalf("stats = %+v", s)
		}
	})
}

// TestStatusAndDeleteAllOf: status writes are recorded like object writes, and DeleteAllOf
// records the objects the cache held.
func TestStatusAndDeleteAllOf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "a", "b")
		c := e.wrap(t, informers{informer: e.informer}, ctrlclient.Options{Timeout: time.Hour})
		e.inner.hide(true)
		if err := c.Status().Update(t.Context(), cm("a", "status")); err != nil {
			t.Fatal(err)
		}
		var got v1.ConfigMap
		short, cancel := context.WithTimeout(t.Context(), time.Second) // the read's own deadline bounds the wait too
		defer cancel()
		if err := c.Get(short, key("a"), &got); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.Waited != 1 || s.TimedOut != 1 {
			t.Fatalf("stats after a hidden status write = %+v, want one timed-out wait", s)
		}
		if err := c.Status().Patch(t.Context(), cm("b", "status"), client.Merge); err != nil {
			t.Fatal(err)
		}
		e.inner.hide(false)

		if err := c.DeleteAllOf(t.Context(), &v1.ConfigMap{}, client.InNamespace("ns")); err != nil {
			t.Fatal(err)
		}
		var list v1.ConfigMapList
		done := make(chan error, 1)
		go func() { done <- c.List(t.Context(), &list) }()
		synctest.Wait()
		if len(done) != 0 {
			t.Fatal("List returned while the cache still held the deleted objects")
		}
		e.src.ResetWatch() // the informer re-watches and receives the deletes
		synctest.Wait()
		if err := <-done; err != nil || len(list.Items) != 0 {
			t.Fatalf("List after DeleteAllOf = %d items, %v; want none", len(list.Items), err)
		}
	})
}
