package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

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

	list, paginated, err := p.ListWithAlloc(ctx, options)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// The server no longer has (or does not have yet) the resource version we asked for.
		// The pager already falls back to a full list when a continue token expires, but not
		// when the first page fails: list again at once, at the newest resource version.
		r.setIsLastSyncResourceVersionUnavailable(true)
		list, paginated, err = p.ListWithAlloc(ctx, metav1.ListOptions{ResourceVersion: r.relistResourceVersion()})
	}
	if ctx.Err() != nil {
		return nil
	}
	if err == nil && list == nil {
		err = errNilList
	}
	if err == nil {
		if unsupported, gvk := isUnsupportedTableListObject(list); unsupported {
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

	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return fmt.Errorf("unable to understand list result %T: %w", list, err)
	}
	resourceVersion := listMeta.GetResourceVersion()
	initTrace.Step("Resource version extracted")
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return fmt.Errorf("unable to understand list result %T: %w", list, err)
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
	r.setLastSyncResourceVersion(resourceVersion)
	r.metrics.listDuration.Observe(r.clock.Since(start).Seconds())
	r.metrics.itemsInList.Observe(float64(len(items)))
	return nil
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
