package cache

import (
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storeTestNamespaceByLabel indexes by the "ns" label, a NamespaceIndex that is not
// MetaNamespaceIndexFunc (so ListAllByNamespace must go through Index).
func storeTestNamespaceByLabel(obj interface{}) ([]string, error) {
	if om, ok := obj.(*metav1.ObjectMeta); ok {
		return []string{om.Namespace}, nil
	}
	return []string{obj.(*storeTestObj).Labels["ns"]}, nil
}

func TestListAll(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	cases := []struct {
		name     string
		extra    interface{} // stored under "x" besides the populated objects, if not nil
		selector labels.Selector
		want     []string
		wantErr  string
	}{
		{"everything", nil, labels.Everything(), []string{"d", "ns1/a", "ns1/b", "ns2/c"}, ""},
		{"label selector", nil, web, []string{"ns1/a", "ns2/c"}, ""},
		{"nothing", nil, labels.Nothing(), nil, ""},
		{"nil selector", nil, nil, nil, "cache: nil label selector"},
		{"everything does not need metadata", storeTestNoMeta{"x"}, labels.Everything(), []string{"d", "ns1/a", "ns1/b", "ns2/c", "x"}, ""},
		{"a selector needs metadata", storeTestNoMeta{"x"}, web, nil, "object does not implement the Object interfaces"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// No indices, so that an object without metadata can be stored.
			s := storeTestPopulatedWith(t, Indexers{})
			if tc.extra != nil {
				s.(*cache).storage.Add("x", tc.extra)
			}
			var got []string
			err := ListAll(s, tc.selector, func(m interface{}) {
				if k, err := MetaNamespaceKeyFunc(m); err == nil {
					got = append(got, k)
				} else {
					got = append(got, "x")
				}
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			slices.Sort(got)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("= %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestListAllByNamespace(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	objs := []*storeTestObj{
		storeTestPod("ns1", "a", "1", "app=web", "ns=ns1"),
		storeTestPod("ns1", "b", "1", "app=db", "ns=ns1"),
		storeTestPod("ns2", "c", "1", "app=web", "ns=ns2"),
	}
	cases := []struct {
		name      string
		indexers  Indexers
		namespace string
		selector  labels.Selector
		want      []string
		wantErr   bool
	}{
		{"namespace index", Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, "ns1", labels.Everything(), []string{"ns1/a", "ns1/b"}, false},
		{"namespace index and selector", Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, "ns1", web, []string{"ns1/a"}, false},
		{"all namespaces", Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, metav1.NamespaceAll, web, []string{"ns1/a", "ns2/c"}, false},
		{"custom namespace index", Indexers{NamespaceIndex: storeTestNamespaceByLabel}, "ns2", labels.Everything(), []string{"ns2/c"}, false},
		{"no namespace index scans", Indexers{}, "ns1", web, []string{"ns1/a"}, false},
		{"nothing", Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, "ns1", labels.Nothing(), nil, false},
		{"nil selector", Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, "ns1", nil, nil, true},
		{"missing namespace", Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, "ns9", labels.Everything(), nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewIndexer(MetaNamespaceKeyFunc, tc.indexers)
			for _, o := range objs {
				if err := s.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			err := ListAllByNamespace(s, tc.namespace, tc.selector, func(m interface{}) {
				k, _ := MetaNamespaceKeyFunc(m)
				got = append(got, k)
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want one: %v", err, tc.wantErr)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("= %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGenericLister(t *testing.T) {
	gr := schema.GroupResource{Group: "storetest", Resource: "objects"}
	cases := []struct {
		name    string
		call    func(l GenericLister) ([]runtime.Object, error)
		want    []string
		wantErr func(error) bool
	}{
		{"list", func(l GenericLister) ([]runtime.Object, error) { return l.List(labels.Everything()) },
			[]string{"d", "ns1/a", "ns1/b", "ns2/c"}, nil},
		{"list by namespace", func(l GenericLister) ([]runtime.Object, error) {
			return l.ByNamespace("ns1").List(labels.SelectorFromSet(labels.Set{"app": "db"}))
		}, []string{"ns1/b"}, nil},
		{"get cluster-scoped", func(l GenericLister) ([]runtime.Object, error) {
			o, err := l.Get("d")
			return []runtime.Object{o}, err
		}, []string{"d"}, nil},
		{"get namespaced", func(l GenericLister) ([]runtime.Object, error) {
			o, err := l.ByNamespace("ns2").Get("c")
			return []runtime.Object{o}, err
		}, []string{"ns2/c"}, nil},
		{"get missing", func(l GenericLister) ([]runtime.Object, error) {
			_, err := l.ByNamespace("ns2").Get("zz")
			return nil, err
		}, nil, func(err error) bool {
			return apierrors.IsNotFound(err) && strings.Contains(err.Error(), `objects.storetest "zz" not found`)
		}},
		{"get something that is not a runtime.Object", func(l GenericLister) ([]runtime.Object, error) {
			_, err := l.Get("x")
			return nil, err
		}, nil, func(err error) bool { return err != nil && strings.Contains(err.Error(), "not a runtime.Object") }},
		{"list skips what is not a runtime.Object", func(l GenericLister) ([]runtime.Object, error) {
			return l.List(labels.Everything())
		}, []string{"d", "ns1/a", "ns1/b", "ns2/c"}, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "not a runtime.Object")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := storeTestPopulatedWith(t, Indexers{})
			if tc.wantErr != nil && tc.name != "get missing" {
				s.(*cache).storage.Add("x", storeTestNoMeta{"x"})
			}
			got, err := tc.call(NewGenericLister(s, gr))
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("unexpected error %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range got {
				k, err := MetaNamespaceKeyFunc(o)
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tc.want) {
				t.Errorf("= %q, want %q", keys, tc.want)
			}
		})
	}
}
