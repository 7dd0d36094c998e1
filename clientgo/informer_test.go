package clientgo_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
	fcache "github.com/kcache/cache/testing"
)

// The constructors return the bridge with client-go's exact types: controller-runtime's
// cache.Options.NewInformer field type and client-go's constructor signatures.
var (
	_ func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer    = clientgo.NewSharedIndexInformer
	_ func(toolscache.ListerWatcher, runtime.Object, toolscache.SharedIndexInformerOptions) toolscache.SharedIndexInformer = clientgo.NewSharedIndexInformerWithOptions
	_ func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer    = clientgo.NewInformerFunc(clientgo.Options{})
)

// Indexers given at construction and added before and after the start index the cache; the
// client-go Indexer reads kcache's objects and keys client-go tombstones.
func TestIndexer(t *testing.T) {
	src := newSource()
	for _, name := range []string{"a", "b", "c"} {
		src.Add(cm(name, name))
	}
	informer := newInformer(src, clientgo.Options{})
	byData := func(obj interface{}) ([]string, error) { return []string{obj.(*v1.ConfigMap).Data["k"]}, nil }
	if err := informer.AddIndexers(toolscache.Indexers{"data": byData}); err != nil {
		t.Fatal(err)
	}
	run(t, informer)
	waitSynced(t, informer.HasSyncedChecker())
	byName := func(obj interface{}) ([]string, error) { return []string{obj.(*v1.ConfigMap).Name}, nil }
	if err := informer.AddIndexers(toolscache.Indexers{"name": byName}); err != nil {
		t.Fatalf("AddIndexers after start: %v", err)
	}
	if err := informer.AddIndexers(toolscache.Indexers{"name": byName}); err == nil {
		t.Fatal("AddIndexers of a taken name: no error")
	}
	idx := informer.GetIndexer()
	if informer.GetStore() != toolscache.Store(idx) || informer.GetIndexer() != idx {
		t.Fatal("GetStore and GetIndexer are not the same indexer on every call")
	}
	kidx := mustUnwrap(t, informer).GetIndexer()
	for _, index := range []string{"app", "data", "name"} {
		objs, err := idx.ByIndex(index, "b")
		if err != nil || len(objs) != 1 {
			t.Fatalf("ByIndex(%s, b) = %v, %v, want one object", index, objs, err)
		}
		want, _, _ := kidx.GetByKey("ns/b")
		if objs[0] != want {
			t.Fatalf("ByIndex(%s) returned a different object than kcache's cache holds", index)
		}
		keys, err := idx.IndexKeys(index, "b")
		if err != nil || !slices.Equal(keys, []string{"ns/b"}) {
			t.Fatalf("IndexKeys(%s, b) = %v, %v", index, keys, err)
		}
		values := idx.ListIndexFuncValues(index)
		slices.Sort(values)
		if !slices.Equal(values, []string{"a", "b", "c"}) {
			t.Fatalf("ListIndexFuncValues(%s) = %v", index, values)
		}
	}
	got := idx.GetIndexers()
	if len(got) != 3 || got["app"] == nil || got["data"] == nil || got["name"] == nil {
		t.Fatalf("GetIndexers() = %v, want app, data and name", got)
	}
	same, err := idx.Index("app", cm("b", ""))
	if err != nil || len(same) != 1 {
		t.Fatalf("Index(app, b) = %v, %v", same, err)
	}
	keys := idx.ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"ns/a", "ns/b", "ns/c"}) || len(idx.List()) != 3 {
		t.Fatalf("ListKeys() = %v, List() has %d", keys, len(idx.List()))
	}
	if rv := idx.LastStoreSyncResourceVersion(); rv != "3" {
		t.Fatalf("LastStoreSyncResourceVersion() = %q, want 3", rv)
	}
	if _, err := idx.ByIndex("missing", "b"); err == nil {
		t.Fatal("ByIndex of a missing index: no error")
	}
}

