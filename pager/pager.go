// Package pager breaks large LIST requests into pages, the way k8s.io/client-go/tools/pager
// does, and is source-compatible with it (v0.37.2).
//
// A [ListPager] asks its [ListPageFunc] for pages of at most PageSize items, following the
// server's continue tokens. [ListPager.List] gathers the pages into one list;
// [ListPager.EachListItem] hands the items to a callback while a background goroutine fetches
// the next pages.
//
// Differences from client-go, all compatible:
//   - EachListItem and EachListItemWithAlloc clear ResourceVersion and ResourceVersionMatch on
//     continue pages (as List always did; a real API server rejects a continue request that
//     still carries them) and, like List, fall back to one full list when a continue page has
//     expired and FullListIfExpired is set — provided no item has been handed to the callback
//     yet (see [ListPager.EachListItem]).
//   - EachListItem returns only after its background fetcher has stopped, so PageFn is never
//     called after EachListItem returns and no goroutine outlives the call.
//   - A panic in PageFn inside EachListItem's fetcher is re-raised in the caller's goroutine
//     instead of crashing the process from a background goroutine.
//   - A nil PageFn or a page that is a nil pointer gives an error instead of a nil dereference.
package pager

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	defaultPageSize       = 500
	defaultPageBufferSize = 10
)

// errNilPageFn is returned by every ListPager method when PageFn is nil.
var errNilPageFn = errors.New("pager: ListPager.PageFn is nil")

// ListPageFunc returns one page of a list for the given options. It is called with
// options.Limit set to the page size and, for every page after the first, options.Continue
// set to the previous page's continue token.
type ListPageFunc func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)

// SimplePageFunc turns a list function without a context into a ListPageFunc that ignores
// its context.
func SimplePageFunc(fn func(opts metav1.ListOptions) (runtime.Object, error)) ListPageFunc {
	return func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return fn(opts)
	}
}

// ListPager lists in pages of at most PageSize items through PageFn. The label and field
// selectors of the caller's options are passed to every page unchanged.
//
// The zero value has no PageFn and is not usable; use [New] or set PageFn. A ListPager holds
// no state between calls and may be used by several goroutines at once if PageFn allows it.
type ListPager struct {
	// PageSize is the Limit used when the caller's options leave Limit at 0. Zero means
	// "no limit": one request returns the whole list. New sets 500.
	PageSize int64
	// PageFn fetches one page.
	PageFn ListPageFunc

	// FullListIfExpired makes the pager retry once with a single unpaginated request (Limit
	// 0, the caller's ResourceVersion and ResourceVersionMatch) when a continue page fails
	// with an Expired error. New sets true.
	FullListIfExpired bool

	// PageBufferSize is how many pages EachListItem fetches ahead of the callback. Zero means
	// the next page is fetched while the callback runs, but not buffered; negative values are
	// rejected with an error. New sets 10.
	PageBufferSize int32
}

// New returns a ListPager over fn with PageSize 500, FullListIfExpired true and
// PageBufferSize 10.
func New(fn ListPageFunc) *ListPager {
	return &ListPager{
		PageSize:          defaultPageSize,
		PageFn:            fn,
		FullListIfExpired: true,
		PageBufferSize:    defaultPageBufferSize,
	}
}

// List fetches the list in pages and returns it as one list object. If the first page has no
// continue token it is returned as it came; otherwise the items of all pages are gathered in a
// *metainternalversion.List carrying the first page's ResourceVersion and SelfLink. The bool
// reports whether the result was paginated, that is whether any page carried a continue token.
//
// Continue pages are requested without ResourceVersion and ResourceVersionMatch, which the
// continue token replaces. If a continue page fails with an Expired error and
// FullListIfExpired is set, List makes one unpaginated request with the caller's original
// ResourceVersion and ResourceVersionMatch and returns its result. Any other error, a
// cancelled ctx or a page that is not a list ends List with that error.
//
// The items of the result share memory with the slices PageFn returned. If items are kept for
// different lengths of time, use [ListPager.ListWithAlloc] so that one kept item does not pin
// a whole page.
func (p *ListPager) List(ctx context.Context, options metav1.ListOptions) (runtime.Object, bool, error) {
	return p.list(ctx, options, false)
}

