package testing_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fcache "github.com/kcache/cache/testing"
)

func TestClient(t *testing.T) {
	newSource := func() *fcache.FakeControllerSource {
		src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
		for _, p := range []struct{ ns, name string }{{"a", "p1"}, {"a", "p2"}, {"b", "p3"}} {
			src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Labels: map[string]string{"n": p.name}}})
		}
		return src
	}
	cases := []struct {
		name      string
		namespace string
		options   metav1.ListOptions
		wantNames []string
		wantField string // the field selector the source received
		wantWatch string // the first object the watch reports
	}{
		{name: "all namespaces", wantNames: []string{"p1", "p2", "p3"}, wantWatch: "c/other"},
		{name: "one namespace", namespace: "a", wantNames: []string{"p1", "p2"}, wantField: "metadata.namespace=a", wantWatch: "a/p2"},
		{name: "namespace and a field selector", namespace: "a", options: metav1.ListOptions{FieldSelector: "metadata.name=p2"},
			wantNames: []string{"p2"}, wantField: "metadata.namespace=a,metadata.name=p2", wantWatch: "a/p2"},
		{name: "namespace and a label selector", namespace: "b", options: metav1.ListOptions{LabelSelector: "n=p3"},
			wantNames: []string{"p3"}, wantField: "metadata.namespace=b", wantWatch: "b/p4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newSource()
			c := fcache.NewClient[*v1.PodList](src).Namespace(tc.namespace)
			if got := c.NamespaceName(); got != tc.namespace {
				t.Errorf("NamespaceName() = %q, want %q", got, tc.namespace)
			}
			list, err := c.List(context.Background(), tc.options)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantNames, ",") {
				t.Errorf("listed %v, want %v", names, tc.wantNames)
			}
			reqs := src.Requests()
			if len(reqs) != 1 || reqs[0].Options.FieldSelector != tc.wantField {
				t.Errorf("requests %+v, want one list with field selector %q", reqs, tc.wantField)
			}

			w, err := c.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "other"}})
			src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "p4", Labels: map[string]string{"n": "p3"}}})
			src.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p2", Labels: map[string]string{"n": "p3"}}})
			ev := <-w.ResultChan()
			got := ev.Object.(*v1.Pod)
			if key := got.Namespace + "/" + got.Name; key != tc.wantWatch {
				t.Errorf("first watch event for %s, want %s", key, tc.wantWatch)
			}
		})
	}
}

func TestClientWrongListType(t *testing.T) {
	src := fcache.NewFakeControllerSource() // lists *metav1.List
	c := fcache.NewClient[*v1.PodList](src)
	list, err := c.List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "*v1.PodList") || list != nil {
		t.Fatalf("List() = %v, %v; want a nil list and an error naming *v1.PodList", list, err)
	}
}
