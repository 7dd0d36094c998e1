package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	_ "sigs.k8s.io/controller-runtime" // registers controller-runtime's workqueue metrics, as a manager does
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kcache/cache/clientgo"
	kcacheprom "github.com/kcache/cache/prometheus"
	"github.com/kcache/cache/workqueue"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestMetricsThroughTheBridge: with kcache's metrics registered in controller-runtime's
// registry, an informer built the way a controller-runtime cache builds it (its NewInformer
// set to the bridge) is exported with no naming or further code, and a kcache workqueue shows
// up in controller-runtime's own workqueue_* series.
func TestMetricsThroughTheBridge(t *testing.T) {
	if err := kcacheprom.Register(metrics.Registry); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}})
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, options)
		},
	}
	newInformer := clientgo.NewInformerFunc(clientgo.Options{})
	inf := newInformer(toolscache.ToListWatcherWithWatchListSemantics(lw, client), &corev1.Pod{}, 0, toolscache.Indexers{})
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx.Done())
	}()
	defer func() {
		cancel()
		<-done
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !toolscache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced, reg.HasSynced) {
		t.Fatal("informer did not sync")
	}

	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "secretsync"})
	q.Add("default/web")
	q.ShutDown() // sets the depth, which the queue otherwise sets every 500ms

	const want = `
# HELP kcache_informer_synced 1 when the informer has synced (HasSynced), else 0.
# TYPE kcache_informer_synced gauge
kcache_informer_synced{group="",name="v1.Pod",resource="",version=""} 1
# HELP kcache_informer_objects Objects in the informer's store.
# TYPE kcache_informer_objects gauge
kcache_informer_objects{group="",name="v1.Pod",resource="",version=""} 1
# HELP workqueue_depth Current depth of workqueue by workqueue and priority
# TYPE workqueue_depth gauge
workqueue_depth{controller="secretsync",name="secretsync",priority=""} 1
`
	if err := testutil.GatherAndCompare(metrics.Registry, strings.NewReader(want),
		"kcache_informer_synced", "kcache_informer_objects", "workqueue_depth"); err != nil {
		t.Fatal(err)
	}
}
