package integration

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

var (
	configMapsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podTemplatesGVR = schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}
)

// httpClients are every HTTP client the tests made, whose idle connections closeClients
// closes so that no keep-alive connection goroutine outlives the run.
var (
	httpClientsMu sync.Mutex
	httpClients   []*http.Client
)

// httpClientFor builds (and remembers) an HTTP client for cfg.
func httpClientFor(t testing.TB, cfg *rest.Config) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("HTTP client: %v", err)
	}
	httpClientsMu.Lock()
	httpClients = append(httpClients, hc)
	httpClientsMu.Unlock()
	return hc
}

func closeClients() {
	httpClientsMu.Lock()
	defer httpClientsMu.Unlock()
	for _, hc := range httpClients {
		// client-go wraps the transport (auth, user agent); http.Client.CloseIdleConnections
		// would not reach through the wrappers.
		utilnet.CloseIdleConnectionsFor(hc.Transport)
	}
}

// typedClient returns a typed client of the core API group (the only group the tests use; the
// full clientset would add every group's client to the test binary's build) for the API
// server described by c.
func typedClient(t testing.TB, c interface{ Config() *rest.Config }) corev1client.CoreV1Interface {
	t.Helper()
	cfg := c.Config()
	cs, err := corev1client.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

// dynamicClient returns a dynamic client for the API server described by c.
func dynamicClient(t testing.TB, c interface{ Config() *rest.Config }) dynamic.Interface {
	t.Helper()
	cfg := c.Config()
	dc, err := dynamic.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	return dc
}

// newNamespace creates a namespace with a generated name. Namespaces are never deleted: the
// cluster has no namespace controller to finish a deletion, and its data dir goes away after
// the run.
func newNamespace(ctx context.Context, t testing.TB, cs corev1client.CoreV1Interface) string {
	t.Helper()
	ns, err := cs.Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kcache-it-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// configMap returns a ConfigMap named name with one data entry and the given labels.
func configMap(name string, labels map[string]string, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data:       map[string]string{"value": value},
	}
}

// createConfigMaps creates cm-00000 … cm-<n-1> in ns with `workers` concurrent requests.
func createConfigMaps(ctx context.Context, t testing.TB, cs corev1client.CoreV1Interface, ns string, n, workers int) {
	t.Helper()
	createMany(ctx, t, n, workers, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("cm-%05d", i)
		_, err := cs.ConfigMaps(ns).Create(ctx, configMap(name, nil, name), metav1.CreateOptions{})
		return err
	})
}

// createMany calls create(ctx, i) for i in [0, n) from `workers` goroutines and fails the test
// on the first error.
func createMany(ctx context.Context, t testing.TB, n, workers int, create func(context.Context, int) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := create(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("create object %d: %w", i, err)
					}
					mu.Unlock()
					cancel()
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

// parseRV reads a resource version as the integer kube-apiserver uses with etcd. Resource
// versions are opaque to clients; the tests compare them only to check ordering against the
// one server implementation they run.
func parseRV(t testing.TB, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resource version %q is not an integer: %v", rv, err)
	}
	return n
}
