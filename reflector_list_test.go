package cache

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/internal/features"
)

func TestReflectorResourceVersionRules(t *testing.T) {
	cases := []struct {
		name        string
		last        string
		unavailable bool
		wantList    string
		wantWatch   string
	}{
		{name: "nothing listed yet", last: "", wantList: "0", wantWatch: ""},
		{name: "after a list", last: "42", wantList: "42", wantWatch: "42"},
		{name: "last refused", last: "42", unavailable: true, wantList: "", wantWatch: ""},
		{name: "refused before anything listed", last: "", unavailable: true, wantList: "", wantWatch: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := reflTestNew(t, newReflTestSource("1"), newReflTestStore())
			r.setLastSyncResourceVersion(tc.last)
			r.setIsLastSyncResourceVersionUnavailable(tc.unavailable)
			if got := r.relistResourceVersion(); got != tc.wantList {
				t.Errorf("relistResourceVersion = %q, want %q", got, tc.wantList)
			}
			if got := r.rewatchResourceVersion(); got != tc.wantWatch {
				t.Errorf("rewatchResourceVersion = %q, want %q", got, tc.wantWatch)
			}
		})
	}
}

func TestReflectorListPageSize(t *testing.T) {
	cases := []struct {
		name             string
		disableChunking  bool
		pageSize         int64
		paginatedResult  bool
		lastRV           string
		wantLimitOfFirst int64
	}{
		{name: "first list pages by default", wantLimitOfFirst: 500},
		{name: "relist at an RV is not paged", lastRV: "42", wantLimitOfFirst: 0},
		{name: "relist at an RV pages after a paginated first list", lastRV: "42", paginatedResult: true, wantLimitOfFirst: 500},
		{name: "explicit page size wins", lastRV: "42", pageSize: 7, wantLimitOfFirst: 7},
		{name: "DisableChunking wins over everything", lastRV: "42", pageSize: 7, paginatedResult: true, disableChunking: true, wantLimitOfFirst: 0},
		{name: "DisableChunking on a first list", disableChunking: true, wantLimitOfFirst: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newReflTestSource("50")
			r, _ := reflTestNew(t, src, newReflTestStore())
			lw := src.lw()
			lw.DisableChunking = tc.disableChunking
			// Wrapped, as informers built with ToListWatcherWithWatchListSemantics are.
			r.chunkingDisabled = listWatchDisablesChunking(ToListWatcherWithWatchListSemantics(lw, nil))
			r.WatchListPageSize = tc.pageSize
			r.paginatedResult = tc.paginatedResult
			r.setLastSyncResourceVersion(tc.lastRV)
			if err := r.list(context.Background()); err != nil {
				t.Fatalf("list: %v", err)
			}
			opts := src.listOptions()
			if len(opts) != 1 || opts[0].Limit != tc.wantLimitOfFirst {
				t.Fatalf("list options %+v, want one list with limit %d", opts, tc.wantLimitOfFirst)
			}
		})
	}
}

func TestReflectorListRemembersPaginatedResult(t *testing.T) {
	cases := []struct {
		name    string
		firstRV string
		want    bool
	}{
		{name: "paged answer to a 0 list", firstRV: "", want: true},
		{name: "paged answer to a list at an RV", firstRV: "42", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newReflTestSource("50")
			page1 := reflTestPodList("50", reflTestPod("a", "1"))
			page1.Continue = "more"
			src.lists = []reflTestListResult{{obj: page1}, {obj: reflTestPodList("50", reflTestPod("b", "2"))}}
			store := newReflTestStore()
			r, _ := reflTestNew(t, src, store)
			r.WatchListPageSize = 1
			r.setLastSyncResourceVersion(tc.firstRV)
			if err := r.list(context.Background()); err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := store.keys(); strings.Join(got, ",") != "ns/a,ns/b" {
				t.Fatalf("store keys %v, want both pages", got)
			}
			if r.paginatedResult != tc.want {
				t.Fatalf("paginatedResult = %v, want %v", r.paginatedResult, tc.want)
			}
		})
	}
}