// The client-go Indexer's writes, and its handling of client-go tombstones, nil and objects
// without metadata, on a store the informer does not run.
func TestIndexerWrites(t *testing.T) {
	idx := newInformer(newSource(), clientgo.Options{}).GetIndexer()
	a := cm("a", "1")
	if err := idx.Add(a); err != nil {
		t.Fatal(err)
	}
	a2 := cm("a", "2")
	if err := idx.Update(a2); err != nil {
		t.Fatal(err)
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a2}
	if got, ok, err := idx.Get(tomb); err != nil || !ok || got != a2 {
		t.Fatalf("Get(client-go tombstone) = %v, %v, %v; want the cached a", got, ok, err)
	}
	if err := idx.Delete(tomb); err != nil {
		t.Fatalf("Delete(client-go tombstone): %v", err)
	}
	if _, ok, _ := idx.GetByKey("ns/a"); ok {
		t.Fatal("a still cached after Delete of its client-go tombstone")
	}
	for _, bad := range []interface{}{nil, "not an object", struct{}{}} {
		if err := idx.Add(bad); err == nil {
			t.Errorf("Add(%T): no error", bad)
		}
		if _, _, err := idx.Get(bad); err == nil {
			t.Errorf("Get(%T): no error", bad)
		}
	}
	if err := idx.Replace([]interface{}{cm("x", "1"), cm("y", "1")}, "7"); err != nil {
		t.Fatal(err)
	}
	idx.Bookmark("9")
	if keys := idx.ListKeys(); len(keys) != 2 || idx.LastStoreSyncResourceVersion() != "9" {
		t.Fatalf("after Replace and Bookmark: keys %v, rv %q", keys, idx.LastStoreSyncResourceVersion())
	}
	if err := idx.Resync(); err != nil {
		t.Fatal(err)
	}
}

