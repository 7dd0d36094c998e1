package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/clientgo/generated"
)

// TestGeneratedFactoryOnBridge registers a bridge informer with client-go's generated factory
// through InformerFor; the generated typed informer and lister of the type then run on it:
// handlers get events, the lister reads kcache's cache by namespace and name.
func TestGeneratedFactoryOnBridge(t *testing.T) {
	ctx := context.Background()
	cfg := conn.Config()
	clientset, err := kubernetes.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(ctx, t, clientset.CoreV1())
	cms := clientset.CoreV1().ConfigMaps(ns)
	for _, name := range []string{"one", "two"} {
		if _, err := cms.Create(ctx, configMap(name, nil, name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(ns))
	bridge := factory.InformerFor(&corev1.ConfigMap{}, generated.NewInformerFunc(&corev1.ConfigMap{}, cms, clientgo.Options{}))
	if _, ok := clientgo.Unwrap(bridge); !ok {
		t.Fatal("InformerFor did not keep the bridge informer")
	}
	typed := factory.Core().V1().ConfigMaps()
	lister := typed.Lister()
	added := make(chan string, 10)
	if _, err := typed.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*corev1.ConfigMap).Name },
	}); err != nil {
		t.Fatal(err)
	}

	fctx, cancel := context.WithCancel(ctx)
	factory.Start(fctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	for typ, ok := range factory.WaitForCacheSync(fctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	if _, err := cms.Create(ctx, configMap("three", nil, "three"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		select {
		case name := <-added:
			seen[name] = true
		case <-time.After(time.Minute):
			t.Fatalf("handler saw %v within 1m, want one, two and three", seen)
		}
	}
	got, err := lister.ConfigMaps(ns).Get("three")
	if err != nil || got.Data["value"] != "three" {
		t.Fatalf("lister Get(three) = %v, %v", got, err)
	}
	cached, _, _ := bridge.GetIndexer().GetByKey(ns + "/three")
	if got != cached {
		t.Fatal("the generated lister returned another object than the bridge's cache holds")
	}
	all, err := lister.ConfigMaps(ns).List(labels.Everything())
	if err != nil || len(all) != 3 {
		t.Fatalf("lister List = %d objects, %v; want 3", len(all), err)
	}
}