func TestReflectorListErrors(t *testing.T) {
	tooLarge := apierrors.NewTimeoutError("Too large resource version", 1)
	tooLarge.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	table := &unstructured.UnstructuredList{Object: map[string]interface{}{"apiVersion": "meta.k8s.io/v1", "kind": "Table"}}
	cases := []struct {
		name         string
		results      []reflTestListResult
		wantListRVs  []string
		wantErr      string // substring; "" means success
		wantReplaced bool
	}{
		{name: "expired retries at once from the newest RV",
			results:     []reflTestListResult{{err: apierrors.NewResourceExpired("old")}, {obj: reflTestPodList("60", reflTestPod("a", "1"))}},
			wantListRVs: []string{"42", ""}, wantReplaced: true},
		{name: "gone retries at once",
			results:     []reflTestListResult{{err: reflTestGone()}, {obj: reflTestPodList("60")}},
			wantListRVs: []string{"42", ""}, wantReplaced: true},
		{name: "too large retries at once",
			results:     []reflTestListResult{{err: tooLarge}, {obj: reflTestPodList("60")}},
			wantListRVs: []string{"42", ""}, wantReplaced: true},
		{name: "other errors are returned",
			results:     []reflTestListResult{{err: apierrors.NewServiceUnavailable("down")}},
			wantListRVs: []string{"42"}, wantErr: "failed to list *v1.Pod: down"},
		{name: "a retry that fails is returned",
			results:     []reflTestListResult{{err: apierrors.NewResourceExpired("old")}, {err: errors.New("still bad")}},
			wantListRVs: []string{"42", ""}, wantErr: "still bad"},
		{name: "not a list",
			results:     []reflTestListResult{{obj: reflTestPod("a", "1")}},
			wantListRVs: []string{"42"}, wantErr: "*v1.Pod"},
		{name: "nil list",
			results:     []reflTestListResult{{}},
			wantListRVs: []string{"42"}, wantErr: "nil"},
		{name: "server-side table",
			results:     []reflTestListResult{{obj: table}},
			wantListRVs: []string{"42"}, wantErr: "unsupported list gvk"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newReflTestSource("50")
			src.lists = tc.results
			store := newReflTestStore()
			r, _ := reflTestNew(t, src, store)
			r.setLastSyncResourceVersion("42")
			err := r.list(context.Background())
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("list error %v, want %q", err, tc.wantErr)
			}
			var rvs []string
			for _, o := range src.listOptions() {
				rvs = append(rvs, o.ResourceVersion)
			}
			if strings.Join(rvs, ",") != strings.Join(tc.wantListRVs, ",") {
				t.Fatalf("listed at %q, want %q", rvs, tc.wantListRVs)
			}
			if replaced := len(store.takeOps()) > 0; replaced != tc.wantReplaced {
				t.Fatalf("store replaced: %v, want %v", replaced, tc.wantReplaced)
			}
			if tc.wantReplaced {
				if got := r.LastSyncResourceVersion(); got != "60" {
					t.Fatalf("LastSyncResourceVersion %q, want 60", got)
				}
				if r.isLastSyncResourceVersionUnavailable {
					t.Fatalf("the RV is still marked unavailable after a successful list")
				}
			} else if got := r.LastSyncResourceVersion(); got != "42" {
				t.Fatalf("LastSyncResourceVersion %q after a failed list, want it unchanged (42)", got)
			}
		})
	}
}

func TestReflectorListCancelled(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, false)
	ctx, cancel := context.WithCancel(context.Background())
	store := newReflTestStore()
	lw := &ListWatch{
		ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			cancel()
			return reflTestPodList("5", reflTestPod("a", "1")), nil
		},
		WatchFuncWithContext: newReflTestSource("").watch,
	}
	r := NewReflectorWithOptions(lw, &v1.Pod{}, store, ReflectorOptions{})
	if err := r.ListAndWatchWithContext(ctx); err != nil {
		t.Fatalf("ListAndWatch after cancel = %v, want nil", err)
	}
	if ops := store.takeOps(); len(ops) != 0 {
		t.Fatalf("store got %v after cancel, want nothing", ops)
	}
}

func TestReflectorListerPanicPropagates(t *testing.T) {
	src := newReflTestSource("1")
	src.panicOnList = "lister exploded"
	r, _ := reflTestNew(t, src, newReflTestStore())
	defer func() {
		if got := recover(); got != "lister exploded" {
			t.Fatalf("recovered %v, want the lister's panic value", got)
		}
	}()
	_ = r.ListAndWatchWithContext(context.Background())
	t.Fatalf("ListAndWatch returned, want the lister's panic")
}

func TestReflectorRunBacksOffBetweenRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newReflTestSource("1")
		for range 3 {
			src.lists = append(src.lists, reflTestListResult{err: errors.New("down")})
		}
		r, c := reflTestNew(t, src, newReflTestStore())
		handled := make(chan error, 10)
		r.watchErrorHandler = func(_ context.Context, _ *Reflector, err error) { handled <- err }
		stop := reflTestRun(t, r.RunWithContext)
		defer stop()
		synctest.Wait()
		if n := len(src.listOptions()); n != 1 {
			t.Fatalf("%d lists at start, want 1", n)
		}
		// The first delay is within [800ms, 1.6s); the second within [1.6s, 3.2s).
		reflTestStep(c, 799*time.Millisecond)
		if n := len(src.listOptions()); n != 1 {
			t.Fatalf("%d lists before 800ms, want 1", n)
		}
		reflTestStep(c, 801*time.Millisecond)
		if n := len(src.listOptions()); n != 2 {
			t.Fatalf("%d lists after 1.6s, want 2", n)
		}
		reflTestStep(c, 1599*time.Millisecond)
		if n := len(src.listOptions()); n != 2 {
			t.Fatalf("%d lists 1.6s after the second failure, want still 2 (the delay doubled)", n)
		}
		reflTestStep(c, 1601*time.Millisecond)
		if n := len(src.listOptions()); n != 3 {
			t.Fatalf("%d lists after the doubled delay, want 3", n)
		}
		if len(handled) != 3 {
			t.Fatalf("watch error handler called %d times, want once per failed list (3)", len(handled))
		}
		if err := <-handled; !strings.Contains(err.Error(), "down") {
			t.Fatalf("watch error handler got %v, want the list failure", err)
		}
	})
}
