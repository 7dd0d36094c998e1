package cache

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func TestReflectorListThenWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newReflTestSource("10")
		src.lists = []reflTestListResult{{obj: reflTestPodList("10", reflTestPod("a", "5"), reflTestPod("b", "7"))}}
		store := newReflTestStore()
		r, _ := reflTestNew(t, src, store)
		stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
		defer stop()
		synctest.Wait()

		if got, want := reflTestJoin(store.takeOps()), "replace 2@10"; got != want {
			t.Fatalf("after the list: ops %q, want %q", got, want)
		}
		if got := r.LastSyncResourceVersion(); got != "10" {
			t.Fatalf("LastSyncResourceVersion after the list = %q, want 10", got)
		}
		lists := src.listOptions()
		if len(lists) != 1 || lists[0].ResourceVersion != "0" || lists[0].Limit != 500 {
			t.Fatalf("list options %+v, want one list at RV 0 with limit 500", lists)
		}
		w := src.watchOptions()
		if len(w) != 1 || w[0].ResourceVersion != "10" || !w[0].AllowWatchBookmarks || w[0].TimeoutSeconds == nil {
			t.Fatalf("watch options %+v, want one watch from 10 with bookmarks and a timeout", w)
		}
		if s := *w[0].TimeoutSeconds; s < 300 || s > 600 {
			t.Fatalf("watch timeout %ds, want within [300, 600]", s)
		}

		fw := src.watcher(t, 0)
		fw.Add(reflTestPod("c", "11"))
		fw.Modify(reflTestPod("a", "12"))
		fw.Delete(reflTestPod("b", "13"))
		synctest.Wait()
		if got, want := reflTestJoin(store.takeOps()), "add ns/c; update ns/a; delete ns/b"; got != want {
			t.Fatalf("after the events: ops %q, want %q", got, want)
		}
		if got := r.LastSyncResourceVersion(); got != "13" {
			t.Fatalf("LastSyncResourceVersion after the events = %q, want 13", got)
		}

		// The server ends the watch: the reflector resumes from the last resource version,
		// without listing again.
		fw.Stop()
		synctest.Wait()
		w = src.watchOptions()
		if len(w) != 2 || w[1].ResourceVersion != "13" {
			t.Fatalf("watches %+v, want a second one from 13", w)
		}
		if n := len(src.listOptions()); n != 1 {
			t.Fatalf("%d lists, want no relist after a normal close", n)
		}
	})
}

// reflTestOutcome is what a watch failure leads to.
type reflTestOutcome int

const (
	reflTestRewatchNow     reflTestOutcome = iota // a new watch at once, same round
	reflTestRewatchBackoff                        // a new watch after the backoff delay
	reflTestReturnNil                             // ListAndWatch returns nil (the caller relists)
	reflTestReturnErr                             // ListAndWatch returns an error
)

