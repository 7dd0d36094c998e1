package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/examples/controller-runtime/secretsync"
)

// newInformerFunc is the type of controller-runtime's cache.Options.NewInformer.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// TestControllerRuntime runs the secretsync reconciler (examples/controller-runtime) in a
// controller-runtime v0.25.2 Manager whose cache builds its informers through the clientgo
// bridge, and again with client-go's own informers: creates, updates, drift of an owned
// Secret, a ConfigMap leaving and one entering the label-selected cache, deletes, an orphaned
// Secret (owner-reference garbage) and field indexes added before and after the start converge,
// and both runs end in the same state. The bridge run also checks that the informers are
// kcache's and, across a kube-apiserver restart that forces a relist, that unchanged objects
// keep their identity in the cache.
func TestControllerRuntime(t *testing.T) {
	if cluster == nil {
		t.Skip("needs the cluster's servers; not available in a child process")
	}
	ctrl.SetLogger(klog.Background())
	cases := []struct {
		name        string
		newInformer newInformerFunc
	}{
		{name: "kcache bridge", newInformer: clientgo.NewInformerFunc(clientgo.Options{DefaultHandlerMaxPending: ptr.To(1000)})},
		{name: "client-go informers"},
	}
	ends := make([]string, len(cases))
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ends[i] = runSecretSync(t, tc.newInformer)
		})
	}
	if t.Failed() {
		return
	}
	if ends[0] != ends[1] {
		t.Fatalf("end states differ:\nbridge:     %s\nclient-go:  %s", ends[0], ends[1])
	}
	if want := "a={value:a2} b={value:b} plain={value:plain}"; ends[0] != want {
		t.Fatalf("end state %s, want %s", ends[0], want)
	}
}

