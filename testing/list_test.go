package testing_test

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	fcache "github.com/kcache/cache/testing"
)

func isTooLarge(err error) bool {
	return apierrors.IsTimeout(err) && apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

// TestListResourceVersions runs lists against seeded(): at version 3 it held a, b and c; at
// version 5 (now) it holds b and c.
func TestListResourceVersions(t *testing.T) {
	exact, notOlder := metav1.ResourceVersionMatchExact, metav1.ResourceVersionMatchNotOlderThan
	cases := []struct {
		name      string
		opts      metav1.ListOptions
		compact   int
		wantItems []string
		wantRV    string
		wantErr   func(error) bool
	}{
		{name: "unset reads the current state", opts: metav1.ListOptions{}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "0 reads the current state", opts: metav1.ListOptions{ResourceVersion: "0"}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "0 not older than", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: notOlder}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "exact reads the past", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: exact}, wantItems: []string{"a@1", "b@2", "c@3"}, wantRV: "3"},
		{name: "exact at the oldest retained version", compact: 3, opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: exact}, wantItems: []string{"a@1", "b@2", "c@3"}, wantRV: "3"},
		{name: "exact now", opts: metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: exact}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "not older than reads the current state", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: notOlder}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "legacy version without limit is not-older-than", opts: metav1.ListOptions{ResourceVersion: "3"}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "legacy version with limit is exact", opts: metav1.ListOptions{ResourceVersion: "3", Limit: 10}, wantItems: []string{"a@1", "b@2", "c@3"}, wantRV: "3"},
		{name: "exact compacted", compact: 4, opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: exact}, wantErr: apierrors.IsResourceExpired},
		{name: "not older than a compacted version is fine", compact: 4, opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: notOlder}, wantItems: []string{"b@4", "c@3"}, wantRV: "5"},
		{name: "future exact", opts: metav1.ListOptions{ResourceVersion: "6", ResourceVersionMatch: exact}, wantErr: isTooLarge},
		{name: "future not older than", opts: metav1.ListOptions{ResourceVersion: "6", ResourceVersionMatch: notOlder}, wantErr: isTooLarge},
		{name: "future legacy", opts: metav1.ListOptions{ResourceVersion: "99"}, wantErr: isTooLarge},
		{name: "match without version", opts: metav1.ListOptions{ResourceVersionMatch: notOlder}, wantErr: apierrors.IsInvalid},
		{name: "exact 0", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: exact}, wantErr: apierrors.IsInvalid},
		{name: "unknown match", opts: metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Newest"}, wantErr: apierrors.IsInvalid},
		{name: "sendInitialEvents on a list", opts: metav1.ListOptions{SendInitialEvents: ptr(true)}, wantErr: apierrors.IsInvalid},
		{name: "not a number", opts: metav1.ListOptions{ResourceVersion: "abc"}, wantErr: apierrors.IsBadRequest},
		{name: "negative", opts: metav1.ListOptions{ResourceVersion: "-1"}, wantErr: apierrors.IsBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := seeded()
			s.Compact(tc.compact)
			obj, err := s.List(tc.opts)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("List error = %v, want a matching error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if got := itemNames(t, obj); !slices.Equal(got, tc.wantItems) {
				t.Fatalf("items = %v, want %v", got, tc.wantItems)
			}
			if got := listRV(t, obj); got != tc.wantRV {
				t.Fatalf("list resourceVersion = %q, want %q", got, tc.wantRV)
			}
		})
	}
}

// page is one step of a paginated list: the options' Limit and selectors, what happens to the
// source before the request, and what the page holds.
type pageStep struct {
	before      func(s *fcache.FakeControllerSource)
	rawContinue string // overrides the continue token from the previous page
	items       []string
	rv          string
	remaining   *int64
	more        bool
	wantErr     func(error) bool
}

