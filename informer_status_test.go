package cache

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/internal/features"
	fcache "github.com/kcache/cache/testing"
)

// statusOf returns inf's entry of InformerStatuses, failing the test if there is none.
func statusOf(t *testing.T, inf *sharedIndexInformer) InformerStatus {
	t.Helper()
	for _, st := range InformerStatuses() {
		if st.Name == inf.status.name {
			return st
		}
	}
	t.Fatalf("informer %q not in InformerStatuses", inf.status.name)
	return InformerStatus{}
}

// handlerOf returns the status of the handler called name.
func handlerOf(t *testing.T, st InformerStatus, name string) HandlerStatus {
	t.Helper()
	for _, h := range st.Handlers {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no handler %q in %+v", name, st.Handlers)
	return HandlerStatus{}
}

// namedHandler is a handler that blocks in OnAdd until gate is closed, if gate is set.
type namedHandler struct {
	gate chan struct{}
}

func (h *namedHandler) OnAdd(interface{}, bool) {
	if h.gate != nil {
		<-h.gate
	}
}
func (h *namedHandler) OnUpdate(_, _ interface{}) {}
func (h *namedHandler) OnDelete(interface{})      {}

const stalledName = "github.com/kcache/cache.namedHandler"

// TestInformerStatusesStalledHandlerLag: a handler stuck in a call shows its backlog and a lag
// that grows with the time its oldest notification waits; the other handler is unaffected.
func TestInformerStatusesStalledHandlerLag(t *testing.T) {
	EnableInformerTiming()
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := infTestNewInformer(src, 0)
		stalled := &namedHandler{gate: make(chan struct{})}
		free := &namedHandler{}
		if _, err := inf.AddEventHandler(stalled); err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandler(free); err != nil {
			t.Fatal(err)
		}
		if got := InformerStatuses(); len(got) != 0 {
			for _, st := range got {
				if st.Name == inf.status.name {
					t.Fatalf("informer listed before Run: %+v", st)
				}
			}
		}
		start := time.Now()
		runInBubble(t, inf)
		t.Cleanup(func() { close(stalled.gate) })
		synctest.Wait()
		st := statusOf(t, inf)
		if !st.Synced || st.Objects != 1 || st.NotSyncedReason != "" || st.Lists != 1 || !st.DefaultName ||
			st.LastResourceVersionSeen != "1" || st.LastResourceVersionProcessed != "1" {
			t.Fatalf("after the initial list: %+v", st)
		}
		if st.Type != "*v1.Pod" || !strings.HasPrefix(st.Name, "v1.Pod") || st.StartedAt != start {
			t.Fatalf("identity: name %q type %q started %v", st.Name, st.Type, st.StartedAt)
		}

		for i := range 3 {
			src.Add(infTestPod("ns", fmt.Sprintf("p%d", i), ""))
		}
		synctest.Wait()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		st = statusOf(t, inf)
		h := handlerOf(t, st, stalledName)
		if h.Pending != 3 || h.Lag != 5*time.Second || h.Processed != 0 {
			t.Fatalf("stalled handler after 5s: %+v", h)
		}
		time.Sleep(7 * time.Second)
		synctest.Wait()
		h = handlerOf(t, statusOf(t, inf), stalledName)
		if h.Lag != 12*time.Second {
			t.Fatalf("stalled handler lag after 12s = %v, want 12s", h.Lag)
		}
		f := handlerOf(t, statusOf(t, inf), stalledName+"#2")
		if f.Pending != 0 || f.Lag != 0 || f.Processed != 4 || f.HandlerTime.Count == 0 || f.HandlerTime.Count > 4 || !f.Synced {
			t.Fatalf("free handler: %+v", f)
		}
		if st.EventsIn != 4 {
			t.Fatalf("EventsIn = %d, want 4", st.EventsIn)
		}
	})
}

func TestInformerStatusesGoneAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf := infTestNewInformer(infTestSource("a"), 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			inf.RunWithContext(ctx)
		}()
		synctest.Wait()
		statusOf(t, inf)
		cancel()
		<-done
		for _, st := range InformerStatuses() {
			if st.Name == inf.status.name {
				t.Fatalf("stopped informer still listed: %+v", st)
			}
		}
		if _, _, err := InformerKeys(inf.status.name, "", 10); err == nil {
			t.Fatal("InformerKeys of a stopped informer: no error")
		}
	})
}

func TestInformerKeysPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("c", "a", "e", "b", "d")
		inf := infTestNewInformer(src, 0)
		runInBubble(t, inf)
		synctest.Wait()
		name := inf.status.name
		var got []string
		after := ""
		for {
			page, total, err := InformerKeys(name, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if total != 5 {
				t.Fatalf("total = %d", total)
			}
			for _, kv := range page {
				got = append(got, kv.Key+"@"+kv.ResourceVersion)
			}
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].Key
		}
		if want := "ns/a@2 ns/b@4 ns/c@1 ns/d@5 ns/e@3"; strings.Join(got, " ") != want {
			t.Fatalf("keys = %q, want %q", strings.Join(got, " "), want)
		}
		obj, ok, err := InformerObject(name, "ns/b")
		if err != nil || !ok || obj.(*v1.Pod).Name != "b" {
			t.Fatalf("InformerObject = %v, %v, %v", obj, ok, err)
		}
		if _, _, err := InformerObject("no such informer", "ns/b"); err == nil {
			t.Fatal("unknown informer: no error")
		}
	})
}

func TestDefaultInformerNames(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	a := NewSharedIndexInformerWithOptions(infTestSource(), &v1.Pod{}, SharedIndexInformerOptions{Identifier: (*InformerName)(nil).WithResource(pods)}).(*sharedIndexInformer)
	b := NewSharedIndexInformerWithOptions(infTestSource(), &v1.Pod{}, SharedIndexInformerOptions{Identifier: (*InformerName)(nil).WithResource(pods)}).(*sharedIndexInformer)
	c := NewSharedIndexInformerWithOptions(infTestSource(), &v1.Pod{}, SharedIndexInformerOptions{Identifier: (*InformerName)(nil).WithResource(deployments)}).(*sharedIndexInformer)
	name, err := NewInformerName("my-informers")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	d := NewSharedIndexInformerWithOptions(infTestSource(), &v1.Pod{}, SharedIndexInformerOptions{Identifier: name.WithResource(pods)}).(*sharedIndexInformer)
	got := []string{a.status.name, b.status.name, c.status.name, d.status.name}
	if want := []string{"pods", "pods#2", "deployments.apps", "my-informers"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
}

// podsID is the identity of an unnamed informer of pods, as the informers factory gives it.
var podsID = (*InformerName)(nil).WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"})

func newPodsInformer(lw ListerWatcher) *sharedIndexInformer {
	return newSharedIndexInformer(lw, &v1.Pod{}, SharedIndexInformerOptions{Identifier: podsID}, clock.RealClock{})
}

// TestInformerStatusesFailingList: a LIST the server refuses is explained with its status,
// since when it fails and the retry interval; the reason goes once the list succeeds.
func TestInformerStatusesFailingList(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, false)
	reflTestNoErrorBackoff(t)
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "bob" cannot list resource "pods" at the cluster scope`))
		src.SetListError(forbidden)
		inf := newPodsInformer(src)
		runInBubble(t, inf)
		synctest.Wait()
		failingSince := time.Now().Format(time.TimeOnly)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		st := statusOf(t, inf)
		want := regexp.MustCompile(`^LIST failing: 403 Forbidden for pods: pods is forbidden: User "bob" cannot list resource "pods" at the cluster scope since ` +
			failingSince + `, retrying every [0-9.]+m?s$`)
		if st.Synced || !want.MatchString(st.NotSyncedReason) {
			t.Fatalf("NotSyncedReason = %q, want it to match %s", st.NotSyncedReason, want)
		}
		if st.Name != "pods" && !strings.HasPrefix(st.Name, "pods#") {
			t.Fatalf("name %q, want the resource", st.Name)
		}
		src.SetListError(nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		st = statusOf(t, inf)
		if !st.Synced || st.NotSyncedReason != "" || st.Objects != 1 || st.Relists.Error == 0 {
			t.Fatalf("after the list succeeded: %+v", st)
		}
		if st.StartupLatency < 20*time.Second || st.SyncedAt.Sub(st.StartedAt) != st.StartupLatency {
			t.Fatalf("StartupLatency = %v (started %v, synced %v)", st.StartupLatency, st.StartedAt, st.SyncedAt)
		}
	})
}

// TestInformerStatusesExpiredRelist: a watch that ends with 410 counts an Expired relist and
// is the last watch error.
func TestInformerStatusesExpiredRelist(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, false)
	reflTestNoErrorBackoff(t)
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := newPodsInformer(src)
		runInBubble(t, inf)
		synctest.Wait()
		if st := statusOf(t, inf); st.Lists != 1 || st.Relists != (RelistCounts{}) || st.WatchRestarts != 0 {
			t.Fatalf("before the 410: %+v", st)
		}
		src.InjectError(fcache.ExpiredError())
		synctest.Wait()
		time.Sleep(time.Minute) // past any backoff
		synctest.Wait()
		st := statusOf(t, inf)
		if st.Lists != 2 || st.Relists != (RelistCounts{Expired: 1}) || st.WatchRestarts != 1 {
			t.Fatalf("after the 410: lists %d, relists %+v, watch restarts %d", st.Lists, st.Relists, st.WatchRestarts)
		}
		if !strings.Contains(st.LastWatchError, "too old") || st.LastWatchErrorAt.IsZero() {
			t.Fatalf("LastWatchError = %q at %v", st.LastWatchError, st.LastWatchErrorAt)
		}
		if !st.Synced || st.NotSyncedReason != "" {
			t.Fatalf("not synced after the relist: %+v", st)
		}
	})
}

// quietWatchList is a ListerWatcher whose watches never send anything: a streaming watch-list
// waits for its end bookmark until the Reflector gives up and lists.
type quietWatchList struct {
	src *fcache.FakeControllerSource
}

func (q quietWatchList) List(options metav1.ListOptions) (runtime.Object, error) {
	return q.src.List(options)
}

func (q quietWatchList) Watch(options metav1.ListOptions) (watch.Interface, error) {
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return watch.NewFake(), nil
	}
	return q.src.Watch(options)
}

// TestInformerStatusesWatchListFallback: a watch-list stream that stays quiet is explained
// while it waits, and the LIST that replaces it counts as a watch-list fallback relist.
func TestInformerStatusesWatchListFallback(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, true)
	reflTestNoErrorBackoff(t)
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := newPodsInformer(quietWatchList{src: src})
		runInBubble(t, inf)
		synctest.Wait()
		if st := statusOf(t, inf); st.NotSyncedReason != "initial watch-list in progress: 0 objects received in 0s" {
			t.Fatalf("at the start: %q", st.NotSyncedReason)
		}
		time.Sleep(8 * time.Second)
		synctest.Wait()
		st := statusOf(t, inf)
		if want := "watch-list stream quiet for 8s without its end bookmark (0 objects received): falling back to LIST at 10s"; st.NotSyncedReason != want {
			t.Fatalf("NotSyncedReason = %q, want %q", st.NotSyncedReason, want)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		st = statusOf(t, inf)
		if !st.Synced || st.Lists != 2 || st.Relists != (RelistCounts{WatchListFallback: 1}) {
			t.Fatalf("after the fallback: %+v", st)
		}
	})
}

// TestInformerStatusesListInProgress: a slow initial LIST says how long it has been running.
func TestInformerStatusesListInProgress(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, false)
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		src.SetRequestHook(fcache.DelayHook(clock.RealClock{}, 30*time.Second))
		inf := newPodsInformer(src)
		runInBubble(t, inf)
		time.Sleep(12 * time.Second)
		synctest.Wait()
		if st := statusOf(t, inf); st.NotSyncedReason != "initial list in progress for 12s" {
			t.Fatalf("NotSyncedReason = %q", st.NotSyncedReason)
		}
		src.SetRequestHook(nil)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if st := statusOf(t, inf); !st.Synced || st.StartupLatency != 30*time.Second {
			t.Fatalf("after the list: %+v", st)
		}
	})
}

// TestInformerStatusesCoalescedCount: a stalled handler with MaxPending has its backlog folded
// per object, and the folded notifications show in Coalesced and CoalescingEpisodes.
func TestInformerStatusesCoalescedCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := infTestNewInformer(src, 0)
		stalled := &namedHandler{gate: make(chan struct{})}
		if _, err := inf.AddEventHandlerWithOptions(stalled, HandlerOptions{MaxPending: ptrTo(1)}); err != nil {
			t.Fatal(err)
		}
		runInBubble(t, inf)
		t.Cleanup(func() { close(stalled.gate) })
		synctest.Wait()
		for i := range 5 {
			src.Modify(infTestPod("ns", "a", fmt.Sprint(i)))
			synctest.Wait()
		}
		h := handlerOf(t, statusOf(t, inf), stalledName)
		// One call in progress (the initial add), five updates of one object pending: folded
		// into one key once more than one waited.
		if h.Pending != 1 || h.CoalescingEpisodes != 1 {
			t.Fatalf("while stalled: %+v", h)
		}
		before := h.Coalesced
		stalled.gate <- struct{}{} // let the initial add return
		synctest.Wait()
		h = handlerOf(t, statusOf(t, inf), stalledName)
		if h.Coalesced <= before || h.Coalesced != 4 {
			t.Fatalf("coalesced %d after the backlog was folded (was %d), want 4", h.Coalesced, before)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// TestInformerStatusesEventsInCountsObjects: EventsIn counts each object of a list and each
// watch change once, and a resync or bookmark not at all.
func TestInformerStatusesEventsInCountsObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a", "b", "c")
		inf := infTestNewInformer(src, 0)
		runInBubble(t, inf)
		synctest.Wait()
		if st := statusOf(t, inf); !st.Synced || st.EventsIn != 3 {
			t.Fatalf("after listing 3 objects: synced %v, EventsIn %d, want 3", st.Synced, st.EventsIn)
		}
		src.Add(infTestPod("ns", "d", ""))
		src.Delete(infTestPod("ns", "a", ""))
		synctest.Wait()
		if st := statusOf(t, inf); st.EventsIn != 5 {
			t.Fatalf("after an add and a delete: EventsIn %d, want 5", st.EventsIn)
		}
	})
}

func TestChangesIn(t *testing.T) {
	pod := infTestPod("ns", "a", "")
	cases := []struct {
		name   string
		deltas []Delta
		want   int
	}{
		{"none", nil, 0},
		{"watch changes", []Delta{{Type: Added, Object: pod}, {Type: Updated, Object: pod}, {Type: Deleted, Object: pod}}, 3},
		{"a list of two", []Delta{{Type: ReplacedAll, Object: ReplacedAllInfo{Objects: []interface{}{pod, pod}}}}, 2},
		{"an empty list", []Delta{{Type: ReplacedAll, Object: ReplacedAllInfo{}}}, 0},
		{"per-object replace", []Delta{{Type: Replaced, Object: pod}}, 1},
		{"bookmark and resyncs", []Delta{{Type: Bookmark, Object: BookmarkInfo{}}, {Type: Sync, Object: pod}, {Type: SyncAll, Object: SyncAllInfo{}}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := changesIn(c.deltas); got != c.want {
				t.Fatalf("changesIn = %d, want %d", got, c.want)
			}
		})
	}
}

// TestInformerStatusesHandlerTimeSampling: a handler that waits for each notification has
// every call timed while they come at least 1ms apart; calls after a wait that follow a timed
// call within 1ms are counted with the next timed one.
func TestInformerStatusesHandlerTimeSampling(t *testing.T) {
	EnableInformerTiming()
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := infTestNewInformer(src, 0)
		if _, err := inf.AddEventHandler(&namedHandler{}); err != nil {
			t.Fatal(err)
		}
		runInBubble(t, inf)
		synctest.Wait()
		count := func() uint64 {
			return handlerOf(t, statusOf(t, inf), stalledName).HandlerTime.Count
		}
		base := count()
		for i := range 5 {
			time.Sleep(2 * time.Millisecond)
			src.Add(infTestPod("ns", fmt.Sprintf("slow%d", i), ""))
			synctest.Wait()
		}
		if got := count() - base; got != 5 {
			t.Fatalf("%d calls timed of 5 made 2ms apart", got)
		}
		time.Sleep(2 * time.Millisecond)
		for i := range 4 {
			src.Add(infTestPod("ns", fmt.Sprintf("fast%d", i), ""))
			synctest.Wait()
		}
		if got := count() - base; got != 6 {
			t.Fatalf("count %d after 4 calls within 1ms, want 6 (the first timed, 3 waiting)", got)
		}
		time.Sleep(2 * time.Millisecond)
		src.Add(infTestPod("ns", "late", ""))
		synctest.Wait()
		if got := count() - base; got != 10 {
			t.Fatalf("count %d after the next timed call, want 10", got)
		}
	})
}

// gatedLastAdd is a handler that signals entered when it starts its n-th add and then waits
// for gate.
type gatedLastAdd struct {
	n, seen int
	entered chan struct{}
	gate    chan struct{}
}

func (h *gatedLastAdd) OnAdd(interface{}, bool) {
	h.seen++
	if h.seen == h.n {
		close(h.entered)
		<-h.gate
	}
}
func (h *gatedLastAdd) OnUpdate(_, _ interface{}) {}
func (h *gatedLastAdd) OnDelete(interface{})      {}

// TestHandlerProcessedCountsInitialListWhenSynced: once a handler reports synced, its Processed
// count already includes every call of the initial list, even while its goroutine has not come
// back for the next notification (here held off by the listener's lock), so a status read right
// after a sync wait is exact.
func TestHandlerProcessedCountsInitialListWhenSynced(t *testing.T) {
	inf := infTestNewInformer(infTestSource("a", "b", "c"), 0)
	h := &gatedLastAdd{n: 3, entered: make(chan struct{}), gate: make(chan struct{})}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()

	<-h.entered
	l := reg.(*processorListener)
	l.mu.Lock() // the listener cannot start its next loop iteration until this is released
	close(h.gate)
	<-reg.HasSyncedChecker().Done()
	processed := l.stats.processed + l.stats.initialCalls.Load()
	l.mu.Unlock()
	if processed != 3 {
		t.Fatalf("Processed = %d once the handler synced, want 3 (every initial add)", processed)
	}
}

// TestHandlerLagResolution: notifications queued within lagResolution of a dated one share its
// date (their lag reads high by less than lagResolution); later ones get a date of their own.
func TestHandlerLagResolution(t *testing.T) {
	var s listenerStats
	ms := monoTime(time.Millisecond)
	queue := func(at monoTime) {
		s.markLocked(at, int(s.pushed-s.consumed), 0)
		s.pushed++
	}
	queue(1)               // n0 at 0
	queue(1 + ms/2)        // n1 at 0.5ms: dated with n0
	queue(1 + 3*ms)        // n2 at 3ms: dated on its own
	queue(1 + 3*ms + ms/2) // n3 at 3.5ms: dated with n2
	now := 1 + 10*ms
	for _, want := range []struct {
		pending int
		lag     time.Duration
	}{{4, 10 * time.Millisecond}, {3, 10 * time.Millisecond}, {2, 7 * time.Millisecond}, {1, 7 * time.Millisecond}} {
		if got := s.lagLocked(want.pending, now); got != want.lag {
			t.Fatalf("with %d pending, lag %v, want %v", want.pending, got, want.lag)
		}
		s.poppedLocked(true, 0)
	}
	if got := s.lagLocked(0, now); got != 0 {
		t.Fatalf("lag %v with nothing pending", got)
	}
}

// TestNotSyncedReasons: the reason an informer gives for not being synced, in each situation
// its Reflector reports, as the Reflector reports them (the informer-level tests above cover
// the watch-list fallback's countdown, a failing LIST and a LIST that sends nothing yet).
func TestNotSyncedReasons(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 10, 42, 7, 0, time.UTC))
	s := &reflectorStatus{clock: fc, resource: "pods"}
	reason := func() string { return s.snapshot(false).reason }
	expect := func(step, want string) {
		t.Helper()
		if got := reason(); got != want {
			t.Fatalf("%s: reason %q, want %q", step, got, want)
		}
	}
	expect("before Run", "not listed yet: the list has not started")

	s.listStarted(false)
	for range 3 {
		fc.Step(4 * time.Second)
		s.listReceivedItems(13_737, time.Time{}) // a page
	}
	expect("paged list", "initial list in progress: 41,211 objects received in 12s")
	s.listEnded(nil)
	expect("listed", "listed: waiting for the informer to process the list")
	if got := s.snapshot(true).reason; got != "" {
		t.Fatalf("synced informer gives a reason: %q", got)
	}

	s.watchFailed(apierrors.NewResourceExpired("too old resource version"))
	s.listStarted(false)
	fc.Step(1500 * time.Millisecond)
	expect("relist after a 410", "relist in progress for 1.5s")
	s.listEnded(nil)

	s.watchFailed(errors.New("connection reset by peer"))
	s.listStarted(true)
	fc.Step(2 * time.Second)
	s.listReceivedItems(5, fc.Now())
	expect("watch-list", "initial watch-list in progress: 5 objects received in 2s")
	s.watchListFellBack(errors.New("the server does not support streaming lists"))
	expect("watch-list failed", "watch-list failed at 10:42:22 (the server does not support streaming lists): falling back to LIST")

	s.listStarted(false)
	fc.Step(time.Second)
	s.listEnded(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC: access denied")))
	s.backingOff(800 * time.Millisecond)
	expect("failing LIST after the fallback",
		`LIST failing: 403 Forbidden for pods: pods is forbidden: RBAC: access denied since 10:42:23, retrying every 800ms (after the watch-list failed: the server does not support streaming lists)`)

	if got := s.snapshot(false).relists; got != (RelistCounts{Expired: 1, WatchListFallback: 1, Error: 1}) {
		t.Fatalf("relists %+v", got)
	}
}
