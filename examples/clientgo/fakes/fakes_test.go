package fakes_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/klog/v2"

	"github.com/kcache/cache/informers"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Informers from kcache's factory over each of client-go's fake clientsets reach sync with no
// option, and hold the fake's objects. client-go's fakes cannot serve streaming watch-lists and
// do not end a watch-list's initial events, so an informer that streamed would wait forever:
// the factory recognizes the typed fakes and lists at once; over the dynamic and metadata
// fakes, which it cannot recognize, the watch-list is given up after 10 quiet seconds and the
// informer lists. WaitForCacheSync is bounded by a minute of (bubble) time.
func TestFactorySyncsOverClientGoFakes(t *testing.T) {
	// apimachinery's HandleError sleeps a millisecond after the previous error, measured on the
	// wall clock; in a synctest bubble, against an error time from another bubble, that sleep
	// lasts years. Log errors without it for this test.
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(ctx context.Context, err error, msg string, kv ...any) {
		klog.FromContext(ctx).Error(err, msg, kv...)
	}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	cases := []struct {
		name string
		// start registers an informer for pods with f and returns a count of the objects its
		// lister holds.
		start func(f informers.SharedInformerFactory) func() int
		// maxWait is the longest sync may take.
		maxWait time.Duration
	}{
		{
			name: "typed",
			start: func(f informers.SharedInformerFactory) func() int {
				cs := fake.NewClientset(pod("a"), pod("b"))
				inf := informers.For[*corev1.Pod](f, cs.CoreV1().Pods)
				return func() int { pods, _ := inf.Lister().List(labels.Everything()); return len(pods) }
			},
			maxWait: 0,
		},
		{
			name: "dynamic",
			start: func(f informers.SharedInformerFactory) func() int {
				dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
					map[schema.GroupVersionResource]string{podsGVR: "PodList"}, unstructuredPod("a"), unstructuredPod("b"))
				inf := informers.ForResource(f, podsGVR, dyn.Resource(podsGVR).Namespace)
				return func() int { objs, _ := inf.Lister().List(labels.Everything()); return len(objs) }
			},
			maxWait: 11 * time.Second,
		},
		{
			name: "metadata",
			start: func(f informers.SharedInformerFactory) func() int {
				scheme := metadatafake.NewTestScheme()
				if err := metav1.AddMetaToScheme(scheme); err != nil {
					t.Fatal(err)
				}
				md := metadatafake.NewSimpleMetadataClient(scheme, metadataPod("a"), metadataPod("b"))
				inf := informers.ForResource(f, podsGVR, md.Resource(podsGVR).Namespace)
				return func() int { objs, _ := inf.Lister().List(labels.Everything()); return len(objs) }
			},
			maxWait: 11 * time.Second,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := informers.NewSharedInformerFactory(0)
				count := tc.start(f)
				ctx, cancel := context.WithCancel(context.Background())
				defer func() {
					cancel()
					f.Shutdown()
				}()
				start := time.Now()
				f.StartWithContext(ctx)
				waitCtx, cancelWait := context.WithTimeout(ctx, time.Minute)
				defer cancelWait()
				if err := f.WaitForCacheSyncWithContext(waitCtx).AsError(); err != nil {
					t.Fatalf("no sync after %v: %v", time.Since(start), err)
				}
				if took := time.Since(start); took > tc.maxWait {
					t.Errorf("sync took %v, want at most %v", took, tc.maxWait)
				}
				if n := count(); n != 2 {
					t.Errorf("lister holds %d pods, want 2", n)
				}
			})
		})
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func unstructuredPod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

func metadataPod(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
	}
}