func TestListPagination(t *testing.T) {
	five := func() *fcache.FakeControllerSource {
		s := fcache.NewFakeControllerSource()
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			s.Add(cm(n, "even", itoa(int(n[0]-'a'+1)%2)))
		}
		return s
	}
	cases := []struct {
		name  string
		opts  metav1.ListOptions
		opt   fcache.Options
		steps []pageStep
	}{
		{
			name: "pages of two", opts: metav1.ListOptions{Limit: 2},
			steps: []pageStep{
				{items: []string{"a@1", "b@2"}, rv: "5", remaining: ptr(int64(3)), more: true},
				{items: []string{"c@3", "d@4"}, rv: "5", remaining: ptr(int64(1)), more: true},
				{items: []string{"e@5"}, rv: "5"},
			},
		},
		{
			name: "continue pages read the first page's version", opts: metav1.ListOptions{Limit: 2},
			steps: []pageStep{
				{items: []string{"a@1", "b@2"}, rv: "5", remaining: ptr(int64(3)), more: true},
				{
					before: func(s *fcache.FakeControllerSource) { s.Delete(cm("c")); s.Modify(cm("d")); s.Add(cm("f")) },
					items:  []string{"c@3", "d@4"}, rv: "5", remaining: ptr(int64(1)), more: true,
				},
				{items: []string{"e@5"}, rv: "5"},
			},
		},
		{
			name: "a compacted continue token is Expired, and its inconsistent token continues now", opts: metav1.ListOptions{Limit: 2},
			steps: []pageStep{
				{items: []string{"a@1", "b@2"}, rv: "5", remaining: ptr(int64(3)), more: true},
				{
					before:  func(s *fcache.FakeControllerSource) { s.Delete(cm("c")); s.Modify(cm("d")); s.Compact(7) },
					wantErr: apierrors.IsResourceExpired,
				},
				{items: []string{"d@7", "e@5"}, rv: "7"},
			},
		},
		{
			name: "selectors fill pages with matching objects and give no remaining count", opts: metav1.ListOptions{Limit: 1, LabelSelector: "even=0"},
			steps: []pageStep{
				{items: []string{"b@2"}, rv: "5", more: true},
				{items: []string{"d@4"}, rv: "5", more: true},
				{items: []string{}, rv: "5"}, // keys remained after d, none matched
			},
		},
		{
			name: "version 0 ignores the limit", opts: metav1.ListOptions{Limit: 2, ResourceVersion: "0"},
			steps: []pageStep{{items: []string{"a@1", "b@2", "c@3", "d@4", "e@5"}, rv: "5"}},
		},
		{
			name: "version 0 paginates without a watch cache", opts: metav1.ListOptions{Limit: 3, ResourceVersion: "0"},
			opt: fcache.Options{PaginateResourceVersionZero: true},
			steps: []pageStep{
				{items: []string{"a@1", "b@2", "c@3"}, rv: "5", remaining: ptr(int64(2)), more: true},
				{items: []string{"d@4", "e@5"}, rv: "5"},
			},
		},
		{
			name: "an exact version paginates in the past", opts: metav1.ListOptions{Limit: 2, ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			steps: []pageStep{
				{items: []string{"a@1", "b@2"}, rv: "3", remaining: ptr(int64(1)), more: true},
				{items: []string{"c@3"}, rv: "3"},
			},
		},
		{
			name: "a malformed continue token", opts: metav1.ListOptions{Limit: 2},
			steps: []pageStep{{rawContinue: "not a token", wantErr: apierrors.IsBadRequest}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := five()
			if tc.opt.PaginateResourceVersionZero {
				s = fcache.New(tc.opt)
				for _, n := range []string{"a", "b", "c", "d", "e"} {
					s.Add(cm(n))
				}
			}
			opts := tc.opts
			for i, step := range tc.steps {
				if step.before != nil {
					step.before(s)
				}
				if step.rawContinue != "" {
					opts.Continue = step.rawContinue
				}
				obj, err := s.List(opts)
				if step.wantErr != nil {
					if err == nil || !step.wantErr(err) {
						t.Fatalf("page %d: error %v, want a matching error", i, err)
					}
					status, ok := err.(apierrors.APIStatus)
					if ok && status.Status().Continue != "" {
						opts.Continue = status.Status().Continue
					}
					continue
				}
				if err != nil {
					t.Fatalf("page %d: %v", i, err)
				}
				lm, _ := meta.ListAccessor(obj)
				if got := itemNames(t, obj); !slices.Equal(got, step.items) {
					t.Fatalf("page %d items = %v, want %v", i, got, step.items)
				}
				if lm.GetResourceVersion() != step.rv {
					t.Fatalf("page %d resourceVersion = %q, want %q", i, lm.GetResourceVersion(), step.rv)
				}
				if (lm.GetContinue() != "") != step.more {
					t.Fatalf("page %d continue = %q, want more = %v", i, lm.GetContinue(), step.more)
				}
				gotRemaining := lm.GetRemainingItemCount()
				if (gotRemaining == nil) != (step.remaining == nil) || (gotRemaining != nil && *gotRemaining != *step.remaining) {
					t.Fatalf("page %d remainingItemCount = %v, want %v", i, derefOr(gotRemaining), derefOr(step.remaining))
				}
				// A client clears the resource version on continue pages, as the pager does.
				opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = lm.GetContinue(), "", ""
			}
		})
	}
}

