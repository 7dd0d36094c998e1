package pager_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/pager"
)

func TestEachListItem(t *testing.T) {
	cases := []struct {
		name       string
		items      int
		pageSize   int64
		buffer     int32
		noFull     bool
		emptyPages int
		opts       metav1.ListOptions
		fail       map[int]error
		stopAt     int // fn returns errStop at this item (1-based); 0 = never
		wantErr    func(error) bool
		wantNames  []string
		wantCalls  []metav1.ListOptions
	}{
		{
			name: "every item in order, continue pages drop the resource version", items: 11, pageSize: 5, buffer: 2,
			opts:      metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantNames: wantNames(0, 11),
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 5},
				{Limit: 5, Continue: "5"},
				{Limit: 5, Continue: "10"},
			},
		},
		{
			name: "an unbuffered fetcher delivers everything too", items: 11, pageSize: 5, buffer: 0,
			wantNames: wantNames(0, 11),
		},
		{
			name: "an fn error is returned at once", items: 30, pageSize: 5, buffer: 1,
			stopAt:    7,
			wantErr:   func(err error) bool { return errors.Is(err, errStop) },
			wantNames: wantNames(0, 7),
		},
		{
			name: "an expired continue page after empty pages falls back to a full list", items: 6, pageSize: 2, buffer: 3,
			opts:       metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			emptyPages: 2,
			fail:       map[int]error{3: expired()},
			wantNames:  wantNames(0, 6),
			wantCalls: []metav1.ListOptions{
				{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 2},
				{Limit: 2, Continue: "0"},
				{Limit: 2, Continue: "0"},
				{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			},
		},
		{
			name: "an expired continue page after items were handed out is returned", items: 6, pageSize: 2, buffer: 3,
			fail:      map[int]error{2: expired()},
			wantErr:   apierrors.IsResourceExpired,
			wantNames: wantNames(0, 2),
			wantCalls: []metav1.ListOptions{{Limit: 2}, {Limit: 2, Continue: "2"}},
		},
		{
			name: "without FullListIfExpired an expired continue page is returned", items: 6, pageSize: 2, noFull: true,
			emptyPages: 1,
			fail:       map[int]error{2: expired()},
			wantErr:    apierrors.IsResourceExpired,
			wantNames:  []string{},
		},
		{
			name: "an expired first page is returned", items: 6, pageSize: 2,
			fail:      map[int]error{1: expired()},
			wantErr:   apierrors.IsResourceExpired,
			wantNames: []string{},
		},
		{
			name: "a fetch error after some pages is returned after their items", items: 6, pageSize: 2, buffer: 5,
			fail:      map[int]error{3: apierrors.NewInternalError(errors.New("boom"))},
			wantErr:   apierrors.IsInternalError,
			wantNames: wantNames(0, 4),
		},
	}
	for _, tc := range cases {
		for _, withAlloc := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				s := newPageServer(tc.items)
				s.fail = tc.fail
				s.emptyPages = tc.emptyPages
				p := &pager.ListPager{PageSize: tc.pageSize, PageFn: s.list, FullListIfExpired: !tc.noFull, PageBufferSize: tc.buffer}
				each := p.EachListItem
				if withAlloc {
					each = p.EachListItemWithAlloc
				}
				got := []string{}
				err := each(context.Background(), tc.opts, func(obj runtime.Object) error {
					got = append(got, obj.(*v1.ConfigMap).Name)
					if len(got) == tc.stopAt {
						return errStop
					}
					return nil
				})
				if tc.wantErr == nil && err != nil {
					t.Fatalf("EachListItem: %v", err)
				}
				if tc.wantErr != nil && (err == nil || !tc.wantErr(err)) {
					t.Fatalf("EachListItem error = %v, want a matching error", err)
				}
				if !slices.Equal(got, tc.wantNames) {
					t.Fatalf("fn saw %v\nwant %v", got, tc.wantNames)
				}
				calls := s.recorded()
				if tc.wantCalls != nil && !slices.Equal(calls, tc.wantCalls) {
					t.Fatalf("requests = %+v\nwant       %+v", calls, tc.wantCalls)
				}
			})
		}
	}
}

