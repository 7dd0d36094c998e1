package informers_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/listers"
	fcache "github.com/kcache/cache/testing"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// widgetSources returns a source of unstructured widgets and one of their metadata, each with
// the widgets "a/w1" and "b/w2", and clients over them shaped like
// dynamicClient.Resource(gvr).Namespace and metadataClient.Resource(gvr).Namespace.
func widgetSources() (func(string) *fcache.Client[*unstructured.UnstructuredList], func(string) *fcache.Client[*metav1.PartialObjectMetadataList]) {
	dyn := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &unstructured.UnstructuredList{} }})
	md := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &metav1.PartialObjectMetadataList{} }})
	for _, k := range []string{"a/w1", "b/w2"} {
		ns, name, _ := strings.Cut(k, "/")
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetNamespace(ns)
		u.SetName(name)
		_ = unstructured.SetNestedField(u.Object, "blue", "spec", "color")
		dyn.Add(u)
		md.Add(&metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		})
	}
	return fcache.NewClient[*unstructured.UnstructuredList](dyn).Namespace,
		fcache.NewClient[*metav1.PartialObjectMetadataList](md).Namespace
}

func TestForResource(t *testing.T) {
	dynClient, mdClient := widgetSources()
	f := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace("a"))
	dynInformer := informers.ForResource(f, widgets, dynClient)
	mdInformer := informers.ForResource(f, widgets, mdClient)
	if dynInformer.Informer() == mdInformer.Informer() {
		t.Fatal("the unstructured and the metadata informer of one resource are the same informer")
	}
	if again := informers.ForResource(f, widgets, dynClient); again.Informer() != dynInformer.Informer() {
		t.Error("a second request for the unstructured widgets got another informer")
	}
	other := widgets
	other.Resource = "gadgets"
	if g := informers.ForResource(f, other, dynClient); g.Informer() == dynInformer.Informer() {
		t.Error("two resources share an unstructured informer")
	}
	ctx := run(t, f)
	synced := mustSync(t, ctx, f)
	want := map[reflect.Type]bool{
		reflect.TypeFor[*unstructured.Unstructured](): true, reflect.TypeFor[*metav1.PartialObjectMetadata](): true,
	}
	if !reflect.DeepEqual(synced, want) {
		t.Errorf("Synced = %v, want %v", synced, want)
	}

	objs, err := dynInformer.Lister().List(labels.Everything())
	if err != nil || len(objs) != 1 {
		t.Fatalf("unstructured List() = %v, %v; want only namespace a's widget", objs, err)
	}
	u := objs[0].(*unstructured.Unstructured)
	if color, _, _ := unstructured.NestedString(u.Object, "spec", "color"); u.GetName() != "w1" || color != "blue" {
		t.Errorf("cached %s with color %q", u.GetName(), color)
	}
	obj, err := mdInformer.Lister().ByNamespace("a").Get("w1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := obj.(*metav1.PartialObjectMetadata); !ok {
		t.Errorf("metadata lister returned %T", obj)
	}
	_, err = mdInformer.Lister().ByNamespace("a").Get("missing")
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "widgets.example.com") {
		t.Errorf("Get(missing) error = %v, want NotFound naming widgets.example.com", err)
	}
	typed := cache.NewTypedSharedIndexInformer[*metav1.PartialObjectMetadata](mdInformer.Informer())
	byNS, err := typed.GetTypedIndexer().ByTypedIndex(cache.NamespaceIndex, "a")
	if err != nil || len(byNS) != 1 || byNS[0].Name != "w1" {
		t.Errorf("typed namespace index = %v, %v", byNS, err)
	}
}

func TestTypedInformerAccess(t *testing.T) {
	_, pods := podSource("a/p1")
	f := informers.NewSharedInformerFactory(0)
	podsInformer := informers.For[*v1.Pod](f, pods)
	added := make(chan string, 1)
	_, err := podsInformer.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*v1.Pod]{
		AddFunc: func(p *v1.Pod) { added <- p.Namespace + "/" + p.Name },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := run(t, f)
	mustSync(t, ctx, f)
	if got := <-added; got != "a/p1" {
		t.Errorf("typed handler got %s", got)
	}
	if _, err := podsInformer.Lister().Get("p1"); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `pod "p1"`) {
		t.Errorf("all-namespace Get of a namespaced pod: %v, want NotFound for pod \"p1\"", err)
	}
	pods2, err := listers.NewNamespaced(podsInformer.Lister(), "a").List(labels.Everything())
	if err != nil || len(pods2) != 1 {
		t.Errorf("namespaced List() = %v, %v", pods2, err)
	}
	byNS, err := podsInformer.Informer().GetIndexer().ByIndex(cache.NamespaceIndex, "a")
	if err != nil || len(byNS) != 1 {
		t.Errorf("namespace index = %v, %v", byNS, err)
	}
}

