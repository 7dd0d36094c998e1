package testing_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache/pager"
	fcache "github.com/kcache/cache/testing"
)

// TestPagerOverSource drives kcache's pager against the source: the pages join into one
// consistent list even while objects change between pages, and an expired continue token
// makes the pager fall back to one full list.
func TestPagerOverSource(t *testing.T) {
	const n = 1234
	cases := []struct {
		name string
		// onRequest runs as the hook of request i (1-based).
		onRequest  func(s *fcache.FakeControllerSource, i int)
		wantItems  int
		wantListRV string
		wantLimits []int64
		wantRVs    []string // ResourceVersion of each request
	}{
		{
			name: "a stable list", wantItems: n, wantListRV: itoa(n),
			wantLimits: []int64{500, 500, 500}, wantRVs: []string{"", "", ""},
		},
		{
			name: "changes between pages do not show", wantItems: n, wantListRV: itoa(n),
			onRequest: func(s *fcache.FakeControllerSource, i int) {
				if i == 2 {
					s.Add(cm("zzz-late"))
					s.Delete(cm(name(1000)))
				}
			},
			wantLimits: []int64{500, 500, 500}, wantRVs: []string{"", "", ""},
		},
		{
			name: "compaction between pages falls back to a full list", wantItems: n + 1, wantListRV: itoa(n + 1),
			onRequest: func(s *fcache.FakeControllerSource, i int) {
				if i == 3 {
					s.Add(cm("zzz-late"))
					s.Compact(s.ResourceVersion())
				}
			},
			wantLimits: []int64{500, 500, 500, 0}, wantRVs: []string{"", "", "", ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
			for i := range n {
				s.Add(cm(name(i)))
			}
			var mu sync.Mutex
			calls := 0
			s.SetRequestHook(func(context.Context, string, metav1.ListOptions) error {
				mu.Lock()
				calls++
				i := calls
				mu.Unlock()
				if tc.onRequest != nil {
					tc.onRequest(s, i)
				}
				return nil
			})
			p := pager.New(s.ListWithContext)
			obj, paginated, err := p.List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !paginated {
				t.Fatal("the result was not paginated")
			}
			items, _ := meta.ExtractList(obj)
			if len(items) != tc.wantItems {
				t.Fatalf("got %d items, want %d", len(items), tc.wantItems)
			}
			if got := listRV(t, obj); got != tc.wantListRV {
				t.Fatalf("list resourceVersion %s, want %s", got, tc.wantListRV)
			}
			var limits []int64
			var rvs []string
			for _, r := range s.Requests() {
				limits = append(limits, r.Options.Limit)
				rvs = append(rvs, r.Options.ResourceVersion)
			}
			if !slices.Equal(limits, tc.wantLimits) || !slices.Equal(rvs, tc.wantRVs) {
				t.Fatalf("requests had limits %v and versions %q, want %v and %q", limits, rvs, tc.wantLimits, tc.wantRVs)
			}
		})
	}
}

// TestPagerEachListItemOverSource walks a large list item by item through the pager.
func TestPagerEachListItemOverSource(t *testing.T) {
	s := fcache.NewFakeControllerSource()
	for i := range 1001 {
		s.Add(cm(name(i)))
	}
	p := pager.New(s.ListWithContext)
	p.PageSize = 100
	var got []string
	err := p.EachListItem(context.Background(), metav1.ListOptions{ResourceVersion: "1001", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, func(obj runtime.Object) error {
		got = append(got, obj.(*v1.ConfigMap).Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1001 || !slices.IsSorted(got) || len(s.Requests()) != 11 {
		t.Fatalf("got %d sorted=%v items in %d requests, want 1001 sorted in 11", len(got), slices.IsSorted(got), len(s.Requests()))
	}
}

func name(i int) string { return fmt.Sprintf("cm-%05d", i) }

// TestConcurrentUse has writers, listers and watchers run at once (run it with -race). Every
// watch must see strictly increasing versions, and replaying a watch from version 0's state
// must rebuild exactly what the source lists at the end.
func TestConcurrentUse(t *testing.T) {
	s := fcache.NewFakeControllerSource()
	const writers, perWriter = 4, 200
	var wg sync.WaitGroup
	watches := make([]watch.Interface, 3)
	for i := range watches {
		w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		watches[i] = w
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				obj := cm(fmt.Sprintf("w%d-%d", w, i%20))
				switch i % 3 {
				case 0:
					s.Add(obj)
				case 1:
					s.Modify(obj)
				default:
					s.Delete(obj)
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := s.List(metav1.ListOptions{Limit: 7}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	states := make([]map[string]string, len(watches))
	var readers sync.WaitGroup
	for i, w := range watches {
		readers.Add(1)
		go func() {
			defer readers.Done()
			state := map[string]string{}
			last := 0
			for ev := range w.ResultChan() {
				m, _ := meta.Accessor(ev.Object)
				rv := atoi(m.GetResourceVersion())
				if rv <= last {
					t.Errorf("watch %d: version %d after %d", i, rv, last)
				}
				last = rv
				if ev.Type == watch.Deleted {
					delete(state, m.GetName())
				} else {
					state[m.GetName()] = m.GetResourceVersion()
				}
			}
			states[i] = state
		}()
	}
	wg.Wait()
	final := mustList(t, s, metav1.ListOptions{})
	s.Shutdown() // the watches end once they have delivered everything
	readers.Wait()
	for _, w := range watches {
		w.Stop()
	}
	want := map[string]string{}
	items, _ := meta.ExtractList(final)
	for _, it := range items {
		m, _ := meta.Accessor(it)
		want[m.GetName()] = m.GetResourceVersion()
	}
	for i, st := range states {
		if len(st) != len(want) {
			t.Fatalf("watch %d rebuilt %d objects, the source lists %d", i, len(st), len(want))
		}
		for k, v := range want {
			if st[k] != v {
				t.Fatalf("watch %d has %s@%s, the source lists %s@%s", i, k, st[k], k, v)
			}
		}
	}
}
