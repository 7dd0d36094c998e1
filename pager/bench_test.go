package pager_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/pager"
)

// BenchmarkPager100k lists 100,000 ConfigMaps in pages of 500 through each pager entry point.
// The page server only slices a prebuilt array, so the numbers are the pager's own cost.
func BenchmarkPager100k(b *testing.B) {
	const items, pageSize = 100_000, 500
	s := newPageServer(items)
	pageFn := func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return s.list(ctx, opts)
	}
	count := func(runtime.Object) error { return nil }
	cases := []struct {
		name string
		run  func(p *pager.ListPager) (int, error)
	}{
		{name: "List", run: func(p *pager.ListPager) (int, error) {
			obj, _, err := p.List(context.Background(), metav1.ListOptions{})
			return meta.LenList(obj), err
		}},
		{name: "ListWithAlloc", run: func(p *pager.ListPager) (int, error) {
			obj, _, err := p.ListWithAlloc(context.Background(), metav1.ListOptions{})
			return meta.LenList(obj), err
		}},
		{name: "EachListItem", run: func(p *pager.ListPager) (int, error) {
			return items, p.EachListItem(context.Background(), metav1.ListOptions{}, count)
		}},
		{name: "EachListItemWithAlloc", run: func(p *pager.ListPager) (int, error) {
			return items, p.EachListItemWithAlloc(context.Background(), metav1.ListOptions{}, count)
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			p := pager.New(pageFn)
			p.PageSize = pageSize
			b.ReportAllocs()
			for b.Loop() {
				s.mu.Lock()
				s.calls = s.calls[:0]
				s.mu.Unlock()
				n, err := tc.run(p)
				if err != nil || n != items {
					b.Fatalf("got %d items, err %v", n, err)
				}
			}
		})
	}
}