func TestForClusterScoped(t *testing.T) {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.NodeList{} }})
	src.Add(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	f := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace("ignored"))
	nodes := informers.ForClusterScoped[*v1.Node](f, fcache.NewClient[*v1.NodeList](src))
	ctx := run(t, f)
	mustSync(t, ctx, f)
	n, err := nodes.Lister().Get("n1")
	if err != nil || n.Name != "n1" {
		t.Errorf("Get(n1) = %v, %v", n, err)
	}
	if idx := nodes.Informer().GetIndexer().GetIndexers(); len(idx) != 0 {
		t.Errorf("cluster-scoped informer has indexers %v", idx)
	}
	for _, r := range src.Requests() {
		if r.Options.FieldSelector != "" {
			t.Errorf("the factory's namespace reached a cluster-scoped request: %q", r.Options.FieldSelector)
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Run("nil client function", func(t *testing.T) {
		f := informers.NewSharedInformerFactory(0)
		podsInformer := informers.For[*v1.Pod, *fcache.Client[*v1.PodList]](f, nil)
		failures := make(chan error, 1)
		if err := podsInformer.Informer().SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			select {
			case failures <- err:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
		ctx := run(t, f)
		if err := <-failures; !strings.Contains(err.Error(), "nil client") {
			t.Errorf("the informer failed with %v, want an error about the nil client", err)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if res := f.WaitForCacheSyncWithContext(cancelled); res.Err == nil || res.Synced[reflect.TypeFor[*v1.Pod]()] {
			t.Errorf("WaitForCacheSyncWithContext() = %+v, want pods unsynced", res)
		}
	})
	t.Run("client of another type", func(t *testing.T) {
		f := informers.NewSharedInformerFactory(0)
		_, configMaps := configMapSource("a/c1")
		wrong := informers.For[*v1.Pod](f, configMaps)
		failures := make(chan error, 1)
		if err := wrong.Informer().SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			select {
			case failures <- err:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
		run(t, f)
		err := <-failures
		for _, want := range []string{"*v1.Pod", "*v1.ConfigMapList", "*v1.ConfigMap"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	})
	t.Run("nil factory", func(t *testing.T) {
		_, pods := podSource("a/p1")
		podsInformer := informers.For[*v1.Pod](nil, pods)
		dynClient, _ := widgetSources()
		widgetInformer := informers.ForResource(nil, widgets, dynClient)
		for _, inf := range []cache.SharedIndexInformer{podsInformer.Informer(), widgetInformer.Informer()} {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				inf.RunWithContext(ctx)
			}()
			if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
				t.Error("an informer from a nil factory did not sync when run")
			}
			cancel()
			<-done
		}
		if keys, err := podsInformer.Lister().List(labels.Everything()); err != nil || len(keys) != 1 {
			t.Errorf("lister of an informer from a nil factory: %v, %v", keys, err)
		}
	})
	t.Run("InformerFor without a function", func(t *testing.T) {
		f := informers.NewSharedInformerFactory(0)
		if inf := f.InformerFor(&v1.Pod{}, nil); inf != nil {
			t.Errorf("InformerFor(nil) = %v, want nil", inf)
		}
		if inf := f.InformerFor(&v1.Pod{}, func(time.Duration) cache.SharedIndexInformer { return nil }); inf != nil {
			t.Errorf("InformerFor(returns nil) = %v, want nil", inf)
		}
		_, pods := podSource()
		if inf := informers.For[*v1.Pod](f, pods).Informer(); inf == nil {
			t.Error("after failed builds, For got no informer")
		} else if f.InformerFor(&v1.Pod{}, nil) != inf {
			t.Error("InformerFor(nil) does not return the existing informer")
		}
	})
	t.Run("panicking build", func(t *testing.T) {
		f := informers.NewSharedInformerFactory(0)
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Error("the build's panic was swallowed")
				}
			}()
			f.InformerFor(&v1.Pod{}, func(time.Duration) cache.SharedIndexInformer { panic(errors.New("boom")) })
		}()
		_, pods := podSource("a/p1")
		podsInformer := informers.For[*v1.Pod](f, pods)
		ctx := run(t, f)
		mustSync(t, ctx, f)
		if keys := podsInformer.Informer().GetStore().ListKeys(); !slices.Equal(keys, []string{"a/p1"}) {
			t.Errorf("after a panicking build, the informer holds %v", keys)
		}
	})
}

// noWatchList is a client that says it cannot serve streaming watch-lists, as client-go's
// fake clientsets do.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func TestWithWatchListSemanticsOf(t *testing.T) {
	cases := []struct {
		name          string
		opts          []informers.SharedInformerOption
		wantWatchList bool
	}{
		{name: "default: watch-list first", wantWatchList: true},
		{name: "a client without watch-list", opts: []informers.SharedInformerOption{informers.WithWatchListSemanticsOf(noWatchList{})}},
		{name: "a client without the method", opts: []informers.SharedInformerOption{informers.WithWatchListSemanticsOf(struct{}{})}, wantWatchList: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, pods := podSource("a/p1")
			f := informers.NewSharedInformerFactoryWithOptions(0, tc.opts...)
			informers.For[*v1.Pod](f, pods)
			ctx := run(t, f)
			mustSync(t, ctx, f)
			first := src.Requests()[0]
			gotWatchList := first.Verb == fcache.VerbWatch && first.Options.SendInitialEvents != nil && *first.Options.SendInitialEvents
			if gotWatchList != tc.wantWatchList {
				t.Errorf("first request %s %+v; want a watch-list: %v", first.Verb, first.Options, tc.wantWatchList)
			}
		})
	}
}
