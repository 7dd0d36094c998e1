package cache_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cache "github.com/kcache/cache"
)

// checkWrongType fails unless e reports a typed handler's event of kind event with an object
// of type got where want was expected.
func checkWrongType(t *testing.T, e reportedError, event, want, got string) {
	t.Helper()
	msg := fmt.Sprint(e.err)
	if !strings.HasPrefix(msg, "cache: ") || !strings.Contains(msg, "expected an object of type "+want+", got "+got) {
		t.Errorf("error %q does not name the types %s and %s", msg, want, got)
	}
	if !strings.HasPrefix(e.msg, "cache: ") {
		t.Errorf("message %q lacks the package prefix", e.msg)
	}
	if kv := fmt.Sprint(e.kv); !strings.Contains(kv, "event "+event) {
		t.Errorf("key/values %s do not name the event %q", kv, event)
	}
}

// TestTypedHandlerWrongT: a typed view whose T is not the cached type reports every add,
// update and delete as an error and delivers none of them; client-go panics.
func TestTypedHandlerWrongT(t *testing.T) {
	errs := typedTestCaptureErrors(t, false)
	src := typedTestSource(podList, typedTestPod("ns", "a"))
	inf := cache.NewTypedSharedIndexInformer[*v1.ConfigMap](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
	rec := newTypedRecorder[*v1.ConfigMap]()
	reg, _ := inf.AddTypedEventHandler(rec)
	typedTestRun(t, inf)
	typedTestWaitSynced(t, inf, reg)
	checkWrongType(t, nextError(t, errs), "add", "*v1.ConfigMap", "*v1.Pod")
	changed := typedTestPod("ns", "a")
	changed.Labels = map[string]string{"x": "y"}
	src.Modify(changed)
	checkWrongType(t, nextError(t, errs), "update", "*v1.ConfigMap", "*v1.Pod")
	src.Delete(changed)
	checkWrongType(t, nextError(t, errs), "delete", "*v1.ConfigMap", "*v1.Pod")
	// Each error replaced its notification: the handler got nothing.
	if len(rec.events) != 0 {
		t.Fatalf("handler got %v", <-rec.events)
	}
}

// TestTypedHandlerTransformChangesType: a transform that turns some objects into another type
// costs exactly the notifications carrying such an object; the handler keeps getting the rest.
func TestTypedHandlerTransformChangesType(t *testing.T) {
	errs := typedTestCaptureErrors(t, false)
	src := typedTestSource(podList, typedTestPod("ns", "a"))
	untyped := cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{})
	if err := untyped.SetTransform(func(obj interface{}) (interface{}, error) {
		if p, ok := obj.(*v1.Pod); ok && p.Labels["as"] == "configmap" {
			return &v1.ConfigMap{ObjectMeta: p.ObjectMeta}, nil
		}
		return obj, nil
	}); err != nil {
		t.Fatal(err)
	}
	inf := cache.NewTypedSharedIndexInformer[*v1.Pod](untyped)
	rec := newTypedRecorder[*v1.Pod]()
	reg, _ := inf.AddTypedEventHandler(rec)
	typedTestRun(t, inf)
	typedTestWaitSynced(t, inf, reg)
	if got := rec.next(t).String(); got != "add ns/a initial" {
		t.Fatalf("got %q", got)
	}

	converted := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"as": "configmap"}}}
	src.Modify(converted) // old *v1.Pod, new *v1.ConfigMap
	checkWrongType(t, nextError(t, errs), "update", "*v1.Pod", "*v1.ConfigMap")
	src.Delete(converted) // the cached object is the *v1.ConfigMap
	checkWrongType(t, nextError(t, errs), "delete", "*v1.Pod", "*v1.ConfigMap")
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Labels: map[string]string{"as": "configmap"}}})
	checkWrongType(t, nextError(t, errs), "add", "*v1.Pod", "*v1.ConfigMap")
	src.Add(typedTestPod("ns", "b"))
	if got := rec.next(t).String(); got != "add ns/b" {
		t.Fatalf("after the skipped notifications: %q", got)
	}
}

