package pager_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/pager"
)

func TestNewDefaults(t *testing.T) {
	p := pager.New(nil)
	if p.PageSize != 500 || !p.FullListIfExpired || p.PageBufferSize != 10 {
		t.Fatalf("New = %+v, want PageSize 500, FullListIfExpired true, PageBufferSize 10", *p)
	}
}

func TestSimplePageFunc(t *testing.T) {
	var got metav1.ListOptions
	fn := pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		got = opts
		return &v1.ConfigMapList{}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fn(ctx, metav1.ListOptions{Limit: 7}); err != nil {
		t.Fatalf("SimplePageFunc returned %v", err)
	}
	if got.Limit != 7 {
		t.Fatalf("options passed through = %+v, want Limit 7", got)
	}
}

func TestList(t *testing.T) {
	cases := []struct {
		name      string
		items     int
		pageSize  int64
		noFull    bool
		opts      metav1.ListOptions
		fail      map[int]error
		wantErr   func(error) bool
		wantNames []string
		wantPaged bool
		wantWhole bool // the result is the server's own list object, not a gathered one
		wantCalls []metav1.ListOptions
	}{
		{
			name: "one page is returned as it came", items: 3, pageSize: 500,
			opts:      metav1.ListOptions{ResourceVersion: "0"},
			wantNames: wantNames(0, 3), wantWhole: true,
			wantCalls: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
		},
		{
			name: "pages are gathered and continue pages drop the resource version", items: 1050, pageSize: 500,
			opts:      metav1.ListOptions{ResourceVersion: "7", ResourceVersionMatch: metav1.ResourceVersionMatchExact, LabelSelector: "a=b"},
			wantNames: wantNames(0, 1050), wantPaged: true,
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "7", ResourceVersionMatch: metav1.ResourceVersionMatchExact, LabelSelector: "a=b", Limit: 500},
				{LabelSelector: "a=b", Limit: 500, Continue: "500"},
				{LabelSelector: "a=b", Limit: 500, Continue: "1000"},
			},
		},
		{
			name: "the caller's limit wins over PageSize", items: 5, pageSize: 500,
			opts:      metav1.ListOptions{Limit: 2},
			wantNames: wantNames(0, 5), wantPaged: true,
			wantCalls: []metav1.ListOptions{{Limit: 2}, {Limit: 2, Continue: "2"}, {Limit: 2, Continue: "4"}},
		},
		{
			name: "PageSize 0 lists everything at once", items: 700, pageSize: 0,
			wantNames: wantNames(0, 700), wantWhole: true,
			wantCalls: []metav1.ListOptions{{}},
		},
		{
			name: "an expired continue page falls back to one full list", items: 10, pageSize: 4,
			opts:      metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			fail:      map[int]error{2: expired()},
			wantNames: wantNames(0, 10), wantPaged: true, wantWhole: true,
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 4},
				{Limit: 4, Continue: "4"},
				{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			},
		},
		{
			name: "without FullListIfExpired an expired continue page is an error", items: 10, pageSize: 4, noFull: true,
			fail:      map[int]error{2: expired()},
			wantErr:   apierrors.IsResourceExpired,
			wantPaged: true, // the first page had a continue token
		},
		{
			name: "an expired first page is an error, not a fallback", items: 10, pageSize: 4,
			fail:      map[int]error{1: expired()},
			wantErr:   apierrors.IsResourceExpired,
			wantCalls: []metav1.ListOptions{{Limit: 4}},
		},
		{
			name: "the fallback's own error is returned", items: 10, pageSize: 4,
			fail:      map[int]error{2: expired(), 3: apierrors.NewInternalError(errors.New("boom"))},
			wantErr:   apierrors.IsInternalError,
			wantPaged: true, // the first page had a continue token
		},
		{
			name: "other errors on a continue page are returned", items: 10, pageSize: 4,
			fail:      map[int]error{2: apierrors.NewTooManyRequests("slow down", 1)},
			wantErr:   apierrors.IsTooManyRequests,
			wantPaged: true, // the first page had a continue token
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newPageServer(tc.items)
			s.fail = tc.fail
			p := &pager.ListPager{PageSize: tc.pageSize, PageFn: s.list, FullListIfExpired: !tc.noFull}
			obj, paged, err := p.List(context.Background(), tc.opts)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("List error = %v, want a matching error", err)
				}
			} else {
				if err != nil {
					t.Fatalf("List: %v", err)
				}
				items, err := meta.ExtractList(obj)
				if err != nil {
					t.Fatalf("ExtractList: %v", err)
				}
				if got := names(items); !slices.Equal(got, tc.wantNames) {
					t.Fatalf("got %d items, want %d (first %v)", len(got), len(tc.wantNames), got[:min(3, len(got))])
				}
				_, gathered := obj.(*metainternalversion.List)
				if gathered == tc.wantWhole {
					t.Fatalf("result type %T, want the server's list = %v", obj, tc.wantWhole)
				}
				m, _ := meta.ListAccessor(obj)
				if m.GetResourceVersion() != "42" || m.GetSelfLink() != "/self" {
					t.Fatalf("list meta = rv %q selfLink %q, want the first page's", m.GetResourceVersion(), m.GetSelfLink())
				}
			}
			if paged != tc.wantPaged {
				t.Fatalf("paginated = %v, want %v", paged, tc.wantPaged)
			}
			if tc.wantCalls != nil && !slices.Equal(s.recorded(), tc.wantCalls) {
				t.Fatalf("requests = %+v\nwant       %+v", s.recorded(), tc.wantCalls)
			}
		})
	}
}

