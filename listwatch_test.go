package cache

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// lwTestCtxKey marks the context a ListWatch passes on.
type lwTestCtxKey struct{}

// lwTestFuncs returns the four funcs of a ListWatch; each records its name and the context
// value it saw in *calls.
func lwTestFuncs(calls *[]string) (ListFunc, ListWithContextFunc, WatchFunc, WatchFuncWithContext) {
	ctxMark := func(ctx context.Context) string {
		if v, ok := ctx.Value(lwTestCtxKey{}).(string); ok {
			return "(" + v + ")"
		}
		return "(no ctx value)"
	}
	return func(metav1.ListOptions) (runtime.Object, error) {
			*calls = append(*calls, "ListFunc")
			return &v1.PodList{}, nil
		}, func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			*calls = append(*calls, "ListWithContextFunc"+ctxMark(ctx))
			return &v1.PodList{}, nil
		}, func(metav1.ListOptions) (watch.Interface, error) {
			*calls = append(*calls, "WatchFunc")
			return watch.NewEmptyWatch(), nil
		}, func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			*calls = append(*calls, "WatchFuncWithContext"+ctxMark(ctx))
			return watch.NewEmptyWatch(), nil
		}
}

func TestListWatchPrecedence(t *testing.T) {
	cases := []struct {
		name                             string
		list, listCtx, watchF, watchFCtx bool
		want                             []string // calls for List, ListWithContext, Watch, WatchWithContext
	}{
		{name: "all four", list: true, listCtx: true, watchF: true, watchFCtx: true,
			want: []string{"ListFunc", "ListWithContextFunc(v)", "WatchFunc", "WatchFuncWithContext(v)"}},
		{name: "only plain funcs", list: true, watchF: true,
			want: []string{"ListFunc", "ListFunc", "WatchFunc", "WatchFunc"}},
		{name: "only context funcs", listCtx: true, watchFCtx: true,
			want: []string{"ListWithContextFunc(no ctx value)", "ListWithContextFunc(v)", "WatchFuncWithContext(no ctx value)", "WatchFuncWithContext(v)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			l, lc, w, wc := lwTestFuncs(&calls)
			lw := &ListWatch{}
			if tc.list {
				lw.ListFunc = l
			}
			if tc.listCtx {
				lw.ListWithContextFunc = lc
			}
			if tc.watchF {
				lw.WatchFunc = w
			}
			if tc.watchFCtx {
				lw.WatchFuncWithContext = wc
			}
			ctx := context.WithValue(context.Background(), lwTestCtxKey{}, "v")
			if _, err := lw.List(metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := lw.Watch(metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if len(calls) != 4 {
				t.Fatalf("calls %v", calls)
			}
			for i := range calls {
				if calls[i] != tc.want[i] {
					t.Fatalf("calls %v, want %v", calls, tc.want)
				}
			}
		})
	}
}

func TestListWatchWithoutFuncs(t *testing.T) {
	lw := &ListWatch{}
	ctx := context.Background()
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{name: "List", call: func() error { _, err := lw.List(metav1.ListOptions{}); return err }, want: errNoListFunc},
		{name: "ListWithContext", call: func() error { _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); return err }, want: errNoListFunc},
		{name: "Watch", call: func() error { _, err := lw.Watch(metav1.ListOptions{}); return err }, want: errNoWatchFunc},
		{name: "WatchWithContext", call: func() error { _, err := lw.WatchWithContext(ctx, metav1.ListOptions{}); return err }, want: errNoWatchFunc},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// lwTestPlain is a ListerWatcher without context methods.
type lwTestPlain struct{ calls *[]string }

func (p lwTestPlain) List(metav1.ListOptions) (runtime.Object, error) {
	*p.calls = append(*p.calls, "List")
	return &v1.PodList{}, nil
}

func (p lwTestPlain) Watch(metav1.ListOptions) (watch.Interface, error) {
	*p.calls = append(*p.calls, "Watch")
	return watch.NewEmptyWatch(), nil
}

func TestToWithContextConverters(t *testing.T) {
	var calls []string
	plain := lwTestPlain{&calls}
	ctx := context.Background()

	lwc := ToListerWatcherWithContext(plain)
	if _, err := lwc.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lwc.WatchWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ToListerWithContext(plain).ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ToWatcherWithContext(plain).WatchWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "List,Watch,List,Watch"; strings.Join(calls, ",") != want {
		t.Fatalf("calls %v, want %s", calls, want)
	}

	// Something that has the context methods already is returned as is.
	lw := &ListWatch{}
	if got := ToListerWatcherWithContext(lw); got != ListerWatcherWithContext(lw) {
		t.Fatalf("ToListerWatcherWithContext wrapped a ListWatch")
	}
	if got := ToListerWithContext(lw); got != ListerWithContext(lw) {
		t.Fatalf("ToListerWithContext wrapped a ListWatch")
	}
	if got := ToWatcherWithContext(lw); got != WatcherWithContext(lw) {
		t.Fatalf("ToWatcherWithContext wrapped a ListWatch")
	}
}

func TestToListWatcherWithWatchListSemantics(t *testing.T) {
	cases := []struct {
		name   string
		client any
		want   bool
	}{
		{name: "nil client", client: nil, want: false},
		{name: "client without the method", client: struct{}{}, want: false},
		{name: "client that supports watch-list", client: lwTestSemantics(false), want: false},
		{name: "client that does not", client: lwTestSemantics(true), want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			l, _, w, _ := lwTestFuncs(&calls)
			inner := &ListWatch{ListFunc: l, WatchFunc: w, DisableChunking: true}
			lw := ToListWatcherWithWatchListSemantics(inner, tc.client)
			if got := doesClientNotSupportWatchListSemantics(lw); got != tc.want {
				t.Fatalf("unsupported = %v, want %v", got, tc.want)
			}
			// The wrapper still lists and watches through the ListWatch, and keeps its
			// DisableChunking.
			if _, err := lw.List(metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := lw.Watch(metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if strings.Join(calls, ",") != "ListFunc,WatchFunc" {
				t.Fatalf("calls %v", calls)
			}
			if !listWatchDisablesChunking(lw) {
				t.Fatalf("DisableChunking lost by the wrapper")
			}
		})
	}
}

type lwTestSemantics bool

func (s lwTestSemantics) IsWatchListSemanticsUnSupported() bool { return bool(s) }
