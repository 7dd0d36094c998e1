package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/trace"

	"github.com/kcache/cache/pager"
)

// errNilList is returned when a ListerWatcher's List returns neither an object nor an error.
var errNilList = errors.New("cache: list returned a nil object and no error")

// list fills the store with a LIST (paginated when that is the right call, see
// WatchListPageSize) and records the list's resource version.
//
// The LIST runs on the calling goroutine with ctx, so a panic in the ListerWatcher propagates
// with its own stack trace (client-go lists on a helper goroutine and re-raises the panic value
// from there, losing the stack), and no goroutine outlives the call. If ctx is cancelled, list
// returns nil as soon as the ListerWatcher returns, without touching the store; a ListerWatcher
// that ignores ctx therefore delays the stop until its call returns.
//
// When the store is an informer's queue that dedups relists (see relistDeduper), the pages are
// handled one by one as they arrive (listPages) instead of being gathered into one list first,
// and objects already cached with the same resourceVersion are replaced by the cached ones.
func (r *Reflector) list(ctx context.Context) error {
	options := metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
	initTrace := trace.New("Reflector ListAndWatch", trace.Field{Key: "name", Value: r.name})
	defer initTrace.LogIfLong(10 * time.Second)
	start := r.clock.Now()
	r.metrics.lists.Inc()

	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return r.listerWatcher.ListWithContext(ctx, opts)
	})
	p.PageSize = r.listPageSize(p.PageSize, options.ResourceVersion)
	fetch := func(options metav1.ListOptions) (*listResult, bool, error) {
		list, paginated, err := p.ListWithAlloc(ctx, options)
		if err != nil {
			return nil, paginated, err
		}
		return &listResult{list: list}, paginated, nil
	}
	dedup, _ := r.store.(relistDeduper)
	if dedup != nil && dedup.dedupsRelists() {
		fetch = func(options metav1.ListOptions) (*listResult, bool, error) {
			return r.listPages(ctx, dedup, options, p.PageSize)
		}
	} else {
		dedup = nil
	}

	result, paginated, err := fetch(options)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// The server no longer has (or does not have yet) the resource version we asked for.
		// The pager already falls back to a full list when a continue token expires, but not
		// when the first page fails: list again at once, at the newest resource version.
		r.setIsLastSyncResourceVersionUnavailable(true)
		result, paginated, err = fetch(metav1.ListOptions{ResourceVersion: r.relistResourceVersion()})
	}
	if ctx.Err() != nil {
		return nil
	}
	if err == nil && (result == nil || result.list == nil) {
		err = errNilList
	}
	if err == nil {
		if unsupported, gvk := isUnsupportedTableListObject(result.list); unsupported {
			err = fmt.Errorf("unsupported list gvk: %v, type: %v", gvk, r.typeDescription)
		}
	}
	initTrace.Step("Objects listed", trace.Field{Key: "error", Value: err})
	if err != nil {
		return fmt.Errorf("failed to list %v: %w", r.typeDescription, err)
	}

	// A "0" list that came back in pages means the server does not answer lists from its
	// watch cache for this resource: keep paging from now on. Only the first list counts,
	// because later lists at "" are always paged, watch cache or not.
	if options.ResourceVersion == "0" && paginated {
		r.paginatedResult = true
	}
	r.setIsLastSyncResourceVersionUnavailable(false)

	listMeta, err := meta.ListAccessor(result.list)
	if err != nil {
		return fmt.Errorf("unable to understand list result %T: %w", result.list, err)
	}
	resourceVersion := listMeta.GetResourceVersion()
	initTrace.Step("Resource version extracted")
	if dedup != nil {
		items := result.items
		initTrace.Step("Objects extracted", trace.Field{Key: "unchanged", Value: items.unchanged})
		if err := dedup.replaceRelisted(items.items, items.cached, resourceVersion, false); err != nil {
			return fmt.Errorf("unable to sync list result: %w", err)
		}
		initTrace.Step("SyncWith done")
		r.observeList(start, resourceVersion, len(items.items))
		return nil
	}
	items, err := meta.ExtractListWithAlloc(result.list)
	if err != nil {
		return fmt.Errorf("unable to understand list result %T: %w", result.list, err)
	}
	initTrace.Step("Objects extracted")
	found := make([]interface{}, len(items))
	for i, item := range items {
		found[i] = item
	}
	if err := r.store.Replace(found, resourceVersion); err != nil {
		return fmt.Errorf("unable to sync list result: %w", err)
	}
	initTrace.Step("SyncWith done")
	r.observeList(start, resourceVersion, len(items))
	return nil
}

// observeList records a finished list: its resource version and its metrics.
func (r *Reflector) observeList(start time.Time, resourceVersion string, items int) {
	r.setLastSyncResourceVersion(resourceVersion)
	r.metrics.listDuration.Observe(r.clock.Since(start).Seconds())
	r.metrics.itemsInList.Observe(float64(items))
}

// listResult is a LIST's answer: the list (for a paged LIST with dedup, only the first page's
// metadata, without items) and, when the store dedups relists, the items gathered page by page.
type listResult struct {
	list  runtime.Object
	items *relistItems
}

