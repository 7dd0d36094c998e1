package listers_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
)

func pod(ns, name, app string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
}

// newIndexer returns an indexer holding objs, with the namespace index or without any index.
func newIndexer(t testing.TB, withNamespaceIndex bool, objs ...runtime.Object) cache.Indexer {
	t.Helper()
	indexers := cache.Indexers{}
	if withNamespaceIndex {
		indexers[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return idx
}

func names(pods []*v1.Pod) string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// captureKlog routes klog's global logger (which cache.ListAllByNamespace logs through) into
// the returned function's result for the rest of the test.
func captureKlog(t testing.TB) func() string {
	var mu sync.Mutex
	var b strings.Builder
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return b.Write(p)
	})
	klog.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(w))))
	t.Cleanup(klog.ClearLogger)
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestList lists across namespaces and in one namespace, with and without a namespace index.
// Without one, a namespaced List scans all objects and logs a warning, as in client-go.
func TestList(t *testing.T) {
	objs := []runtime.Object{pod("a", "web-1", "web"), pod("a", "db-1", "db"), pod("b", "web-2", "web"), pod("c", "x", "other")}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	cases := []struct {
		name      string
		namespace string // "" for New
		selector  labels.Selector
		want      string
	}{
		{"all namespaces", "", labels.Everything(), "a/db-1 a/web-1 b/web-2 c/x"},
		{"all namespaces, selector", "", web, "a/web-1 b/web-2"},
		{"one namespace", "a", labels.Everything(), "a/db-1 a/web-1"},
		{"one namespace, selector", "a", web, "a/web-1"},
		{"empty namespace", "none", labels.Everything(), ""},
		{"nothing selected", "a", labels.Nothing(), ""},
	}
	for _, indexed := range []bool{true, false} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s, namespace index %v", tc.name, indexed), func(t *testing.T) {
				logs := captureKlog(t)
				l := listers.New[*v1.Pod](newIndexer(t, indexed, objs...), v1.Resource("pods"))
				if tc.namespace != "" {
					l = listers.NewNamespaced(l, tc.namespace)
				}
				got, err := l.List(tc.selector)
				if err != nil {
					t.Fatal(err)
				}
				if names(got) != tc.want {
					t.Fatalf("List = %q, want %q", names(got), tc.want)
				}
				scanned := strings.Contains(logs(), "Warning: can not retrieve list of objects using index")
				wantScan := !indexed && tc.namespace != "" && tc.selector != labels.Nothing()
				if scanned != wantScan {
					t.Fatalf("logged the fallback warning: %v, want %v; log: %s", scanned, wantScan, logs())
				}
			})
		}
	}
}

// TestGet gets namespaced and cluster-scoped objects; a missing one is a NotFound error for the
// lister's resource.
func TestGet(t *testing.T) {
	pods := listers.New[*v1.Pod](newIndexer(t, true, pod("a", "web-1", "web"), pod("b", "web-1", "web")), v1.Resource("pods"))
	nodes := listers.New[*v1.Node](newIndexer(t, false, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}), v1.Resource("nodes"))
	cases := []struct {
		name    string
		get     func() (metav1.Object, error)
		want    string // namespace/name of the result, or the NotFound message
		missing bool
	}{
		{"namespaced", func() (metav1.Object, error) { return listers.NewNamespaced(pods, "b").Get("web-1") }, "b/web-1", false},
		{"namespaced, missing", func() (metav1.Object, error) { return listers.NewNamespaced(pods, "c").Get("web-1") }, `pods "web-1" not found`, true},
		{"namespaced object through the cluster-wide lister", func() (metav1.Object, error) { return pods.Get("web-1") }, `pods "web-1" not found`, true},
		{"cluster-scoped", func() (metav1.Object, error) { return nodes.Get("n1") }, "/n1", false},
		{"cluster-scoped, missing", func() (metav1.Object, error) { return nodes.Get("n2") }, `nodes "n2" not found`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := tc.get()
			if tc.missing {
				if !apierrors.IsNotFound(err) || err.Error() != tc.want {
					t.Fatalf("error %v, want NotFound %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := obj.GetNamespace() + "/" + obj.GetName(); got != tc.want {
				t.Fatalf("Get = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestBadInput: wrong types, a nil selector and the zero value get errors, not panics.
func TestBadInput(t *testing.T) {
	mixed := newIndexer(t, true, pod("a", "web-1", "web"), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cm"}})
	pods := listers.New[*v1.Pod](mixed, v1.Resource("pods"))
	var zero listers.ResourceIndexer[*v1.Pod]
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"List meets a foreign type", func() error { _, err := pods.List(labels.Everything()); return err },
			"listers: List: expected an object of type *v1.Pod, got *v1.ConfigMap"},
		{"namespaced List meets a foreign type", func() error {
			_, err := listers.NewNamespaced(pods, "a").List(labels.Everything())
			return err
		}, "listers: List: expected an object of type *v1.Pod, got *v1.ConfigMap"},
		{"Get of a foreign type", func() error { _, err := listers.NewNamespaced(pods, "a").Get("cm"); return err },
			"listers: Get: expected an object of type *v1.Pod, got *v1.ConfigMap"},
		{"nil selector", func() error { _, err := pods.List(nil); return err }, "nil label selector"},
		{"zero value List", func() error { _, err := zero.List(labels.Everything()); return err }, "listers: nil indexer"},
		{"zero value Get", func() error { _, err := zero.Get("x"); return err }, "listers: nil indexer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Selecting around the foreign object works.
	got, err := pods.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	if err != nil || names(got) != "a/web-1" {
		t.Fatalf("List(app=web) = %q, %v", names(got), err)
	}
}
