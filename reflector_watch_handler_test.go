package cache

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// reflTestUnstructured returns an unstructured object of the given apiVersion and kind.
func reflTestUnstructured(apiVersion, kind, name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// reflTestFailingStore fails every write; with bookmarks it also fails Bookmark.
type reflTestFailingStore struct{ *reflTestStore }

func (reflTestFailingStore) Add(interface{}) error    { return errors.New("add failed") }
func (reflTestFailingStore) Update(interface{}) error { return errors.New("update failed") }
func (reflTestFailingStore) Delete(interface{}) error { return errors.New("delete failed") }
func (reflTestFailingStore) Bookmark(string) error    { return errors.New("bookmark failed") }

func TestReflectorEventChecks(t *testing.T) {
	deployment := reflTestUnstructured("apps/v1", "Deployment", "", "")
	table := reflTestUnstructured("meta.k8s.io/v1", "Table", "t", "9")
	cases := []struct {
		name         string
		expectedType interface{}
		store        func() ReflectorStore
		event        watch.Event
		wantApplied  bool // the store saw the write
		wantRV       string
	}{
		{name: "matching GVK", expectedType: deployment,
			event: watch.Event{Type: watch.Added, Object: reflTestUnstructured("apps/v1", "Deployment", "d", "7")}, wantApplied: true, wantRV: "7"},
		{name: "other GVK", expectedType: deployment,
			event: watch.Event{Type: watch.Added, Object: reflTestUnstructured("apps/v1", "StatefulSet", "s", "7")}, wantRV: "5"},
		{name: "server-side table", expectedType: nil,
			event: watch.Event{Type: watch.Added, Object: table}, wantRV: "5"},
		{name: "any type without an expected type", expectedType: nil,
			event: watch.Event{Type: watch.Added, Object: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", ResourceVersion: "8"}}}, wantApplied: true, wantRV: "8"},
		{name: "unknown event type still moves the RV", expectedType: &v1.Pod{},
			event: watch.Event{Type: "SURPRISE", Object: reflTestPod("a", "6")}, wantRV: "6"},
		{name: "failed update still moves the RV", expectedType: &v1.Pod{}, store: func() ReflectorStore { return reflTestFailingStore{newReflTestStore()} },
			event: watch.Event{Type: watch.Modified, Object: reflTestPod("a", "6")}, wantRV: "6"},
		{name: "failed delete still moves the RV", expectedType: &v1.Pod{}, store: func() ReflectorStore { return reflTestFailingStore{newReflTestStore()} },
			event: watch.Event{Type: watch.Deleted, Object: reflTestPod("a", "6")}, wantRV: "6"},
		{name: "failed bookmark still moves the RV", expectedType: &v1.Pod{}, store: func() ReflectorStore { return reflTestFailingStore{newReflTestStore()} },
			event: watch.Event{Type: watch.Bookmark, Object: reflTestBookmark("6", false)}, wantRV: "6"},
		// Found by FuzzReflector: a bookmark without a version set the RV to "", so the next
		// watch started from the current state and deletions in between were never seen.
		{name: "bookmark without a resourceVersion is dropped", expectedType: &v1.Pod{},
			event: watch.Event{Type: watch.Bookmark, Object: reflTestBookmark("", false)}, wantRV: "5"},
		{name: "object without a resourceVersion keeps the RV", expectedType: &v1.Pod{},
			event: watch.Event{Type: watch.Modified, Object: reflTestPod("a", "")}, wantApplied: true, wantRV: "5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("5")
				store := newReflTestStore()
				var target ReflectorStore = store
				if tc.store != nil {
					target = tc.store()
				}
				r, _ := reflTestNew(t, src, target)
				r.expectedType, r.expectedGVK = nil, nil
				if tc.expectedType != nil {
					r.expectedType = reflect.TypeOf(tc.expectedType)
					r.expectedGVK = expectedGVKOf(tc.expectedType)
				}
				stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				store.takeOps()
				src.watcher(t, 0).Action(tc.event.Type, tc.event.Object)
				synctest.Wait()
				if applied := len(store.takeOps()) > 0; applied != tc.wantApplied {
					t.Fatalf("applied %v, want %v", applied, tc.wantApplied)
				}
				if got := r.LastSyncResourceVersion(); got != tc.wantRV {
					t.Fatalf("LastSyncResourceVersion %q, want %q", got, tc.wantRV)
				}
				if n := len(src.watchOptions()); n != 1 {
					t.Fatalf("%d watches, want the watch to go on", n)
				}
			})
		})
	}
}

func TestIsTooLargeResourceVersionError(t *testing.T) {
	withCause := apierrors.NewTimeoutError("x", 1)
	withCause.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	oldCause := apierrors.NewTimeoutError("x", 1)
	oldCause.ErrStatus.Details.Causes = []metav1.StatusCause{{Message: "Too large resource version"}}
	oldMessage := apierrors.NewTimeoutError("Too large resource version: 5", 1)
	noDetails := apierrors.NewTimeoutError("Too large resource version: 5", 1)
	noDetails.ErrStatus.Details = nil
	plainTimeout := apierrors.NewTimeoutError("slow", 1)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{name: "cause type", err: withCause, want: true},
		{name: "1.17 cause message", err: oldCause, want: true},
		{name: "pre-1.17 message", err: oldMessage, want: true},
		{name: "message without details", err: noDetails, want: false},
		{name: "plain timeout", err: plainTimeout, want: false},
		{name: "not an API error", err: errors.New("Too large resource version"), want: false},
		{name: "nil", err: nil, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := isTooLargeResourceVersionError(tc.err); got != tc.want {
				t.Fatalf("isTooLargeResourceVersionError = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReflectorStopChannelForms(t *testing.T) {
	cases := []struct {
		name string
		run  func(r *Reflector, stopCh <-chan struct{})
	}{
		{name: "Run", run: func(r *Reflector, stopCh <-chan struct{}) { r.Run(stopCh) }},
		{name: "ListAndWatch", run: func(r *Reflector, stopCh <-chan struct{}) { _ = r.ListAndWatch(stopCh) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("5")
				src.lists = []reflTestListResult{{obj: reflTestPodList("5", reflTestPod("a", "1"))}}
				store := newReflTestStore()
				r, _ := reflTestNew(t, src, store)
				stopCh := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					tc.run(r, stopCh)
				}()
				synctest.Wait()
				if got := store.keys(); len(got) != 1 {
					t.Fatalf("store keys %v, want the listed pod", got)
				}
				close(stopCh)
				synctest.Wait()
				select {
				case <-done:
				default:
					t.Fatalf("%s did not return after stopCh was closed", tc.name)
				}
			})
		})
	}
}