// runSecretSync runs the scenario in a fresh namespace and returns the end state: the managed
// Secrets, by name, with their data.
func runSecretSync(t *testing.T, newInformer newInformerFunc) string {
	ctx := context.Background()
	cs := typedClient(t, conn)
	ns := newNamespace(ctx, t, cs)
	sync := map[string]string{secretsync.SyncLabel: "true"}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if _, err := cs.ConfigMaps(ns).Create(ctx, configMap(name, sync, name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.ConfigMaps(ns).Create(ctx, configMap("plain", nil, "plain"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cfg := conn.Config()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache: crcache.Options{
			// All namespaces, as DefaultNamespaces would wrap the informers in a
			// multi-namespace one; the label selectors keep other tests' objects out.
			NewInformer: newInformer,
			ByObject:    secretsync.CacheByObject(),
		},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &secretsync.Reconciler{Client: mgr.GetClient()}
	if err := r.SetupWithManager(ctx, mgr, "secretsync"); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		// The manager's HTTP clients share client-go's cached transport with the tests'
		// clients, whose idle connections closeClients closes at the end.

	})

	secrets := func() map[string]string {
		list, err := cs.Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Logf("list secrets: %v", err)
			return nil
		}
		got := map[string]string{}
		for _, s := range list.Items {
			got[s.Name] = string(s.Data["value"])
		}
		return got
	}
	converge := func(what string, want map[string]string) {
		t.Helper()
		eventually(ctx, t, time.Minute, what, func() bool { return maps.Equal(secrets(), want) })
	}
	converge("initial sync: a Secret per labelled ConfigMap", map[string]string{"a": "a", "b": "b", "c": "c", "d": "d", "e": "e"})

	// The informers are kcache's exactly when the bridge is configured.
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		sii, ok := inf.(toolscache.SharedIndexInformer)
		if !ok {
			t.Fatalf("informer for %T is a %T, not a client-go SharedIndexInformer", obj, inf)
		}
		if _, isKcache := clientgo.Unwrap(sii); isKcache != (newInformer != nil) {
			t.Fatalf("informer for %T: kcache %v, want %v", obj, isKcache, newInformer != nil)
		}
	}

	// A field index added while the cache runs (AddIndexers after the start).
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Secret{}, "dataKeys", func(o client.Object) []string {
		return slices.Sorted(maps.Keys(o.(*corev1.Secret).Data))
	}); err != nil {
		t.Fatalf("IndexField after start: %v", err)
	}

	cms := cs.ConfigMaps(ns)
	patch := func(name, body string) {
		t.Helper()
		if _, err := cms.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch("a", `{"data":{"value":"a2"}}`)                                         // update
	patch("c", `{"metadata":{"labels":{"`+secretsync.SyncLabel+`":null}}}`)       // leaves the cache
	patch("plain", `{"metadata":{"labels":{"`+secretsync.SyncLabel+`":"true"}}}`) // enters it
	if err := cms.Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {          // deleted
		t.Fatal(err)
	}
	if _, err := cs.Secrets(ns).Patch(ctx, "b", types.MergePatchType, []byte(`{"data":{"value":"ZHJpZnQ="}}`), metav1.PatchOptions{}); err != nil { // drift
		t.Fatal(err)
	}
	ghost := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "ghost", Labels: map[string]string{secretsync.ManagedLabel: "true"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "0e0e0e0e-0000-0000-0000-000000000000", Controller: ptr.To(true)}},
	}}
	if _, err := cs.Secrets(ns).Create(ctx, ghost, metav1.CreateOptions{}); err != nil { // orphan
		t.Fatal(err)
	}
	converge("changes", map[string]string{"a": "a2", "b": "b", "e": "e", "plain": "plain"})

	// Both field indexes answer from the cache.
	var owned corev1.SecretList
	eventually(ctx, t, time.Minute, "owner index", func() bool {
		err := mgr.GetClient().List(ctx, &owned, client.InNamespace(ns), client.MatchingFields{secretsync.OwnerIndex: "a"})
		return err == nil && len(owned.Items) == 1 && string(owned.Items[0].Data["value"]) == "a2"
	})
	if err := mgr.GetClient().List(ctx, &owned, client.InNamespace(ns), client.MatchingFields{"dataKeys": "value"}); err != nil || len(owned.Items) != 4 {
		t.Fatalf("dataKeys index: %d Secrets, %v; want 4", len(owned.Items), err)
	}

	if newInformer != nil {
		relistKeepsIdentity(ctx, t, mgr, ns, "e")
	} else if err := cms.Delete(ctx, "e", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	converge("end state", map[string]string{"a": "a2", "b": "b", "plain": "plain"})

	var parts []string
	list, err := cs.Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		owner := metav1.GetControllerOf(&s)
		if owner == nil || owner.Name != s.Name {
			t.Errorf("Secret %s is not controlled by its ConfigMap: %v", s.Name, s.OwnerReferences)
		}
		parts = append(parts, fmt.Sprintf("%s={value:%s}", s.Name, s.Data["value"]))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// relistKeepsIdentity restarts the kube-apiserver the manager talks to and deletes ConfigMap
// gone through a second kube-apiserver while it is down, so the manager's ConfigMap informer has
// to relist (the delete reaches its handlers as client-go's tombstone). Every other ConfigMap
// is unchanged, and must still be the same object in the cache.
func relistKeepsIdentity(ctx context.Context, t *testing.T, mgr ctrl.Manager, ns, gone string) {
	t.Helper()
	inf, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	informer := inf.(toolscache.SharedIndexInformer)
	before := map[string]any{}
	for _, obj := range informer.GetIndexer().List() {
		if cm := obj.(*corev1.ConfigMap); cm.Namespace == ns {
			before[cm.Name] = obj
		}
	}
	tombstones := make(chan string, 10)
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			tombstones <- d.Key
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := informer.RemoveEventHandler(reg); err != nil {
			t.Error(err)
		}
	}()

	writer, err := cluster.StartAPIServer(ctx, "kube-apiserver-crwriter")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Stop()
	cluster.APIServer.Kill()
	restarted := false
	defer func() {
		if !restarted {
			if err := cluster.APIServer.Start(ctx); err != nil {
				t.Errorf("restart kube-apiserver: %v", err)
			}
		}
	}()
	if err := typedClient(t, writer).ConfigMaps(ns).Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if err := cluster.APIServer.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case key := <-tombstones:
		if key != ns+"/"+gone {
			t.Fatalf("tombstone for %s, want %s/%s", key, ns, gone)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no relist tombstone within 2m of the restart")
	}
	for name, old := range before {
		if name == gone {
			continue
		}
		now, ok, err := informer.GetIndexer().GetByKey(ns + "/" + name)
		if err != nil || !ok {
			t.Fatalf("%s missing from the cache after the relist: %v", name, err)
		}
		if now != old {
			t.Errorf("ConfigMap %s is a new object after the relist; unchanged objects keep their identity in kcache", name)
		}
	}
}
