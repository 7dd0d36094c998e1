package cache

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/internal/features"
	fcache "github.com/kcache/cache/testing"
)

// reflTestScenario is a reflector filling a real Store from the fake API source, both on one
// fake clock, inside a synctest bubble.
type reflTestScenario struct {
	t     *testing.T
	clk   *clocktesting.FakeClock
	src   *fcache.FakeControllerSource
	store Store
	r     *Reflector
	// checks counts the lists the test itself sent to the source.
	checks int
}

func newReflTestScenario(t *testing.T, watchList bool, pods int, opts ...func(*fcache.Options)) *reflTestScenario {
	features.SetForTesting(t, features.WatchListClient, watchList)
	reflTestNoErrorBackoff(t)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	o := fcache.Options{Clock: clk, NewListFunc: func() runtime.Object { return &v1.PodList{} }}
	for _, f := range opts {
		f(&o)
	}
	src := fcache.New(o)
	for i := range pods {
		src.Add(reflTestPod(fmt.Sprintf("pod-%d", i), ""))
	}
	store := NewStore(MetaNamespaceKeyFunc)
	r := NewReflectorWithOptions(src, &v1.Pod{}, store, ReflectorOptions{Name: "scenario", Clock: clk})
	r.watchErrorHandler = func(context.Context, *Reflector, error) {}
	return &reflTestScenario{t: t, clk: clk, src: src, store: store, r: r}
}

// state returns name → resource version of the objects in the source.
func (s *reflTestScenario) sourceState() map[string]string {
	s.t.Helper()
	s.checks++
	list, err := s.src.List(metav1.ListOptions{})
	if err != nil {
		s.t.Fatalf("source list: %v", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		s.t.Fatalf("source list: %v", err)
	}
	out := map[string]string{}
	for _, o := range items {
		m, _ := meta.Accessor(o)
		out[m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
	}
	return out
}

func (s *reflTestScenario) storeState() map[string]string {
	out := map[string]string{}
	for _, o := range s.store.List() {
		m, _ := meta.Accessor(o)
		out[m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
	}
	return out
}

// converge steps the clock a second at a time (at most two minutes) until the store equals
// the source, and fails otherwise.
func (s *reflTestScenario) converge() {
	s.t.Helper()
	for range 120 {
		synctest.Wait()
		if maps.Equal(s.storeState(), s.sourceState()) {
			return
		}
		s.clk.Step(time.Second)
	}
	s.t.Fatalf("store %v never matched source %v", s.storeState(), s.sourceState())
}

// fills counts the requests that filled the store from scratch: LISTs and streaming watch-lists.
func (s *reflTestScenario) fills() int {
	n := -s.checks
	for _, req := range s.src.Requests() {
		if req.Verb == fcache.VerbList || req.Options.SendInitialEvents != nil {
			n++
		}
	}
	return n
}

// change modifies pod-0, deletes pod-1 and adds a new pod.
func (s *reflTestScenario) change(tag string) {
	p := reflTestPod("pod-0", "")
	p.Labels = map[string]string{"tag": tag}
	s.src.Modify(p)
	s.src.Delete(reflTestPod("pod-1", ""))
	s.src.Add(reflTestPod("new-"+tag, ""))
}

func reflTestWatchEvent(typ string, obj runtime.Object) watch.Event {
	return watch.Event{Type: watch.EventType(typ), Object: obj}
}

func TestReflectorScenariosAgainstFakeSource(t *testing.T) {
	cases := []struct {
		name string
		// fault runs once the reflector is synced and watching; the test then changes the
		// source and waits for the store to match it.
		fault func(s *reflTestScenario)
		// relist says whether recovery fills the store from scratch again.
		relist bool
		// maxInternal is the reflector's MaxInternalErrorRetryDuration.
		maxInternal time.Duration
	}{
		{name: "watch closed mid-stream resumes", fault: func(s *reflTestScenario) {
			s.src.CloseWatches()
		}},
		{name: "410 on the resumed watch relists", relist: true, fault: func(s *reflTestScenario) {
			s.src.FailWatches(1, fcache.ExpiredError())
			s.src.CloseWatches()
		}},
		{name: "410 in the stream relists", relist: true, fault: func(s *reflTestScenario) {
			s.src.InjectError(fcache.ExpiredError())
		}},
		{name: "compaction while disconnected relists", relist: true, fault: func(s *reflTestScenario) {
			s.src.FailWatches(1, fcache.ConnectionRefusedError())
			s.src.CloseWatches()
			synctest.Wait() // backing off
			s.change("before-compaction")
			s.src.Compact(s.src.ResourceVersion())
		}},
		{name: "429 on the watch backs off and resumes", fault: func(s *reflTestScenario) {
			s.src.FailWatches(3, fcache.TooManyRequestsError(1))
			s.src.CloseWatches()
		}},
		{name: "429 in the stream backs off and resumes", fault: func(s *reflTestScenario) {
			s.src.InjectError(fcache.TooManyRequestsError(1))
		}},
		{name: "connection refused backs off and resumes", fault: func(s *reflTestScenario) {
			s.src.FailWatches(3, fcache.ConnectionRefusedError())
			s.src.CloseWatches()
		}},
		{name: "500 in the stream relists", relist: true, fault: func(s *reflTestScenario) {
			s.src.InjectError(fcache.InternalError())
		}},
		{name: "500 in the stream with retries resumes", maxInternal: time.Minute, fault: func(s *reflTestScenario) {
			s.src.InjectError(fcache.InternalError())
		}},
		{name: "bad events are dropped", fault: func(s *reflTestScenario) {
			s.src.Inject(reflTestWatchEvent("ADDED", &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}))
			s.src.Inject(reflTestWatchEvent("ADDED", nil))
			s.src.Inject(reflTestWatchEvent("ERROR", reflTestPod("not-a-status", "")))
		}, relist: true},
	}
	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"list", false}, {"watchlist", true}} {
		for _, tc := range cases {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := newReflTestScenario(t, mode.watchList, 3)
					s.r.MaxInternalErrorRetryDuration = tc.maxInternal
					stop := reflTestRun(t, s.r.RunWithContext)
					defer stop()
					s.converge()
					if n := s.fills(); n != 1 {
						t.Fatalf("%d fills to sync, want 1", n)
					}
					if mode.watchList {
						if reqs := s.src.Requests(); reqs[0].Options.SendInitialEvents == nil {
							t.Fatalf("first request %+v, want a streaming watch-list", reqs[0])
						}
					}
					// Let the watch live a while: one that ends at once without events is a very
					// short watch, which relists.
					s.clk.Step(5 * time.Second)
					tc.fault(s)
					synctest.Wait()
					s.change("after")
					s.converge()
					want := 1
					if tc.relist {
						want = 2
					}
					if n := s.fills(); n != want {
						t.Fatalf("%d fills in all, want %d", n, want)
					}
					// Still watching: a later change arrives without any fault.
					s.change("later")
					s.converge()
				})
			})
		}
	}
}

func TestReflectorScenarioListFailuresBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newReflTestScenario(t, false, 2)
		s.src.FailLists(3, fcache.TooManyRequestsError(1))
		stop := reflTestRun(t, s.r.RunWithContext)
		defer stop()
		synctest.Wait()
		if n := s.fills(); n != 1 {
			t.Fatalf("%d lists before any backoff elapsed, want 1", n)
		}
		// The delays are within [0.8s, 1.6s), [1.6s, 3.2s) and [3.2s, 6.4s). (Comparing with
		// the source would take a scheduled failure: wait for the lists first.)
		for i := 0; i < 20 && s.fills() < 4; i++ {
			reflTestStep(s.clk, time.Second)
		}
		s.converge()
		if n := s.fills(); n != 4 {
			t.Fatalf("%d lists, want 3 failures and a success", n)
		}
	})
}

func TestReflectorScenarioWatchListUnsupportedFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newReflTestScenario(t, true, 3)
		s.src.SetWatchListSupported(false)
		stop := reflTestRun(t, s.r.RunWithContext)
		defer stop()
		s.converge()
		var verbs []string
		for _, req := range s.src.Requests() {
			verbs = append(verbs, req.Verb)
		}
		// watch-list refused, LIST, watch (the comparison's own lists come after).
		if got := verbs[:3]; !slices.Equal(got, []string{fcache.VerbWatch, fcache.VerbList, fcache.VerbWatch}) {
			t.Fatalf("requests %v, want a refused watch-list, a LIST, then a watch", verbs)
		}
		s.change("after")
		s.converge()
	})
}

func TestReflectorScenarioCompactionDuringPagedList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A server without a watch cache: "0" lists are paged too.
		s := newReflTestScenario(t, false, 5, func(o *fcache.Options) { o.PaginateResourceVersionZero = true })
		s.r.WatchListPageSize = 2
		var lists atomic.Int32
		s.src.SetRequestHook(func(_ context.Context, verb string, _ metav1.ListOptions) error {
			if verb == fcache.VerbList && lists.Add(1) == 2 {
				// Between the first and second page the server moves on and compacts the
				// version the continue token reads.
				s.change("mid-list")
				s.src.Compact(s.src.ResourceVersion())
			}
			return nil
		})
		stop := reflTestRun(t, s.r.RunWithContext)
		defer stop()
		synctest.Wait()
		s.src.SetRequestHook(nil)
		var limits []string
		for _, req := range s.src.Requests() {
			if req.Verb == fcache.VerbList {
				limits = append(limits, fmt.Sprintf("limit=%d continue=%v", req.Options.Limit, req.Options.Continue != ""))
			}
		}
		// First page, the expired continue, then one full list.
		want := []string{"limit=2 continue=false", "limit=2 continue=true", "limit=0 continue=false"}
		if !slices.Equal(limits, want) {
			t.Fatalf("lists %v, want %v", limits, want)
		}
		s.converge()
		s.change("after")
		s.converge()
	})
}
