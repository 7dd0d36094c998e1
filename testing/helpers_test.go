package testing_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	fcache "github.com/kcache/cache/testing"
)

// cm returns a ConfigMap in namespace "ns" with the given name and labels (k=v pairs).
func cm(name string, kv ...string) *v1.ConfigMap {
	c := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if len(kv) > 0 {
		c.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
	return c
}

// inNS returns obj with its namespace set.
func inNS(ns string, obj *v1.ConfigMap) *v1.ConfigMap {
	obj.Namespace = ns
	return obj
}

// seeded returns a source holding a, b and c (versions 1–3), then b modified (4) and a
// deleted (5): at version 3 it held a, b and c; now it holds b and c.
func seeded() *fcache.FakeControllerSource {
	s := fcache.NewFakeControllerSource()
	s.Add(cm("a", "app", "x"))
	s.Add(cm("b", "app", "y"))
	s.Add(cm("c", "app", "x"))
	s.Modify(cm("b", "app", "x"))
	s.Delete(cm("a", "app", "x"))
	return s
}

// mustList lists and fails the test on error.
func mustList(t *testing.T, s *fcache.FakeControllerSource, opts metav1.ListOptions) runtime.Object {
	t.Helper()
	obj, err := s.List(opts)
	if err != nil {
		t.Fatalf("List(%+v): %v", opts, err)
	}
	return obj
}

// itemNames returns "name@rv" for each item of list.
func itemNames(t *testing.T, list runtime.Object) []string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatalf("ExtractList: %v", err)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, describe(it))
	}
	return out
}

// describe returns "name@rv" for obj, or its Go type if it has no metadata.
func describe(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return m.GetName() + "@" + m.GetResourceVersion()
}

func listRV(t *testing.T, list runtime.Object) string {
	t.Helper()
	m, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	return m.GetResourceVersion()
}

// receivedEvents reads what w has delivered so far, inside a synctest bubble: it waits until
// every goroutine of the bubble is blocked, so that "nothing more" is a fact, not a guess.
// closed reports whether the result channel was closed.
func receivedEvents(w watch.Interface) (events []watch.Event, closed bool) {
	for {
		synctest.Wait()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return events, true
			}
			events = append(events, ev)
		default:
			return events, false
		}
	}
}

// received is receivedEvents with the events rendered by eventString.
func received(w watch.Interface) (events []string, closed bool) {
	evs, closed := receivedEvents(w)
	for _, ev := range evs {
		events = append(events, eventString(ev))
	}
	return events, closed
}

// expectN reads what w has delivered and hands it to check if there are exactly n events.
func expectN(t *testing.T, w watch.Interface, n int, check func(evs []watch.Event)) {
	t.Helper()
	evs, _ := receivedEvents(w)
	if len(evs) != n {
		got := make([]string, 0, len(evs))
		for _, ev := range evs {
			got = append(got, eventString(ev))
		}
		t.Fatalf("got %d events %q, want %d", len(evs), got, n)
	}
	check(evs)
}

// typeOf returns obj's Go type, and for unstructured objects its group/version/kind.
func typeOf(obj runtime.Object) string {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return fmt.Sprintf("%T %s", obj, u.GroupVersionKind())
	}
	return fmt.Sprintf("%T", obj)
}

// unstructuredCM returns an unstructured v1 ConfigMap in namespace "ns".
func unstructuredCM(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(s string) int {
	i, _ := strconv.Atoi(s)
	return i
}

func isExpired(err error) bool { return apierrors.IsResourceExpired(err) }

// eventString renders an event as "TYPE name@rv".
func eventString(ev watch.Event) string {
	return string(ev.Type) + " " + describe(ev.Object)
}

func expectEvents(t *testing.T, w watch.Interface, want []string, wantClosed bool) {
	t.Helper()
	got, closed := received(w)
	if !slices.Equal(got, want) {
		t.Fatalf("events = %q\nwant     %q", got, want)
	}
	if closed != wantClosed {
		t.Fatalf("result channel closed = %v, want %v", closed, wantClosed)
	}
}

func ptr[T any](v T) *T { return &v }

// inBubble runs f as subtest name inside a synctest bubble.
func inBubble(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
}

var schemaGR = schema.GroupResource{Resource: "configmaps"}
