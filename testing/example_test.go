package testing_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/pager"
	fcache "github.com/kcache/cache/testing"
)

// A client lists the fake source in pages, watches from the list's resource version, and
// meets an injected fault on its next list.
func Example() {
	src := fcache.New(fcache.Options{
		NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} },
	})
	for _, name := range []string{"alpha", "beta", "gamma"} {
		src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	}

	// List in pages of two, as a Reflector does through the pager.
	p := pager.New(src.ListWithContext)
	p.PageSize = 2
	list, paginated, _ := p.List(context.Background(), metav1.ListOptions{})
	items, _ := meta.ExtractList(list)
	lm, _ := meta.ListAccessor(list)
	fmt.Printf("listed %d objects at resourceVersion %s (paginated: %v)\n", len(items), lm.GetResourceVersion(), paginated)

	// Watch from there: only what changes after the list arrives.
	w, _ := src.Watch(metav1.ListOptions{ResourceVersion: lm.GetResourceVersion()})
	defer w.Stop()
	src.Delete(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "beta"}})
	ev := <-w.ResultChan()
	m, _ := meta.Accessor(ev.Object)
	fmt.Println("watch:", ev.Type, m.GetName(), "at", m.GetResourceVersion())

	// Make the next list fail the way an overloaded server does.
	src.FailLists(1, fcache.TooManyRequestsError(2))
	_, err := src.List(metav1.ListOptions{})
	delay, _ := apierrors.SuggestsClientDelay(err)
	fmt.Println("list:", apierrors.IsTooManyRequests(err), "retry after", delay, "s")
	// Output:
	// listed 3 objects at resourceVersion 3 (paginated: true)
	// watch: DELETED beta at 4
	// list: true retry after 2 s
}