// ListWithAlloc works like [ListPager.List] but copies every non-pointer item out of the page
// it came in, so the returned items do not keep PageFn's slices alive.
func (p *ListPager) ListWithAlloc(ctx context.Context, options metav1.ListOptions) (runtime.Object, bool, error) {
	return p.list(ctx, options, true)
}

func (p *ListPager) list(ctx context.Context, options metav1.ListOptions, alloc bool) (runtime.Object, bool, error) {
	if p.PageFn == nil {
		return nil, false, errNilPageFn
	}
	if options.Limit == 0 {
		options.Limit = p.PageSize
	}
	requested := options
	each := meta.EachListItem
	if alloc {
		each = meta.EachListItemWithAlloc
	}

	// Pages are gathered as exactly sized chunks and joined once at the end, so the result
	// holds no spare capacity and no item is copied more than twice.
	var first metav1.ListInterface
	var chunks [][]runtime.Object
	// One collector for every page: a closure made per page would cost two allocations
	// each (itself and the chunk it captures).
	var chunk []runtime.Object
	collect := func(item runtime.Object) error {
		chunk = append(chunk, item)
		return nil
	}
	total := 0
	paginated := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, paginated, err
		}
		obj, err := p.PageFn(ctx, options)
		if err != nil {
			if !p.fallBackToFullList(err, options) {
				return nil, paginated, err
			}
			full, err := p.PageFn(ctx, fullListOptions(requested))
			if err != nil {
				return nil, paginated, err
			}
			if _, err := listAccessor(full); err != nil {
				return nil, paginated, err
			}
			return full, paginated, nil
		}
		m, err := listAccessor(obj)
		if err != nil {
			return nil, paginated, err
		}
		next := m.GetContinue()
		if next == "" && first == nil {
			return obj, paginated, nil
		}
		if first == nil {
			first = m
		}
		chunk = make([]runtime.Object, 0, meta.LenList(obj))
		if err := each(obj, collect); err != nil {
			return nil, paginated, err
		}
		chunks = append(chunks, chunk)
		total += len(chunk)
		if next == "" {
			return joinPages(first, chunks, total), paginated, nil
		}
		options = continueOptions(options, next)
		paginated = true
	}
}

// joinPages returns the gathered list: the items of all chunks, with the first page's
// ResourceVersion and SelfLink.
func joinPages(first metav1.ListInterface, chunks [][]runtime.Object, total int) *metainternalversion.List {
	list := &metainternalversion.List{Items: make([]runtime.Object, 0, total)}
	list.ResourceVersion = first.GetResourceVersion()
	list.SetSelfLink(first.GetSelfLink())
	for _, chunk := range chunks {
		list.Items = append(list.Items, chunk...)
	}
	return list
}

// fallBackToFullList reports whether err, returned for the page requested with options,
// calls for the single unpaginated retry: only an Expired error on a continue page, and only
// when FullListIfExpired is set. An expired first page means the caller's resource version is
// too old, which a full list at the same version would not fix.
func (p *ListPager) fallBackToFullList(err error, options metav1.ListOptions) bool {
	return p.FullListIfExpired && options.Continue != "" && apierrors.IsResourceExpired(err)
}

// continueOptions returns the options for the page after one that returned token: the
// continue token replaces the resource version, which a server rejects alongside it.
func continueOptions(options metav1.ListOptions, token string) metav1.ListOptions {
	options.Continue = token
	options.ResourceVersion = ""
	options.ResourceVersionMatch = ""
	return options
}

// fullListOptions returns the options of the single unpaginated retry: the caller's original
// request without a limit or continue token.
func fullListOptions(requested metav1.ListOptions) metav1.ListOptions {
	requested.Limit = 0
	requested.Continue = ""
	return requested
}

// listAccessor returns obj's list metadata, or an error if obj is nil or not a list.
func listAccessor(obj runtime.Object) (metav1.ListInterface, error) {
	if obj == nil {
		return nil, errors.New("returned object must be a list: got nil")
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("returned object must be a list: got a nil %T", obj)
	}
	m, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, fmt.Errorf("returned object must be a list: %w", err)
	}
	return m, nil
}