func TestListBadInput(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		pageFn  pager.ListPageFunc
		ctx     context.Context
		wantErr string
	}{
		{name: "nil PageFn", ctx: context.Background(), wantErr: "PageFn is nil"},
		{
			name: "a page that is not a list", ctx: context.Background(),
			pageFn: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return &v1.ConfigMap{}, nil
			},
			wantErr: "returned object must be a list",
		},
		{
			name: "a nil page", ctx: context.Background(),
			pageFn:  func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, nil },
			wantErr: "returned object must be a list",
		},
		{
			name: "a typed nil page", ctx: context.Background(),
			pageFn: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return (*v1.ConfigMapList)(nil), nil
			},
			wantErr: "returned object must be a list",
		},
		{
			name: "a cancelled context stops before the first request", ctx: cancelled,
			pageFn: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				panic("PageFn must not be called")
			},
			wantErr: context.Canceled.Error(),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pager.New(tc.pageFn)
			for _, list := range []func(context.Context, metav1.ListOptions) (runtime.Object, bool, error){p.List, p.ListWithAlloc} {
				obj, _, err := list(tc.ctx, metav1.ListOptions{})
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if obj != nil {
					t.Fatalf("object = %v, want nil on error", obj)
				}
			}
		})
	}
}

// TestWithAllocCopiesItems checks the one difference between the plain and the WithAlloc
// forms: the items the plain forms return point into the pages' slices, the WithAlloc ones do
// not.
func TestWithAllocCopiesItems(t *testing.T) {
	collect := func(each func(context.Context, metav1.ListOptions, func(runtime.Object) error) error) func(context.Context, metav1.ListOptions) ([]runtime.Object, error) {
		return func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error) {
			var items []runtime.Object
			err := each(ctx, opts, func(obj runtime.Object) error {
				items = append(items, obj)
				return nil
			})
			return items, err
		}
	}
	gather := func(list func(context.Context, metav1.ListOptions) (runtime.Object, bool, error)) func(context.Context, metav1.ListOptions) ([]runtime.Object, error) {
		return func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error) {
			obj, _, err := list(ctx, opts)
			if err != nil {
				return nil, err
			}
			return meta.ExtractList(obj)
		}
	}
	cases := []struct {
		name      string
		items     func(p *pager.ListPager) func(context.Context, metav1.ListOptions) ([]runtime.Object, error)
		wantAlias bool
	}{
		{name: "List shares the pages' items", items: func(p *pager.ListPager) func(context.Context, metav1.ListOptions) ([]runtime.Object, error) {
			return gather(p.List)
		}, wantAlias: true},
		{name: "ListWithAlloc copies them", items: func(p *pager.ListPager) func(context.Context, metav1.ListOptions) ([]runtime.Object, error) {
			return gather(p.ListWithAlloc)
		}, wantAlias: false},
		{name: "EachListItem shares the pages' items", items: func(p *pager.ListPager) func(context.Context, metav1.ListOptions) ([]runtime.Object, error) {
			return collect(p.EachListItem)
		}, wantAlias: true},
		{name: "EachListItemWithAlloc copies them", items: func(p *pager.ListPager) func(context.Context, metav1.ListOptions) ([]runtime.Object, error) {
			return collect(p.EachListItemWithAlloc)
		}, wantAlias: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newPageServer(6)
			p := &pager.ListPager{PageSize: 4, PageFn: s.list}
			items, err := tc.items(p)(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.items[1].Name = "changed-on-the-server"
			aliased := items[1].(*v1.ConfigMap).Name == "changed-on-the-server"
			if aliased != tc.wantAlias {
				t.Fatalf("item aliases the page = %v, want %v", aliased, tc.wantAlias)
			}
		})
	}
}
