package cache

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Lister lists the objects of one resource.
type Lister interface {
	// List returns a list object (one meta.ExtractList understands) holding the objects
	// selected by options, with the list's resource version in its ListMeta.
	List(options metav1.ListOptions) (runtime.Object, error)
}

// ListerWithContext is a Lister whose calls can be cancelled through ctx.
type ListerWithContext interface {
	ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
}

// Watcher watches the objects of one resource.
type Watcher interface {
	// Watch starts a watch from options.ResourceVersion.
	Watch(options metav1.ListOptions) (watch.Interface, error)
}

// WatcherWithContext is a Watcher whose calls can be cancelled through ctx.
type WatcherWithContext interface {
	WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// ListerWatcher lists and watches one resource: what a Reflector needs from an API server.
type ListerWatcher interface {
	Lister
	Watcher
}

// ListerWatcherWithContext is a ListerWatcher whose calls can be cancelled through a context.
type ListerWatcherWithContext interface {
	ListerWithContext
	WatcherWithContext
}

// ToListerWithContext returns l itself if it already has ListWithContext, and otherwise a
// wrapper whose ListWithContext calls l.List and ignores the context.
func ToListerWithContext(l Lister) ListerWithContext {
	if lc, ok := l.(ListerWithContext); ok {
		return lc
	}
	return listerIgnoringContext{l}
}

type listerIgnoringContext struct{ Lister }

func (l listerIgnoringContext) ListWithContext(_ context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return l.List(options)
}

// ToWatcherWithContext returns w itself if it already has WatchWithContext, and otherwise a
// wrapper whose WatchWithContext calls w.Watch and ignores the context.
func ToWatcherWithContext(w Watcher) WatcherWithContext {
	if wc, ok := w.(WatcherWithContext); ok {
		return wc
	}
	return watcherIgnoringContext{w}
}

type watcherIgnoringContext struct{ Watcher }

func (w watcherIgnoringContext) WatchWithContext(_ context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return w.Watch(options)
}

// ToListerWatcherWithContext returns lw itself if it already has the context methods, and
// otherwise a wrapper whose context methods call lw's and ignore the context.
func ToListerWatcherWithContext(lw ListerWatcher) ListerWatcherWithContext {
	if lwc, ok := lw.(ListerWatcherWithContext); ok {
		return lwc
	}
	return struct {
		ListerWithContext
		WatcherWithContext
	}{ToListerWithContext(lw), ToWatcherWithContext(lw)}
}

// ListFunc lists the objects of a resource.
type ListFunc func(options metav1.ListOptions) (runtime.Object, error)

// ListWithContextFunc lists the objects of a resource; ctx cancels the call.
type ListWithContextFunc func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)

// WatchFunc watches the objects of a resource.
type WatchFunc func(options metav1.ListOptions) (watch.Interface, error)

// WatchFuncWithContext watches the objects of a resource; ctx cancels the call. (The name does
// not follow ListWithContextFunc's pattern; client-go keeps it for compatibility, and so do we.)
type WatchFuncWithContext func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)

// errNoListFunc and errNoWatchFunc are returned by a ListWatch missing both flavours of a func.
var (
	errNoListFunc  = errors.New("cache: ListWatch has neither ListFunc nor ListWithContextFunc")
	errNoWatchFunc = errors.New("cache: ListWatch has neither WatchFunc nor WatchFuncWithContext")
)

// ListWatch is a ListerWatcher (with and without context) made of functions. Set at least one
// list and one watch function; each method prefers the function of its own flavour and falls
// back to the other. A ListWatch missing both functions of a kind returns an error from the
// corresponding methods (client-go panics with a nil-function call).
//
// To build one from any client, wrap its list and watch calls, for example with client-go's
// typed clients:
//
//	&cache.ListWatch{
//		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
//			return client.CoreV1().ConfigMaps(ns).List(ctx, o)
//		},
//		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
//			return client.CoreV1().ConfigMaps(ns).Watch(ctx, o)
//		},
//	}
type ListWatch struct {
	ListFunc  ListFunc
	WatchFunc WatchFunc
	// ListWithContextFunc is preferred by ListWithContext.
	ListWithContextFunc ListWithContextFunc
	// WatchFuncWithContext is preferred by WatchWithContext.
	WatchFuncWithContext WatchFuncWithContext
	// DisableChunking makes a Reflector list in one request instead of paginating. (client-go
	// declares this field but never reads it; kcache honours it.)
	DisableChunking bool
}

var (
	_ ListerWatcher            = &ListWatch{}
	_ ListerWatcherWithContext = &ListWatch{}
)

// List calls ListFunc, or else ListWithContextFunc with context.Background().
func (lw *ListWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	switch {
	case lw.ListFunc != nil:
		return lw.ListFunc(options)
	case lw.ListWithContextFunc != nil:
		return lw.ListWithContextFunc(context.Background(), options)
	}
	return nil, errNoListFunc
}

// ListWithContext calls ListWithContextFunc, or else ListFunc (without ctx).
func (lw *ListWatch) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	switch {
	case lw.ListWithContextFunc != nil:
		return lw.ListWithContextFunc(ctx, options)
	case lw.ListFunc != nil:
		return lw.ListFunc(options)
	}
	return nil, errNoListFunc
}

// Watch calls WatchFunc, or else WatchFuncWithContext with context.Background().
func (lw *ListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	switch {
	case lw.WatchFunc != nil:
		return lw.WatchFunc(options)
	case lw.WatchFuncWithContext != nil:
		return lw.WatchFuncWithContext(context.Background(), options)
	}
	return nil, errNoWatchFunc
}

// WatchWithContext calls WatchFuncWithContext, or else WatchFunc (without ctx).
func (lw *ListWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	switch {
	case lw.WatchFuncWithContext != nil:
		return lw.WatchFuncWithContext(ctx, options)
	case lw.WatchFunc != nil:
		return lw.WatchFunc(options)
	}
	return nil, errNoWatchFunc
}

// watchListSemanticsUnsupported is implemented by clients (such as client-go's fake clientsets)
// whose watches cannot serve a streaming watch-list.
type watchListSemanticsUnsupported interface {
	IsWatchListSemanticsUnSupported() bool
}

// doesClientNotSupportWatchListSemantics reports whether client says it cannot serve a
// streaming watch-list.
func doesClientNotSupportWatchListSemantics(client any) bool {
	c, ok := client.(watchListSemanticsUnsupported)
	return ok && c.IsWatchListSemanticsUnSupported()
}

// listWatchWithWatchListSemantics is a ListWatch that remembers whether its client supports
// streaming watch-lists.
type listWatchWithWatchListSemantics struct {
	*ListWatch
	unsupported bool
}

// IsWatchListSemanticsUnSupported reports whether the wrapped client cannot serve a streaming
// watch-list; the Reflector then lists instead.
func (lw *listWatchWithWatchListSemantics) IsWatchListSemanticsUnSupported() bool {
	return lw.unsupported
}

// ToListWatcherWithWatchListSemantics wraps lw so that the Reflector knows whether client
// supports streaming watch-lists: when client has an IsWatchListSemanticsUnSupported method that
// returns true (client-go's fake clientsets do), the Reflector skips the watch-list and lists.
func ToListWatcherWithWatchListSemantics(lw *ListWatch, client any) ListerWatcher {
	return &listWatchWithWatchListSemantics{ListWatch: lw, unsupported: doesClientNotSupportWatchListSemantics(client)}
}