func TestReflectorWatchFailures(t *testing.T) {
	refused := fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)
	status := func(err *apierrors.StatusError) *metav1.Status { return &err.ErrStatus }
	cases := []struct {
		name        string
		watchErr    error                      // the first watch call fails with this
		stream      func(w *watch.FakeWatcher) // or the first watch does this
		maxInternal time.Duration
		want        reflTestOutcome
	}{
		{name: "closed after events", stream: func(w *watch.FakeWatcher) { w.Add(reflTestPod("x", "11")); w.Stop() }, want: reflTestRewatchNow},
		{name: "expired in stream", stream: func(w *watch.FakeWatcher) { w.Error(status(apierrors.NewResourceExpired("too old"))) }, want: reflTestReturnNil},
		{name: "gone in stream", stream: func(w *watch.FakeWatcher) { w.Error(status(reflTestGone())) }, want: reflTestReturnNil},
		{name: "429 in stream", stream: func(w *watch.FakeWatcher) { w.Error(status(apierrors.NewTooManyRequests("slow down", 1))) }, want: reflTestRewatchBackoff},
		{name: "500 in stream, retries allowed", maxInternal: time.Minute, stream: func(w *watch.FakeWatcher) { w.Error(status(apierrors.NewInternalError(errors.New("boom")))) }, want: reflTestRewatchNow},
		{name: "500 in stream, no retries", stream: func(w *watch.FakeWatcher) { w.Error(status(apierrors.NewInternalError(errors.New("boom")))) }, want: reflTestReturnNil},
		{name: "other status in stream", stream: func(w *watch.FakeWatcher) { w.Error(status(apierrors.NewBadRequest("no"))) }, want: reflTestReturnNil},
		{name: "error event without a Status", stream: func(w *watch.FakeWatcher) { w.Error(reflTestPod("odd", "1")) }, want: reflTestReturnNil},
		{name: "error event without an object", stream: func(w *watch.FakeWatcher) { w.Error(nil) }, want: reflTestReturnNil},
		{name: "very short watch", stream: func(w *watch.FakeWatcher) { w.Stop() }, want: reflTestReturnNil},
		{name: "watch call refused", watchErr: refused, want: reflTestRewatchBackoff},
		{name: "watch call 429", watchErr: apierrors.NewTooManyRequests("slow down", 1), want: reflTestRewatchBackoff},
		{name: "watch call forbidden", watchErr: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no")), want: reflTestReturnErr},
		{name: "watch call expired", watchErr: apierrors.NewResourceExpired("too old"), want: reflTestReturnErr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("10")
				if tc.watchErr != nil {
					src.watchErrs = []error{tc.watchErr}
				}
				r, c := reflTestNew(t, src, newReflTestStore())
				r.MaxInternalErrorRetryDuration = tc.maxInternal
				result := make(chan error, 1)
				stop := reflTestRun(t, func(ctx context.Context) { result <- r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				if tc.stream != nil {
					tc.stream(src.watcher(t, 0))
					synctest.Wait()
				}

				returned := func() (error, bool) {
					select {
					case err := <-result:
						return err, true
					default:
						return nil, false
					}
				}
				switch tc.want {
				case reflTestRewatchNow:
					if n := len(src.watchOptions()); n != 2 {
						t.Fatalf("%d watch calls, want a second one at once", n)
					}
				case reflTestRewatchBackoff:
					if n := len(src.watchOptions()); n != 1 {
						t.Fatalf("%d watch calls before the backoff elapsed, want 1", n)
					}
					if _, ok := returned(); ok {
						t.Fatalf("ListAndWatch returned, want it to back off and retry")
					}
					// The first backoff step is within [800ms, 1.6s).
					reflTestStep(c, 1600*time.Millisecond)
					if n := len(src.watchOptions()); n != 2 {
						t.Fatalf("%d watch calls after the backoff, want 2", n)
					}
				case reflTestReturnNil, reflTestReturnErr:
					err, ok := returned()
					if !ok {
						t.Fatalf("ListAndWatch still running, want it to return")
					}
					if (err != nil) != (tc.want == reflTestReturnErr) {
						t.Fatalf("ListAndWatch returned %v, want error: %v", err, tc.want == reflTestReturnErr)
					}
				}
				if n := len(src.listOptions()); n != 1 {
					t.Fatalf("%d lists within the round, want 1", n)
				}
			})
		})
	}
}

func TestReflectorStopsPromptly(t *testing.T) {
	cases := []struct {
		name  string
		setup func(src *reflTestSource)
	}{
		{name: "while watching", setup: func(*reflTestSource) {}},
		{name: "while backing off a refused watch", setup: func(src *reflTestSource) {
			src.watchErrs = []error{fmt.Errorf("dial: %w", syscall.ECONNREFUSED)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("10")
				tc.setup(src)
				r, _ := reflTestNew(t, src, newReflTestStore())
				result := make(chan error, 1)
				ctx, cancel := context.WithCancel(context.Background())
				go func() { result <- r.ListAndWatchWithContext(ctx) }()
				synctest.Wait()
				cancel()
				synctest.Wait()
				select {
				case err := <-result:
					if err != nil {
						t.Fatalf("ListAndWatch returned %v after cancel, want nil", err)
					}
				default:
					t.Fatalf("ListAndWatch did not return after cancel without the clock moving")
				}
			})
		})
	}
}

func TestReflectorResourceVersionOrderingGuard(t *testing.T) {
	cases := []struct {
		name   string
		listRV string
		events func(w *watch.FakeWatcher)
		// wantOps are the store operations after the events (bookmarks and RV updates
		// included).
		wantOps string
		wantRV  string
	}{
		{
			name:   "watch from a list RV moves at every event",
			listRV: "10",
			events: func(w *watch.FakeWatcher) {
				w.Add(reflTestPod("b", "12"))
				w.Add(reflTestPod("a", "11"))
			},
			wantOps: "add ns/b; rv 12; add ns/a; rv 11",
			wantRV:  "11",
		},
		{
			name:   "watch from empty RV waits for a non-Added event",
			listRV: "",
			events: func(w *watch.FakeWatcher) {
				w.Add(reflTestPod("b", "12"))
				w.Add(reflTestPod("a", "11"))
				w.Modify(reflTestPod("a", "13"))
				w.Add(reflTestPod("c", "14"))
			},
			wantOps: "add ns/b; add ns/a; update ns/a; rv 13; add ns/c; rv 14",
			wantRV:  "14",
		},
		{
			name:   "watch from 0 moves at a bookmark",
			listRV: "0",
			events: func(w *watch.FakeWatcher) {
				w.Add(reflTestPod("b", "12"))
				w.Action(watch.Bookmark, reflTestBookmark("20", false))
			},
			wantOps: "add ns/b; bookmark 20; rv 20",
			wantRV:  "20",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource(tc.listRV)
				store := reflTestBookmarkStore{newReflTestStore()}
				r, _ := reflTestNew(t, src, store)
				stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				store.takeOps()
				tc.events(src.watcher(t, 0))
				synctest.Wait()
				if got := reflTestJoin(store.takeOps()); got != tc.wantOps {
					t.Errorf("ops %q, want %q", got, tc.wantOps)
				}
				if got := r.LastSyncResourceVersion(); got != tc.wantRV {
					t.Errorf("LastSyncResourceVersion %q, want %q", got, tc.wantRV)
				}
			})
		})
	}
}

