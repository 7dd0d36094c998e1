package pager_test

import (
	"context"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/pager"
)

// A pager over a large list: 1,234 ConfigMaps served in pages of at most 500, walked item by
// item while the next pages are fetched in the background.
func Example() {
	all := make([]v1.ConfigMap, 1234)
	for i := range all {
		all[i].Name = fmt.Sprintf("cm-%04d", i)
	}
	requests := 0
	listPage := func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		requests++
		start, _ := strconv.Atoi(opts.Continue) // "" → 0
		end := min(start+int(opts.Limit), len(all))
		page := &v1.ConfigMapList{Items: all[start:end]}
		page.ResourceVersion = "100"
		if end < len(all) {
			page.Continue = strconv.Itoa(end)
		}
		return page, nil
	}

	p := pager.New(listPage) // pages of 500
	seen := 0
	last := ""
	err := p.EachListItem(context.Background(), metav1.ListOptions{}, func(obj runtime.Object) error {
		seen++
		last = obj.(*v1.ConfigMap).Name
		return nil
	})
	fmt.Println("items:", seen, "last:", last, "requests:", requests, "err:", err)

	requests = 0
	list, paginated, err := p.List(context.Background(), metav1.ListOptions{})
	fmt.Printf("%T paginated=%v requests=%d err=%v\n", list, paginated, requests, err)
	// Output:
	// items: 1234 last: cm-1233 requests: 3 err: <nil>
	// *internalversion.List paginated=true requests=3 err=<nil>
}