// listPages is the pager's ListWithAlloc for a store that dedups relists (see relistDeduper):
// it asks for the pages one after another, like the pager, but hands every item to the store's
// dedup as its page arrives and lets the page go before asking for the next one, so the relist
// never holds more than one page besides the objects that changed. It follows the pager's
// rules: pages of pageSize items (0: one request), continue pages without resource version,
// and one unpaginated retry with the original options when a continue token expired (the
// items gathered so far are dropped). The returned list carries the first page's metadata and
// no items.
func (r *Reflector) listPages(ctx context.Context, dedup relistDeduper, options metav1.ListOptions, pageSize int64) (*listResult, bool, error) {
	if options.Limit == 0 {
		options.Limit = pageSize
	}
	requested := options
	var encode func(interface{}) (interface{}, bool)
	if le, ok := dedup.(listEncoder); ok {
		encode = le.listEncoder(true)
	}
	res := &listResult{items: &relistItems{dedup: dedup, encode: encode}}
	paginated := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, paginated, err
		}
		page, err := r.listerWatcher.ListWithContext(ctx, options)
		if err != nil {
			if options.Continue == "" || !apierrors.IsResourceExpired(err) {
				return nil, paginated, err
			}
			// The continue token expired: start over with one full list.
			options = requested
			options.Limit, options.Continue = 0, ""
			res = &listResult{items: &relistItems{dedup: dedup, encode: encode}}
			if page, err = r.listerWatcher.ListWithContext(ctx, options); err != nil {
				return nil, paginated, err
			}
			_, err := res.addPage(page)
			return res, paginated, err
		}
		before := len(res.items.items)
		next, err := res.addPage(page)
		r.status.listReceivedItems(len(res.items.items)-before, time.Time{})
		if err != nil || next == "" {
			return res, paginated, err
		}
		options.Continue = next
		options.ResourceVersion, options.ResourceVersionMatch = "", ""
		paginated = true
	}
}

// addPage takes page's items and, for the first page, its metadata; it returns the page's
// continue token.
func (res *listResult) addPage(page runtime.Object) (string, error) {
	if page == nil {
		return "", errNilList
	}
	if v := reflect.ValueOf(page); v.Kind() == reflect.Pointer && v.IsNil() {
		return "", errNilList
	}
	m, err := meta.ListAccessor(page)
	if err != nil {
		return "", fmt.Errorf("unable to understand list result %T: %w", page, err)
	}
	if res.list == nil {
		res.list = listHeader(page, m)
	}
	if err := res.items.addPage(page); err != nil {
		return "", err
	}
	return m.GetContinue(), nil
}

// listHeader returns what the Reflector needs of a first page once its items are gone: the
// page itself when it is an unstructured list (whose kind is checked for server-side tables),
// emptied of items, or a list carrying the page's resource version.
func listHeader(page runtime.Object, m metav1.ListInterface) runtime.Object {
	if u, ok := page.(*unstructured.UnstructuredList); ok {
		return &unstructured.UnstructuredList{Object: u.Object}
	}
	header := &metav1.List{}
	header.ResourceVersion = m.GetResourceVersion()
	return header
}

// listPageSize chooses the page size of a LIST at resourceVersion; def is the pager's default.
func (r *Reflector) listPageSize(def int64, resourceVersion string) int64 {
	switch {
	case r.chunkingDisabled:
		return 0
	case r.WatchListPageSize != 0:
		return r.WatchListPageSize
	case r.paginatedResult:
		return def
	case resourceVersion != "" && resourceVersion != "0":
		// A list at a specific resource version can be served from the watch cache, but only
		// when it is not paged. Its answer is at least as new as that version, so this never
		// goes back in time. ("0" lists ignore the limit in the watch cache anyway.)
		return 0
	}
	return def
}

// listWatchDisablesChunking reports whether lw is a ListWatch (possibly wrapped by
// ToListWatcherWithWatchListSemantics) with DisableChunking set.
func listWatchDisablesChunking(lw ListerWatcher) bool {
	switch lw := lw.(type) {
	case *ListWatch:
		return lw != nil && lw.DisableChunking
	case *listWatchWithWatchListSemantics:
		return lw != nil && lw.ListWatch != nil && lw.ListWatch.DisableChunking
	}
	return false
}

// unsupportedTableGVKs are the server-side table formats: a table is a rendering of objects, not
// the objects, and must never reach a store.
var unsupportedTableGVKs = map[schema.GroupVersionKind]bool{
	metav1beta1.SchemeGroupVersion.WithKind("Table"): true,
	metav1.SchemeGroupVersion.WithKind("Table"):      true,
}

// isUnsupportedTableObject reports whether obj is an unstructured meta.k8s.io Table.
func isUnsupportedTableObject(obj runtime.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil || u.GetKind() != "Table" {
		return false
	}
	return unsupportedTableGVKs[u.GroupVersionKind()]
}

// isUnsupportedTableListObject reports whether list is an unstructured meta.k8s.io Table list,
// and its GroupVersionKind.
func isUnsupportedTableListObject(list runtime.Object) (bool, schema.GroupVersionKind) {
	u, ok := list.(*unstructured.UnstructuredList)
	if !ok || u == nil {
		return false, schema.GroupVersionKind{}
	}
	gvk := u.GroupVersionKind()
	return unsupportedTableGVKs[gvk], gvk
}
