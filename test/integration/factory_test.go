package integration

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kcache/cache"
	"github.com/kcache/cache/examples/clientgo/podsummary"
	"github.com/kcache/cache/informers"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// metadataClient returns a metadata-only client for the API server described by c.
func metadataClient(t testing.TB, c interface{ Config() *rest.Config }) metadata.Interface {
	t.Helper()
	cfg := c.Config()
	mc, err := metadata.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatalf("metadata client: %v", err)
	}
	return mc
}

// testPod returns a pod that the server accepts without a scheduler or kubelet: it stays
// Pending until the test sets its phase.
func testPod(name string) *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "kcache-it"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{
				{Name: "app", Image: "registry.k8s.io/pause:3.10"},
				{Name: "sidecar", Image: "registry.k8s.io/pause:3.10"},
			},
		},
	}
}

// TestFactoryTwoControllers runs two controllers on one shared informer factory against the
// real server: the clientgo example's pod-summary controller (typed clientset) and a second
// one that shares its pod informer and adds config maps through the dynamic client and pods
// through the metadata client. The factory drops managedFields from everything it caches. The
// summaries must follow the pods, and every informer must end equal to a fresh LIST through its
// own client.
func TestFactoryTwoControllers(t *testing.T) {
	ctx := context.Background()
	core := typedClient(t, conn)
	dyn := dynamicClient(t, conn)
	md := metadataClient(t, conn)
	ns := newNamespace(ctx, t, core)
	// The ServiceAccount admission plugin wants the default account, which no controller
	// manager creates here.
	if _, err := core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createMany(ctx, t, 20, 4, func(ctx context.Context, i int) error {
		_, err := core.Pods(ns).Create(ctx, testPod(fmt.Sprintf("pod-%02d", i)), metav1.CreateOptions{})
		return err
	})
	createConfigMaps(ctx, t, core, ns, 10, 4)

	factory := informers.NewSharedInformerFactoryWithOptions(0,
		informers.WithNamespace(ns),
		informers.WithTransform(cache.TransformStripManagedFields()))

	// Controller one: the example's, unchanged.
	summaries, err := podsummary.New(factory, core)
	if err != nil {
		t.Fatal(err)
	}
	// Controller two: the same pods, config maps as unstructured objects, pods metadata-only.
	pods := informers.For[*corev1.Pod](factory, core.Pods)
	configMaps := informers.For[*corev1.ConfigMap](factory, core.ConfigMaps)
	dynConfigMaps := informers.ForResource(factory, configMapsGVR, dyn.Resource(configMapsGVR).Namespace)
	podMetadata := informers.ForResource(factory, podsGVR, md.Resource(podsGVR).Namespace)
	var mu sync.Mutex
	metaEvents := map[string]int{}
	_, err = cache.NewTypedSharedIndexInformer[*metav1.PartialObjectMetadata](podMetadata.Informer()).AddTypedEventHandler(
		cache.TypedResourceEventHandlerFuncs[*metav1.PartialObjectMetadata]{
			AddFunc:    func(*metav1.PartialObjectMetadata) { mu.Lock(); metaEvents["add"]++; mu.Unlock() },
			UpdateFunc: func(_, _ *metav1.PartialObjectMetadata) { mu.Lock(); metaEvents["update"]++; mu.Unlock() },
			DeleteFunc: func(cache.DeletedObject[*metav1.PartialObjectMetadata]) {
				mu.Lock()
				metaEvents["delete"]++
				mu.Unlock()
			},
		})
	if err != nil {
		t.Fatal(err)
	}
	if again := informers.For[*corev1.Pod](factory, core.Pods); again.Informer() != pods.Informer() {
		t.Fatal("two requests for pods got two informers")
	}

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		factory.Shutdown()
	}()
	factory.StartWithContext(runCtx)
	syncCtx, syncCancel := context.WithTimeout(ctx, matchTimeout)
	defer syncCancel()
	res := factory.WaitForCacheSyncWithContext(syncCtx)
	if err := res.AsError(); err != nil {
		t.Fatal(err)
	}
	if len(res.Synced) != 4 { // pods, config maps, unstructured, metadata
		t.Errorf("WaitForCacheSync reports %v, want four object types", res.Synced)
	}
	go func() { done <- summaries.Run(runCtx, 2) }()

	waitForSummary := func(want map[string]string) {
		t.Helper()
		var got map[string]string
		eventually(ctx, t, matchTimeout, fmt.Sprintf("summary %v", want), func() bool {
			cm, err := core.ConfigMaps(ns).Get(ctx, podsummary.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			got = cm.Data
			return maps.Equal(got, want)
		})
	}
	waitForSummary(map[string]string{"total": "20", "Pending": "20"})

	// Pods change phase, go away and arrive while everything runs.
	for i := range 5 {
		p, err := core.Pods(ns).Get(ctx, fmt.Sprintf("pod-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		if _, err := core.Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 15; i < 20; i++ {
		if err := core.Pods(ns).Delete(ctx, fmt.Sprintf("pod-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 20; i < 23; i++ {
		if _, err := core.Pods(ns).Create(ctx, testPod(fmt.Sprintf("pod-%02d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitForSummary(map[string]string{"total": "18", "Running": "5", "Pending": "13"})

	// Every cache equals a fresh LIST through its own client.
	listOpts := metav1.ListOptions{}
	checks := []struct {
		name     string
		informer cache.SharedIndexInformer
		list     func(context.Context) (runtime.Object, error)
	}{
		{"typed pods", pods.Informer(), func(ctx context.Context) (runtime.Object, error) { return core.Pods(ns).List(ctx, listOpts) }},
		{"typed config maps", configMaps.Informer(), func(ctx context.Context) (runtime.Object, error) {
			return core.ConfigMaps(ns).List(ctx, listOpts)
		}},
		{"unstructured config maps", dynConfigMaps.Informer(), func(ctx context.Context) (runtime.Object, error) {
			return dyn.Resource(configMapsGVR).Namespace(ns).List(ctx, listOpts)
		}},
		{"metadata-only pods", podMetadata.Informer(), func(ctx context.Context) (runtime.Object, error) {
			return md.Resource(podsGVR).Namespace(ns).List(ctx, listOpts)
		}},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			waitForMatch(ctx, t, c.informer.GetStore().List, c.list)
			server, err := c.list(ctx)
			if err != nil {
				t.Fatal(err)
			}
			items, _ := meta.ExtractList(server)
			if m, _ := meta.Accessor(items[0]); len(m.GetManagedFields()) == 0 {
				t.Error("the server sent objects without managedFields; the transform check proves nothing")
			}
			for _, obj := range c.informer.GetStore().List() {
				m, _ := meta.Accessor(obj)
				if len(m.GetManagedFields()) != 0 {
					t.Errorf("cached %s keeps managedFields", m.GetName())
				}
			}
		})
	}

	// The dynamic and metadata informers hold the object types their clients list.
	for _, obj := range podMetadata.Informer().GetStore().List() {
		if _, ok := obj.(*metav1.PartialObjectMetadata); !ok {
			t.Fatalf("metadata informer caches %T", obj)
		}
	}
	u, err := dynConfigMaps.Lister().ByNamespace(ns).Get("cm-00003")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(u.(*unstructured.Unstructured).Object, "data", "value"); v != "cm-00003" {
		t.Errorf("unstructured config map has data.value %q", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if metaEvents["add"] < 23 || metaEvents["delete"] != 5 {
		t.Errorf("metadata handler saw %v, want 23 adds (20 initial, 3 new) and 5 deletes", metaEvents)
	}
}

// TestNewListWatchClients runs one informer per client kind — typed, dynamic, metadata — on a
// ListWatch from cache.NewListWatch with a label selector tweak, and checks each against a
// fresh LIST with the same selector.
func TestNewListWatchClients(t *testing.T) {
	ctx := context.Background()
	core := typedClient(t, conn)
	dyn := dynamicClient(t, conn)
	md := metadataClient(t, conn)
	ns := newNamespace(ctx, t, core)
	createMany(ctx, t, 30, 4, func(ctx context.Context, i int) error {
		labels := map[string]string{"half": fmt.Sprint(i % 2)}
		_, err := core.ConfigMaps(ns).Create(ctx, configMap(fmt.Sprintf("cm-%02d", i), labels, "v"), metav1.CreateOptions{})
		return err
	})
	selected := metav1.ListOptions{LabelSelector: "half=1"}
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = selected.LabelSelector }

	cases := []struct {
		name    string
		lw      cache.ListerWatcher
		example runtime.Object
		list    func(context.Context) (runtime.Object, error)
	}{
		{"typed", cache.NewListWatch(core.ConfigMaps(ns), tweak), &corev1.ConfigMap{},
			func(ctx context.Context) (runtime.Object, error) { return core.ConfigMaps(ns).List(ctx, selected) }},
		{"dynamic", cache.NewListWatch(dyn.Resource(configMapsGVR).Namespace(ns), tweak), &unstructured.Unstructured{},
			func(ctx context.Context) (runtime.Object, error) {
				return dyn.Resource(configMapsGVR).Namespace(ns).List(ctx, selected)
			}},
		{"metadata", cache.NewListWatch(md.Resource(configMapsGVR).Namespace(ns), tweak), &metav1.PartialObjectMetadata{},
			func(ctx context.Context) (runtime.Object, error) {
				return md.Resource(configMapsGVR).Namespace(ns).List(ctx, selected)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inf := cache.NewSharedIndexInformer(tc.lw, tc.example, 0, cache.Indexers{})
			runInformer(ctx, t, inf)
			for _, obj := range inf.GetStore().List() {
				if m, _ := meta.Accessor(obj); m.GetLabels()["half"] != "1" {
					t.Errorf("cached %s, outside the selector", m.GetName())
				}
			}
			if _, err := core.ConfigMaps(ns).Create(ctx, configMap("late-"+tc.name, map[string]string{"half": "1"}, "v"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitForMatch(ctx, t, inf.GetStore().List, tc.list)
		})
	}
}