// Objects of the wrong type or without metadata from the server never reach client-go
// handlers; the informer keeps going.
func TestWrongTypeObjects(t *testing.T) {
	src := newSource()
	informer := newInformer(src, clientgo.Options{})
	rec := newRecorder()
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	run(t, informer)
	waitSynced(t, informer.HasSyncedChecker())
	if err := src.WaitForWatchers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	src.Inject(watch.Event{Type: watch.Added, Object: &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", ResourceVersion: "5"}}})
	src.Add(cm("a", "1"))
	if e := rec.next(t); describe(e.obj) != "cm ns/a" {
		t.Fatalf("got %v, want only the ConfigMap", e)
	}
	rec.none(t)
}

// SetTransform, SetWatchErrorHandler and SetWatchErrorHandlerWithContext are converted before
// the start and refused after it; a watch error handler gets a client-go Reflector named like
// kcache's, which client-go's DefaultWatchErrorHandler can log.
func TestSetters(t *testing.T) {
	src := newSource()
	src.Add(cm("a", "1"))
	informer := newInformer(src, clientgo.Options{})
	var transformed sync.Map
	if err := informer.SetTransform(func(obj interface{}) (interface{}, error) {
		if _, ok := obj.(*v1.ConfigMap); !ok {
			t.Errorf("transform got %T", obj)
			return obj, nil
		}
		obj.(*v1.ConfigMap).Annotations = map[string]string{"transformed": "yes"}
		transformed.Store(obj.(*v1.ConfigMap).Name, true)
		return obj, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := informer.SetWatchErrorHandler(func(*toolscache.Reflector, error) {}); err != nil {
		t.Fatal(err)
	}
	logger := newCaptureLogger()
	errs := make(chan *toolscache.Reflector, 10)
	if err := informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
		errs <- r
	}); err != nil {
		t.Fatal(err)
	}
	src.SetWatchListSupported(false)         // the informer lists...
	src.FailLists(1, fcache.InternalError()) // ...and the first list fails: the handlers are called
	ctx, cancel := context.WithCancel(contextWithLogger(logger))
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	waitSynced(t, informer.HasSyncedChecker())
	obj, _, _ := informer.GetIndexer().GetByKey("ns/a")
	if obj.(*v1.ConfigMap).Annotations["transformed"] != "yes" {
		t.Fatal("cached object was not transformed")
	}
	r := <-errs
	if r == nil || !strings.Contains(r.TypeDescription(), "ConfigMap") {
		t.Fatalf("watch error handler got reflector %v, want one with kcache's type description", r)
	}
	// Named, as in client-go, after the code that runs the informer, not after the bridge.
	if !strings.Contains(r.Name(), "/informer_test.go:") {
		t.Fatalf("reflector name %q, want this file's line that runs the informer", r.Name())
	}
	if !logger.has("ConfigMap") {
		t.Fatalf("DefaultWatchErrorHandler logged %q", logger.lines())
	}
	if err := src.WaitForWatchers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	src.FailLists(1, fcache.InternalError()) // the next list fails: the same stand-in again
	src.ResetWatch()
	var again *toolscache.Reflector
	select {
	case again = <-errs:
	case <-time.After(30 * time.Second):
		t.Fatalf("watch error handler not called for the failed watch; log: %q", logger.lines())
	}
	if again != r {
		t.Fatal("watch error handler got a new client-go Reflector for the same kcache Reflector")
	}

	for name, set := range map[string]func() error{
		"SetTransform":                    func() error { return informer.SetTransform(nil) },
		"SetWatchErrorHandler":            func() error { return informer.SetWatchErrorHandler(nil) },
		"SetWatchErrorHandlerWithContext": func() error { return informer.SetWatchErrorHandlerWithContext(nil) },
	} {
		if err := set(); err == nil {
			t.Errorf("%s after start: no error", name)
		}
	}
}

// GetController, LastSyncResourceVersion, HasSynced and IsStopped report the kcache
// informer's state.
func TestStateMethods(t *testing.T) {
	src := newSource()
	src.Add(cm("a", "1"))
	src.Add(cm("b", "1"))
	informer := newInformer(src, clientgo.Options{})
	ctrl := informer.GetController()
	if informer.HasSynced() || ctrl.HasSynced() || informer.LastSyncResourceVersion() != "" {
		t.Fatal("synced or versioned before the start")
	}
	stop := run(t, informer)
	waitSynced(t, ctrl.HasSyncedChecker())
	if !informer.HasSynced() || !ctrl.HasSynced() {
		t.Fatal("HasSynced false after the sync")
	}
	if informer.LastSyncResourceVersion() != "2" || ctrl.LastSyncResourceVersion() != "2" {
		t.Fatalf("LastSyncResourceVersion() = %q / %q, want 2", informer.LastSyncResourceVersion(), ctrl.LastSyncResourceVersion())
	}
	if name := informer.HasSyncedChecker().Name(); !strings.Contains(name, "ConfigMap") {
		t.Fatalf("HasSyncedChecker().Name() = %q", name)
	}
	ctrl.Run(make(chan struct{})) // the informer runs its own controller: returns at once
	if informer.IsStopped() {
		t.Fatal("IsStopped while running")
	}
	stop()
	if !informer.IsStopped() {
		t.Fatal("IsStopped false after stop")
	}
}

// Unwrap finds the kcache informer behind a bridge informer and nothing behind client-go's.
func TestUnwrap(t *testing.T) {
	informer := newInformer(newSource(), clientgo.Options{})
	k := mustUnwrap(t, informer)
	a := cm("a", "1")
	if err := k.GetIndexer().Add(a); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := informer.GetIndexer().GetByKey("ns/a"); !ok || got != a {
		t.Fatal("Unwrap returned an informer whose cache is not the bridge's")
	}
	if _, ok := clientgo.Unwrap(toolscache.NewSharedIndexInformer(newSource(), &v1.ConfigMap{}, 0, nil)); ok {
		t.Fatal("Unwrap of client-go's informer: ok")
	}
	if _, ok := clientgo.Unwrap(nil); ok {
		t.Fatal("Unwrap(nil): ok")
	}
}

// Unwrap sees through client-go's typed wrapper (what generated informers return since
// v0.37), also nested, and still finds nothing behind a wrapped client-go informer or a
// wrapper around nothing.
func TestUnwrapTypedWrapper(t *testing.T) {
	informer := newInformer(newSource(), clientgo.Options{})
	want := mustUnwrap(t, informer)
	typed := toolscache.NewTypedSharedIndexInformer[*v1.ConfigMap](informer)
	cases := []struct {
		name   string
		in     toolscache.SharedInformer
		wantOK bool
	}{
		{"typed bridge", typed, true},
		{"typed typed bridge", toolscache.NewTypedSharedIndexInformer[*v1.ConfigMap](typed), true},
		{"typed client-go informer", toolscache.NewTypedSharedIndexInformer[*v1.ConfigMap](
			toolscache.NewSharedIndexInformer(newSource(), &v1.ConfigMap{}, 0, nil)), false},
		{"typed nil", toolscache.NewTypedSharedIndexInformer[*v1.ConfigMap](nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := clientgo.Unwrap(tc.in)
			if ok != tc.wantOK {
				t.Fatalf("Unwrap ok = %v, want %v", ok, tc.wantOK)
			}
			if ok && got != want {
				t.Fatal("Unwrap returned another kcache informer than the bridge's")
			}
		})
	}
}

// A reserved client-go identity publishes the queue and store metrics to client-go's
// provider, under client-go's identity; an unreserved one publishes nothing.
func TestMetricsConversion(t *testing.T) {
	name, err := toolscache.NewInformerName("kcache-bridge-test")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name     string
		id       toolscache.InformerNameAndResource
		wantRV   bool
		wantName string
	}{
		{name: "reserved", id: name.WithResource(gvr), wantRV: true, wantName: "kcache-bridge-test"},
		{name: "unreserved", id: toolscache.InformerNameAndResource{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newSource()
			src.Add(cm("a", "1"))
			provider := &recordingProvider{}
			informer := clientgo.NewSharedIndexInformerWithOptions(src, &v1.ConfigMap{}, toolscache.SharedIndexInformerOptions{
				Identifier: tc.id, InformerMetricsProvider: provider,
			})
			run(t, informer)
			waitSynced(t, informer.HasSyncedChecker())
			ids, rv := provider.snapshot()
			if !tc.wantRV {
				if len(ids) != 0 {
					t.Fatalf("metrics created for %v", ids)
				}
				return
			}
			if len(ids) != 3 {
				t.Fatalf("metrics created for %d identities, want 3 (queue, latency, store)", len(ids))
			}
			for _, id := range ids {
				if id.Name() != tc.wantName || id.GroupVersionResource() != gvr {
					t.Fatalf("metric created for %q %v", id.Name(), id.GroupVersionResource())
				}
			}
			if rv != 1 {
				t.Fatalf("store resource version gauge = %v, want 1", rv)
			}
		})
	}
}

// recordingProvider is a client-go metrics provider that records the identities it is asked
// for and the store resource version gauge.
type recordingProvider struct {
	mu  sync.Mutex // mu guards ids and rv
	ids []toolscache.InformerNameAndResource
	rv  float64
}

func (p *recordingProvider) snapshot() ([]toolscache.InformerNameAndResource, float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ids), p.rv
}