// TestTypedHandlerForeignTombstone: a relist tombstone whose object is not a T is reported and
// still delivered, with a zero OptionalObj and the tombstone's key; client-go panics.
func TestTypedHandlerForeignTombstone(t *testing.T) {
	// In a synctest bubble: the reflector waits its backoff before relisting.
	synctest.Test(t, func(t *testing.T) {
		errs := typedTestCaptureErrors(t, false)
		src := typedTestSource(podList, typedTestPod("ns", "a"))
		inf := cache.NewTypedSharedIndexInformer[*v1.ConfigMap](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
		rec := newTypedRecorder[*v1.ConfigMap]()
		reg, _ := inf.AddTypedEventHandler(rec)
		typedTestRun(t, inf)
		typedTestWaitSynced(t, inf, reg)
		checkWrongType(t, nextError(t, errs), "add", "*v1.ConfigMap", "*v1.Pod")

		src.DeleteDropWatch(typedTestPod("ns", "a"))
		src.Compact(src.ResourceVersion())
		src.CloseWatches()
		e := nextError(t, errs)
		checkWrongType(t, e, "delete", "*v1.ConfigMap", "*v1.Pod")
		if kv := fmt.Sprint(e.kv); !strings.Contains(kv, "key ns/a") {
			t.Errorf("key/values %s do not name the tombstone's key", kv)
		}
		got := summarize(rec.next(t).deleted)
		want := deleteSummary{key: "ns/a", namespace: "ns", name: "a", objectName: "ns/a", tombstone: true}
		if got != want {
			t.Fatalf("OnDelete got %+v, want %+v", got, want)
		}
	})
}

// TestTypedIndexWrongType: typed index functions and the typed indexer methods meet objects
// of the wrong type with an error naming both types; client-go panics.
func TestTypedIndexWrongType(t *testing.T) {
	byLabel := cache.TypedIndexFunc[*v1.ConfigMap](func(cm *v1.ConfigMap) ([]string, error) {
		return []string{cm.Labels["app"]}, nil
	})
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := pods.Add(typedTestPod("ns", "a")); err != nil {
		t.Fatal(err)
	}
	src := typedTestSource(podList)
	inf := cache.NewTypedSharedIndexInformer[*v1.ConfigMap](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))

	cases := []struct {
		name string
		call func() error
	}{
		{"index func given a pod", func() error {
			_, err := cache.TypedIndexerFuncToIndexerFunc(byLabel)(typedTestPod("ns", "a"))
			return err
		}},
		{"index func given nil", func() error {
			_, err := cache.TypedIndexersToIndexers(cache.TypedIndexers[*v1.ConfigMap]{"app": byLabel})["app"](nil)
			return err
		}},
		{"AddIndexers over stored pods", func() error {
			return pods.AddIndexers(cache.TypedIndexersToIndexers(cache.TypedIndexers[*v1.ConfigMap]{"app": byLabel}))
		}},
		{"adding a pod to a typed index", func() error {
			idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.TypedIndexersToIndexers(cache.TypedIndexers[*v1.ConfigMap]{"app": byLabel}))
			return idx.Add(typedTestPod("ns", "a"))
		}},
		{"ByTypedIndex", func() error {
			if err := inf.GetIndexer().Add(typedTestPod("ns", "a")); err != nil {
				return err
			}
			_, err := inf.GetTypedIndexer().ByTypedIndex(cache.NamespaceIndex, "ns")
			return err
		}},
		{"TypedIndex", func() error {
			_, err := inf.GetTypedIndexer().TypedIndex(cache.NamespaceIndex, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), "expected an object of type *v1.ConfigMap, got ") {
				t.Fatalf("error %v, want one naming the expected type", err)
			}
		})
	}
	// The failed AddIndexers left the indexer as it was.
	if _, err := pods.ByIndex("app", "x"); err == nil {
		t.Fatal("index added despite the error")
	}
}
