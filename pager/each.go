package pager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EachListItem fetches the list in pages and calls fn with every item, in list order, on the
// caller's goroutine. A background goroutine fetches up to PageBufferSize pages ahead of fn.
//
// EachListItem returns the first error fn returns, at once; otherwise ctx's error if ctx ends;
// otherwise the first error from fetching (including a page that is not a list); otherwise nil.
// Whatever the outcome, it returns only after the background fetcher has stopped: fn is never
// called and PageFn is never started after EachListItem returns. A PageFn that ignores its
// context delays the return until it comes back.
//
// Continue pages are requested without ResourceVersion and ResourceVersionMatch. When a
// continue page fails with an Expired error and FullListIfExpired is set, EachListItem makes
// one unpaginated request with the caller's original options and calls fn with its items —
// but only if every earlier page was empty, so that fn never sees an item twice. If an
// earlier page had items, the Expired error is returned instead (apierrors.IsResourceExpired
// holds for it); the caller then knows fn saw a prefix of the list and may start over. This
// fixes client-go, which neither clears the resource version nor falls back.
//
// A panic in PageFn is re-raised on the caller's goroutine after the fetcher has stopped.
//
// The items passed to fn share memory with the slices PageFn returned; see
// [ListPager.EachListItemWithAlloc].
func (p *ListPager) EachListItem(ctx context.Context, options metav1.ListOptions, fn func(obj runtime.Object) error) error {
	return p.eachPage(ctx, options, func(page runtime.Object) error {
		return meta.EachListItem(page, fn)
	})
}

// EachListItemWithAlloc works like [ListPager.EachListItem] but copies every non-pointer item
// out of the page it came in, so items that fn keeps do not keep PageFn's slices alive.
func (p *ListPager) EachListItemWithAlloc(ctx context.Context, options metav1.ListOptions, fn func(obj runtime.Object) error) error {
	return p.eachPage(ctx, options, func(page runtime.Object) error {
		return meta.EachListItemWithAlloc(page, fn)
	})
}

// fetchResult is what the background fetcher reports when it stops.
type fetchResult struct {
	err      error
	panicked bool
	panicVal any
}

// eachPage runs the page fetcher in the background and calls fn with every page on the
// caller's goroutine, as EachListItem documents.
func (p *ListPager) eachPage(ctx context.Context, options metav1.ListOptions, fn func(page runtime.Object) error) error {
	if p.PageBufferSize < 0 {
		return fmt.Errorf("ListPager.PageBufferSize must be >= 0, got %d", p.PageBufferSize)
	}
	if p.PageFn == nil {
		return errNilPageFn
	}

	fetchCtx, cancel := context.WithCancel(ctx)
	pages := make(chan runtime.Object, p.PageBufferSize)
	done := make(chan fetchResult, 1)
	go func() {
		var res fetchResult
		defer func() {
			if r := recover(); r != nil {
				res = fetchResult{panicked: true, panicVal: r}
			}
			close(pages)
			done <- res
		}()
		res.err = p.fetchPages(fetchCtx, options, func(page runtime.Object) error {
			select {
			case pages <- page:
				return nil
			case <-fetchCtx.Done():
				return fetchCtx.Err()
			}
		})
	}()

	// stop ends the fetcher and waits for it; it runs on every way out, including a panic in fn.
	var res fetchResult
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		for range pages {
		}
		res = <-done
	}
	defer func() {
		stop()
		if res.panicked {
			panic(res.panicVal)
		}
	}()

	for page := range pages {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	stop() // a panic in the fetcher is re-raised by the deferred function
	return res.err
}

// fetchPages requests the pages one after another and hands each to deliver, which blocks
// while the buffer is full. It stops at the last page, at the first error, or when ctx ends.
func (p *ListPager) fetchPages(ctx context.Context, options metav1.ListOptions, deliver func(page runtime.Object) error) error {
	if options.Limit == 0 {
		options.Limit = p.PageSize
	}
	requested := options
	handedOut := false // whether any page delivered so far had items
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := p.PageFn(ctx, options)
		if err != nil {
			if handedOut || !p.fallBackToFullList(err, options) {
				return err
			}
			page, err = p.PageFn(ctx, fullListOptions(requested))
			if err != nil {
				return err
			}
			if _, err := listAccessor(page); err != nil {
				return err
			}
			return deliver(page)
		}
		m, err := listAccessor(page)
		if err != nil {
			return err
		}
		if !handedOut && meta.LenList(page) > 0 {
			handedOut = true
		}
		if err := deliver(page); err != nil {
			return err
		}
		next := m.GetContinue()
		if next == "" {
			return nil
		}
		options = continueOptions(options, next)
	}
}