func TestReflectorDropsBadWatchEvents(t *testing.T) {
	cases := []struct {
		name  string
		event watch.Event
	}{
		{name: "wrong type", event: watch.Event{Type: watch.Added, Object: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ResourceVersion: "50"}}}},
		{name: "no metadata", event: watch.Event{Type: watch.Added, Object: &metav1.Status{ListMeta: metav1.ListMeta{ResourceVersion: "50"}}}},
		{name: "nil object", event: watch.Event{Type: watch.Added}},
		{name: "typed nil object", event: watch.Event{Type: watch.Modified, Object: (*v1.Pod)(nil)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("10")
				store := newReflTestStore()
				r, _ := reflTestNew(t, src, store)
				if tc.name == "no metadata" {
					// Only a reflector without an expected type gets as far as the metadata.
					r.expectedType = nil
				}
				stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				store.takeOps()
				w := src.watcher(t, 0)
				w.Action(tc.event.Type, tc.event.Object)
				w.Add(reflTestPod("good", "11"))
				synctest.Wait()
				if got, want := reflTestJoin(store.takeOps()), "add ns/good"; got != want {
					t.Fatalf("ops %q, want only the good event applied (%q)", got, want)
				}
				if got := r.LastSyncResourceVersion(); got != "11" {
					t.Fatalf("LastSyncResourceVersion %q, want 11 (the dropped event must not count)", got)
				}
				if n := len(src.watchOptions()); n != 1 {
					t.Fatalf("%d watches, want the bad event not to end the watch", n)
				}
			})
		})
	}
}

func TestReflectorStoreErrorsDoNotStopTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newReflTestSource("10")
		store := newReflTestStore()
		store.addErr = errors.New("store full")
		r, _ := reflTestNew(t, src, store)
		stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
		defer stop()
		synctest.Wait()
		w := src.watcher(t, 0)
		w.Add(reflTestPod("a", "11"))
		w.Modify(reflTestPod("b", "12"))
		synctest.Wait()
		if got := store.keys(); len(got) != 1 || got[0] != "ns/b" {
			t.Fatalf("store keys %v, want the update applied after the failed add", got)
		}
		if got := r.LastSyncResourceVersion(); got != "12" {
			t.Fatalf("LastSyncResourceVersion %q, want 12", got)
		}
	})
}

func TestReflectorResync(t *testing.T) {
	cases := []struct {
		name         string
		shouldResync func() bool
		resyncErr    error
		wantOps      string
		wantReturned bool
	}{
		{name: "nil ShouldResync resyncs", wantOps: "resync; resync"},
		{name: "ShouldResync false", shouldResync: func() bool { return false }, wantOps: ""},
		{name: "Resync error ends the watch", resyncErr: errors.New("nope"), wantOps: "resync", wantReturned: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("10")
				store := newReflTestStore()
				store.resyncErr = tc.resyncErr
				r, c := reflTestNew(t, src, store)
				r.resyncPeriod = time.Minute
				r.ShouldResync = tc.shouldResync
				result := make(chan error, 1)
				stop := reflTestRun(t, func(ctx context.Context) { result <- r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				store.takeOps()
				reflTestStep(c, 59*time.Second)
				if ops := store.takeOps(); len(ops) != 0 {
					t.Fatalf("ops %v before the resync period elapsed", ops)
				}
				reflTestStep(c, time.Second)
				if !tc.wantReturned {
					reflTestStep(c, time.Minute)
				}
				if got := reflTestJoin(store.takeOps()); got != tc.wantOps {
					t.Fatalf("ops %q, want %q", got, tc.wantOps)
				}
				select {
				case err := <-result:
					if !tc.wantReturned || err != nil {
						t.Fatalf("ListAndWatch returned %v, want returned=%v with nil", err, tc.wantReturned)
					}
				default:
					if tc.wantReturned {
						t.Fatalf("ListAndWatch still running after a Resync error")
					}
				}
			})
		})
	}
}