func (p *recordingProvider) record(id toolscache.InformerNameAndResource) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids = append(p.ids, id)
}

func (p *recordingProvider) NewQueuedItemMetric(id toolscache.InformerNameAndResource) toolscache.GaugeMetric {
	p.record(id)
	return gauge(func(float64) {})
}

func (p *recordingProvider) NewProcessingLatencyMetric(id toolscache.InformerNameAndResource) toolscache.HistogramMetric {
	p.record(id)
	return histogram{}
}

func (p *recordingProvider) NewStoreResourceVersionMetric(id toolscache.InformerNameAndResource) toolscache.GaugeMetric {
	p.record(id)
	return gauge(func(v float64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.rv = v
	})
}

type gauge func(float64)

func (g gauge) Set(v float64) { g(v) }

type histogram struct{}

func (histogram) Observe(float64) {}

func mustUnwrap(t *testing.T, i toolscache.SharedInformer) cache.SharedIndexInformer {
	t.Helper()
	k, ok := clientgo.Unwrap(i)
	if !ok {
		t.Fatal("not a bridge informer")
	}
	return k
}

// contextWithLogger returns a context carrying logger, as controller-runtime's cache gives
// RunWithContext.
func contextWithLogger(logger *captureLogger) context.Context {
	return klog.NewContext(context.Background(), logger.Logger)
}

// With Options.Compact the bridge informer's cache keeps objects encoded: reads through the
// client-go Indexer and through kcache return decoded copies equal to the listed and watched
// objects, handlers receive the watch's objects, and indexes answer as without it.
func TestCompactOption(t *testing.T) {
	src := newSource()
	for _, name := range []string{"a", "b"} {
		src.Add(cm(name, name))
	}
	informer := newInformer(src, clientgo.Options{Compact: &cache.CompactOptions{DecodedCacheSize: -1}})
	rec := newRecorder()
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	run(t, informer)
	waitSynced(t, informer.HasSyncedChecker())
	src.Modify(cm("b", "b2"))
	for {
		e := rec.next(t)
		if e.kind == "update" {
			if got := e.obj.(*v1.ConfigMap).Data["k"]; got != "b2" {
				t.Fatalf("update handler got data %q, want b2", got)
			}
			break
		}
	}
	idx := informer.GetIndexer()
	first, ok, err := idx.GetByKey("ns/b")
	if err != nil || !ok {
		t.Fatalf("GetByKey(ns/b) = %v, %v", ok, err)
	}
	second, _, _ := idx.GetByKey("ns/b")
	if first == second {
		t.Fatal("two reads of a compact cache returned the same object, want decoded copies")
	}
	b := first.(*v1.ConfigMap)
	if b.Name != "b" || b.Data["k"] != "b2" || b.ResourceVersion != second.(*v1.ConfigMap).ResourceVersion {
		t.Fatalf("GetByKey(ns/b) = %+v, want the modified configmap", b)
	}
	objs, err := idx.ByIndex("app", "a")
	if err != nil || len(objs) != 1 || objs[0].(*v1.ConfigMap).Data["k"] != "a" {
		t.Fatalf("ByIndex(app, a) = %v, %v", objs, err)
	}
	if keys := idx.ListKeys(); len(keys) != 2 {
		t.Fatalf("ListKeys() = %v, want two keys", keys)
	}
	kobj, _, _ := mustUnwrap(t, informer).GetIndexer().GetByKey("ns/a")
	if kobj.(*v1.ConfigMap).Data["k"] != "a" {
		t.Fatalf("kcache's indexer holds %v for ns/a", kobj)
	}
}
