package generated_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/clientgo/generated"
	fcache "github.com/kcache/cache/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A generated factory given the bridge through InformerFor shares it with every generated
// accessor of the type: its lister reads kcache's cache, by namespace index.
func TestInformerFor(t *testing.T) {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	for _, ns := range []string{"a", "b"} {
		src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}})
	}
	client := fcache.NewClient[*v1.ConfigMapList](src)

	// The factory's own client is never used by the bridge informer: nil is enough here.
	factory := informers.NewSharedInformerFactory(nil, time.Hour)
	informer := factory.InformerFor(&v1.ConfigMap{}, generated.NewInformerFunc(&v1.ConfigMap{}, client, clientgo.Options{}))
	if _, ok := clientgo.Unwrap(informer); !ok {
		t.Fatal("InformerFor did not register the bridge")
	}
	configMaps := factory.Core().V1().ConfigMaps()
	if _, ok := clientgo.Unwrap(factory.InformerFor(&v1.ConfigMap{}, nil)); !ok {
		t.Fatal("the factory does not keep the bridge for the type")
	}
	// The generated accessors wrap the informer in client-go's typed wrapper; Unwrap sees
	// through it to the same kcache informer.
	k, _ := clientgo.Unwrap(informer)
	for name, i := range map[string]toolscache.SharedInformer{
		"Informer()":      configMaps.Informer(),
		"TypedInformer()": configMaps.TypedInformer(),
	} {
		if got, ok := clientgo.Unwrap(i); !ok || got != k {
			t.Fatalf("Unwrap(factory.Core().V1().ConfigMaps().%s) = %v, %v; want the bridge's kcache informer", name, got, ok)
		}
	}
	lister := configMaps.Lister()
	if _, ok := informer.GetIndexer().GetIndexers()[toolscache.NamespaceIndex]; !ok {
		t.Fatal("bridge informer has no namespace index")
	}

	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	got, err := lister.ConfigMaps("b").Get("settings")
	if err != nil || got.Namespace != "b" {
		t.Fatalf("lister Get(b/settings) = %v, %v", got, err)
	}
	cached, _, _ := informer.GetIndexer().GetByKey("b/settings")
	if got != cached {
		t.Fatal("lister returned another object than the bridge's cache holds")
	}
	all, err := lister.List(labels.Everything())
	if err != nil || len(all) != 2 {
		t.Fatalf("lister List = %d objects, %v; want 2", len(all), err)
	}
	inA, err := lister.ConfigMaps("a").List(labels.Everything())
	if err != nil || len(inA) != 1 || inA[0].Namespace != "a" {
		t.Fatalf("lister ConfigMaps(a).List = %v, %v", inA, err)
	}
}