func derefOr(p *int64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestListContinueWithResourceVersion(t *testing.T) {
	s := seeded()
	first := mustList(t, s, metav1.ListOptions{Limit: 1})
	lm, _ := meta.ListAccessor(first)
	cases := []struct {
		name    string
		rv      string
		wantErr bool
	}{
		{name: "empty", rv: ""},
		{name: "0", rv: "0"},
		{name: "a version", rv: "5", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.List(metav1.ListOptions{Limit: 1, Continue: lm.GetContinue(), ResourceVersion: tc.rv})
			if tc.wantErr != (err != nil) || (err != nil && !strings.Contains(err.Error(), "not allowed when using continue")) {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestListSelectors(t *testing.T) {
	byData := func(obj runtime.Object) fields.Set {
		c := obj.(*v1.ConfigMap)
		return fields.Set{"metadata.name": c.Name, "data.color": c.Data["color"]}
	}
	cases := []struct {
		name      string
		opts      metav1.ListOptions
		fieldsFn  func(runtime.Object) fields.Set
		wantItems []string
		wantErr   func(error) bool
	}{
		{name: "label equality", opts: metav1.ListOptions{LabelSelector: "app=x"}, wantItems: []string{"a@1", "c@3"}},
		{name: "label set", opts: metav1.ListOptions{LabelSelector: "app in (x,y),app!=x"}, wantItems: []string{"b@2"}},
		{name: "label existence", opts: metav1.ListOptions{LabelSelector: "!app"}, wantItems: []string{"d@4"}},
		{name: "field name", opts: metav1.ListOptions{FieldSelector: "metadata.name=b"}, wantItems: []string{"b@2"}},
		{name: "field namespace", opts: metav1.ListOptions{FieldSelector: "metadata.namespace=other"}, wantItems: []string{"d@4"}},
		{name: "both", opts: metav1.ListOptions{LabelSelector: "app=x", FieldSelector: "metadata.name!=a"}, wantItems: []string{"c@3"}},
		{name: "unsupported field", opts: metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}, wantErr: apierrors.IsBadRequest},
		{name: "malformed label selector", opts: metav1.ListOptions{LabelSelector: "app in (x"}, wantErr: apierrors.IsBadRequest},
		{name: "malformed field selector", opts: metav1.ListOptions{FieldSelector: "metadata.name"}, wantErr: apierrors.IsBadRequest},
		{name: "custom fields", fieldsFn: byData, opts: metav1.ListOptions{FieldSelector: "data.color=red"}, wantItems: []string{"c@3"}},
		{name: "custom fields skip validation", fieldsFn: byData, opts: metav1.ListOptions{FieldSelector: "spec.x=1"}, wantItems: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.New(fcache.Options{FieldsFunc: tc.fieldsFn})
			s.Add(cm("a", "app", "x"))
			s.Add(cm("b", "app", "y"))
			red := cm("c", "app", "x")
			red.Data = map[string]string{"color": "red"}
			s.Add(red)
			s.Add(inNS("other", cm("d")))
			obj, err := s.List(tc.opts)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("List error = %v, want a matching error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := itemNames(t, obj); !slices.Equal(got, tc.wantItems) {
				t.Fatalf("items = %v, want %v", got, tc.wantItems)
			}
		})
	}
}

func TestListObjectKinds(t *testing.T) {
	cases := []struct {
		name     string
		newList  func() runtime.Object
		wantType string
		wantErr  func(error) bool
	}{
		{name: "default", wantType: "*v1.List"},
		{name: "typed list", newList: func() runtime.Object { return &v1.ConfigMapList{} }, wantType: "*v1.ConfigMapList"},
		{name: "list of another type", newList: func() runtime.Object { return &v1.PodList{} }, wantErr: apierrors.IsInternalError},
		{name: "not a list", newList: func() runtime.Object { return &v1.ConfigMap{} }, wantErr: apierrors.IsInternalError},
		{name: "nil", newList: func() runtime.Object { return nil }, wantErr: apierrors.IsInternalError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.New(fcache.Options{NewListFunc: tc.newList})
			s.Add(cm("a"))
			obj, err := s.List(metav1.ListOptions{})
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("List error = %v, want a matching error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := typeOf(obj); got != tc.wantType {
				t.Fatalf("list type %s, want %s", got, tc.wantType)
			}
			if got := itemNames(t, obj); !slices.Equal(got, []string{"a@1"}) {
				t.Fatalf("items = %v", got)
			}
		})
	}
}
