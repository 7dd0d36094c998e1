package cache

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// lwClientCtxKey marks the context a test passes through NewListWatch.
type lwClientCtxKey struct{}

// recordingPodClient has the shape of clientset.CoreV1().Pods(ns): it records the options and
// context value of every call and answers with list or listErr.
type recordingPodClient struct {
	calls   []string
	options []metav1.ListOptions
	list    *v1.PodList
	listErr error
}

func (c *recordingPodClient) record(verb string, ctx context.Context, o metav1.ListOptions) {
	mark, _ := ctx.Value(lwClientCtxKey{}).(string)
	c.calls = append(c.calls, verb+"("+mark+")")
	c.options = append(c.options, o)
}

func (c *recordingPodClient) List(ctx context.Context, o metav1.ListOptions) (*v1.PodList, error) {
	c.record("list", ctx, o)
	return c.list, c.listErr
}

func (c *recordingPodClient) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	c.record("watch", ctx, o)
	return watch.NewEmptyWatch(), nil
}

func TestNewListWatch(t *testing.T) {
	labelTweak := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	fieldTweak := func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=x," + o.LabelSelector }
	cases := []struct {
		name       string
		tweaks     []func(*metav1.ListOptions)
		wantLabel  string
		wantField  string
		wantLimit0 bool
	}{
		{name: "no tweak"},
		{name: "one tweak", tweaks: []func(*metav1.ListOptions){labelTweak}, wantLabel: "app=web"},
		{name: "tweaks run in order", tweaks: []func(*metav1.ListOptions){labelTweak, fieldTweak},
			wantLabel: "app=web", wantField: "metadata.name=x,app=web"},
		{name: "nil tweaks are skipped", tweaks: []func(*metav1.ListOptions){nil, labelTweak, nil}, wantLabel: "app=web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := &recordingPodClient{list: &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}}
			lw := NewListWatch(client, tc.tweaks...)
			ctx := context.WithValue(context.Background(), lwClientCtxKey{}, "ctx")
			in := metav1.ListOptions{ResourceVersion: "5", Limit: 500}

			obj, err := lw.ListWithContext(ctx, in)
			if err != nil || obj.(*v1.PodList).ResourceVersion != "7" {
				t.Fatalf("ListWithContext() = %v, %v", obj, err)
			}
			if _, err := lw.List(in); err != nil {
				t.Fatal(err)
			}
			if _, err := lw.WatchWithContext(ctx, in); err != nil {
				t.Fatal(err)
			}
			if _, err := lw.Watch(in); err != nil {
				t.Fatal(err)
			}
			wantCalls := []string{"list(ctx)", "list()", "watch(ctx)", "watch()"}
			if len(client.calls) != len(wantCalls) {
				t.Fatalf("calls %v, want %v", client.calls, wantCalls)
			}
			for i, o := range client.options {
				if client.calls[i] != wantCalls[i] {
					t.Errorf("call %d = %s, want %s", i, client.calls[i], wantCalls[i])
				}
				if o.LabelSelector != tc.wantLabel || o.FieldSelector != tc.wantField || o.ResourceVersion != "5" || o.Limit != 500 {
					t.Errorf("call %d got options %+v, want label %q field %q and the caller's RV and limit", i, o, tc.wantLabel, tc.wantField)
				}
			}
			if in.LabelSelector != "" {
				t.Error("the tweak changed the caller's options")
			}
		})
	}
}

func TestNewListWatchErrors(t *testing.T) {
	t.Run("list error drops the typed list", func(t *testing.T) {
		boom := errors.New("boom")
		client := &recordingPodClient{list: &v1.PodList{}, listErr: boom}
		obj, err := NewListWatch(client).ListWithContext(context.Background(), metav1.ListOptions{})
		if !errors.Is(err, boom) || obj != nil {
			t.Fatalf("ListWithContext() = %v, %v; want nil and boom", obj, err)
		}
	})
	t.Run("nil client", func(t *testing.T) {
		lw := NewListWatch[*v1.PodList](nil)
		if _, err := lw.List(metav1.ListOptions{}); !errors.Is(err, errNilClient) {
			t.Errorf("List() error = %v, want errNilClient", err)
		}
		if _, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{}); !errors.Is(err, errNilClient) {
			t.Errorf("WatchWithContext() error = %v, want errNilClient", err)
		}
	})
}