func TestEachListItemBadInput(t *testing.T) {
	cases := []struct {
		name    string
		pager   *pager.ListPager
		wantErr string
	}{
		{
			name:    "negative PageBufferSize",
			pager:   &pager.ListPager{PageFn: newPageServer(1).list, PageBufferSize: -1},
			wantErr: "ListPager.PageBufferSize must be >= 0, got -1",
		},
		{name: "nil PageFn", pager: &pager.ListPager{}, wantErr: "PageFn is nil"},
		{
			name: "a page that is not a list",
			pager: pager.New(func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return &v1.ConfigMap{}, nil
			}),
			wantErr: "returned object must be a list",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.pager.EachListItem(context.Background(), metav1.ListOptions{}, func(runtime.Object) error {
				t.Fatal("fn must not be called")
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestEachListItemStops checks that every way out of EachListItem — a cancelled context, a
// panic in fn, a panic in PageFn — stops the background fetcher before returning (goleak in
// TestMain would catch a fetcher left behind) and reports the right outcome.
func TestEachListItemStops(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(s *pageServer)
		fn        func(s *pageServer, cancel context.CancelFunc) func(runtime.Object) error
		wantErr   error
		wantPanic string
	}{
		{
			name: "ctx cancelled while the fetcher waits on the server",
			// Call 2 blocks until its context ends; fn, handling page 1, waits until the
			// fetcher is in that call and then cancels.
			setup: func(s *pageServer) { s.block = 2 },
			fn: func(s *pageServer, cancel context.CancelFunc) func(runtime.Object) error {
				return func(runtime.Object) error { <-s.waiting; cancel(); return nil }
			},
			wantErr: context.Canceled,
		},
		{
			name:  "fn fails while the fetcher waits on the server",
			setup: func(s *pageServer) { s.block = 2 },
			fn: func(s *pageServer, _ context.CancelFunc) func(runtime.Object) error {
				return func(runtime.Object) error { <-s.waiting; return errStop }
			},
			wantErr: errStop,
		},
		{
			name:  "ctx cancelled while the fetcher waits on a full buffer",
			setup: func(*pageServer) {},
			fn: func(_ *pageServer, cancel context.CancelFunc) func(runtime.Object) error {
				return func(runtime.Object) error { cancel(); return nil }
			},
			wantErr: context.Canceled,
		},
		{
			name:  "fn panics",
			setup: func(*pageServer) {},
			fn: func(*pageServer, context.CancelFunc) func(runtime.Object) error {
				return func(runtime.Object) error { panic("fn exploded") }
			},
			wantPanic: "fn exploded",
		},
		{
			name:  "PageFn panics",
			setup: func(s *pageServer) { s.fail = map[int]error{2: errPanic} },
			fn: func(*pageServer, context.CancelFunc) func(runtime.Object) error {
				return func(runtime.Object) error { return nil }
			},
			wantPanic: "PageFn exploded",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newPageServer(100)
			tc.setup(s)
			pageFn := func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				obj, err := s.list(ctx, opts)
				if errors.Is(err, errPanic) {
					panic("PageFn exploded")
				}
				return obj, err
			}
			p := &pager.ListPager{PageSize: 10, PageFn: pageFn, FullListIfExpired: true, PageBufferSize: 1}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			var err error
			var panicked any
			func() {
				defer func() { panicked = recover() }()
				err = p.EachListItem(ctx, metav1.ListOptions{}, tc.fn(s, cancel))
			}()
			if tc.wantPanic != "" {
				if panicked != tc.wantPanic {
					t.Fatalf("panic = %v, want %q", panicked, tc.wantPanic)
				}
				return
			}
			if panicked != nil {
				t.Fatalf("unexpected panic %v", panicked)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if s.block != 0 && !s.unblocked.Load() {
				t.Fatal("EachListItem returned before its fetcher's PageFn call came back")
			}
		})
	}
}

var (
	errPanic = errors.New("panic in PageFn")
	errStop  = errors.New("stop here")
)
