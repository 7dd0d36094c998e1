package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/internal/features"
)

// reflTestNewWatchList is reflTestNew with the watch-list gate on.
func reflTestNewWatchList(t *testing.T, src *reflTestSource, store ReflectorStore) (*Reflector, *clocktesting.FakeClock) {
	t.Helper()
	r, c := reflTestNew(t, src, store)
	features.SetForTesting(t, features.WatchListClient, true)
	r.useWatchList = true
	return r, c
}

func TestReflectorWatchListKeepsTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newReflTestSource("1")
		store := newReflTestStore()
		r, _ := reflTestNewWatchList(t, src, store)
		stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
		defer stop()
		synctest.Wait()

		opts := src.watchOptions()
		if len(opts) != 1 {
			t.Fatalf("%d watches, want 1", len(opts))
		}
		o := opts[0]
		if o.SendInitialEvents == nil || !*o.SendInitialEvents || o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan ||
			o.ResourceVersion != "" || !o.AllowWatchBookmarks || o.TimeoutSeconds == nil {
			t.Fatalf("watch-list options %+v, want initial events, NotOlderThan at RV \"\", bookmarks and a timeout", o)
		}
		w := src.watcher(t, 0)
		w.Add(reflTestPod("b", "7"))
		w.Add(reflTestPod("a", "5"))
		w.Action(watch.Bookmark, reflTestBookmark("9", false))
		w.Modify(reflTestPod("a", "8"))
		synctest.Wait()
		if ops := store.takeOps(); len(ops) != 0 {
			t.Fatalf("store touched before the initial-events-end bookmark: %v", ops)
		}
		if got := r.LastSyncResourceVersion(); got != "" {
			t.Fatalf("LastSyncResourceVersion %q before the end of the initial events, want \"\"", got)
		}
		w.Action(watch.Bookmark, reflTestBookmark("10", true))
		synctest.Wait()
		if got, want := reflTestJoin(store.takeOps()), "replace 2@10"; got != want {
			t.Fatalf("ops %q at the end of the initial events, want %q", got, want)
		}
		if got := store.keys(); strings.Join(got, ",") != "ns/a,ns/b" {
			t.Fatalf("store keys %v", got)
		}
		if got := r.LastSyncResourceVersion(); got != "10" {
			t.Fatalf("LastSyncResourceVersion %q, want 10", got)
		}

		// The same stream carries on as the steady-state watch.
		w.Add(reflTestPod("c", "11"))
		synctest.Wait()
		if got, want := reflTestJoin(store.takeOps()), "add ns/c"; got != want {
			t.Fatalf("ops %q after the initial events, want %q", got, want)
		}
		if n, l := len(src.watchOptions()), len(src.listOptions()); n != 1 || l != 0 {
			t.Fatalf("%d watches and %d lists, want the one watch-list stream only", n, l)
		}
		if got := r.LastSyncResourceVersion(); got != "11" {
			t.Fatalf("LastSyncResourceVersion %q, want 11", got)
		}
	})
}

func TestReflectorWatchListRetriesAndFallback(t *testing.T) {
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	cases := []struct {
		name string
		// watchErr fails the first watch-list call; else stream acts on its stream.
		watchErr error
		stream   func(w *watch.FakeWatcher)
		// wantBackoff: the retry waits for the clock.
		wantBackoff bool
		// wantRV is the resource version of the retry; fallback means a LIST instead.
		wantRV       string
		wantFallback bool
	}{
		{name: "429 on the call", watchErr: apierrors.NewTooManyRequests("slow", 1), wantBackoff: true, wantRV: "42"},
		{name: "refused on the call", watchErr: refused, wantBackoff: true, wantRV: "42"},
		{name: "expired on the call", watchErr: apierrors.NewResourceExpired("old"), wantRV: ""},
		{name: "expired in the stream", stream: func(w *watch.FakeWatcher) { w.Error(&apierrors.NewResourceExpired("old").ErrStatus) }, wantRV: ""},
		{name: "closed without the bookmark", stream: func(w *watch.FakeWatcher) { w.Add(reflTestPod("a", "50")); w.Stop() }, wantRV: "42"},
		{name: "unsupported on the call", watchErr: apierrors.NewBadRequest("sendInitialEvents is forbidden"), wantFallback: true},
		{name: "very short watch falls back", stream: func(w *watch.FakeWatcher) { w.Stop() }, wantFallback: true},
		{name: "other error in the stream", stream: func(w *watch.FakeWatcher) { w.Error(&apierrors.NewBadRequest("no").ErrStatus) }, wantFallback: true},
		// Found by FuzzReflector: the store was filled at resourceVersion "".
		{name: "initial events end without a resourceVersion", stream: func(w *watch.FakeWatcher) {
			w.Add(reflTestPod("a", "50"))
			w.Action(watch.Bookmark, reflTestBookmark("", true))
		}, wantFallback: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("60")
				if tc.watchErr != nil {
					src.watchErrs = []error{tc.watchErr}
				}
				r, c := reflTestNewWatchList(t, src, newReflTestStore())
				r.setLastSyncResourceVersion("42")
				stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				if tc.stream != nil {
					tc.stream(src.watcher(t, 0))
					synctest.Wait()
				}
				if tc.wantBackoff {
					if n := len(src.watchOptions()); n != 1 {
						t.Fatalf("%d watch calls before the backoff elapsed, want 1", n)
					}
					reflTestStep(c, 1600*time.Millisecond)
				}
				opts := src.watchOptions()
				if tc.wantFallback {
					if l := len(src.listOptions()); l != 1 {
						t.Fatalf("%d lists, want a fallback LIST", l)
					}
					if len(opts) != 2 || opts[1].SendInitialEvents != nil {
						t.Fatalf("watches %+v, want the watch-list then a plain watch", opts)
					}
					return
				}
				if l := len(src.listOptions()); l != 0 {
					t.Fatalf("%d lists, want the watch-list retried instead", l)
				}
				if len(opts) != 2 || opts[1].SendInitialEvents == nil || opts[1].ResourceVersion != tc.wantRV {
					t.Fatalf("watches %+v, want a second watch-list at RV %q", opts, tc.wantRV)
				}
			})
		})
	}
}

func TestReflectorWatchListBackoffStopsOnCancel(t *testing.T) {
	// client-go waits out the whole backoff here, whatever the context.
	synctest.Test(t, func(t *testing.T) {
		src := newReflTestSource("1")
		src.watchErrs = []error{apierrors.NewTooManyRequests("slow", 1)}
		r, _ := reflTestNewWatchList(t, src, newReflTestStore())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.ListAndWatchWithContext(ctx) }()
		synctest.Wait()
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("ListAndWatch = %v after cancel, want nil", err)
			}
		default:
			t.Fatalf("ListAndWatch still waiting out the backoff after cancel")
		}
		if l := len(src.listOptions()); l != 0 {
			t.Fatalf("%d lists after cancel, want none", l)
		}
	})
}

func TestReflectorWatchListSemanticsUnsupported(t *testing.T) {
	features.SetForTesting(t, features.WatchListClient, true)
	cases := []struct {
		name   string
		client any
		want   bool
	}{
		{name: "plain client", client: nil, want: true},
		{name: "client without watch-list semantics", client: reflTestNoWatchListClient{}, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw := ToListWatcherWithWatchListSemantics(newReflTestSource("1").lw(), tc.client)
			r := NewReflector(lw, &v1.Pod{}, newReflTestStore(), 0)
			if r.useWatchList != tc.want {
				t.Fatalf("useWatchList = %v, want %v", r.useWatchList, tc.want)
			}
		})
	}
	features.SetForTesting(t, features.WatchListClient, false)
	if r := NewReflector(newReflTestSource("1").lw(), &v1.Pod{}, newReflTestStore(), 0); r.useWatchList {
		t.Fatalf("useWatchList with the gate off")
	}
}

type reflTestNoWatchListClient struct{}

func (reflTestNoWatchListClient) IsWatchListSemanticsUnSupported() bool { return true }

// reflTestTransformingStore counts the transforms applied to what it stores.
type reflTestTransformingStore struct {
	*reflTestStore
	calls *atomic.Int32
}

func (s reflTestTransformingStore) Transformer() TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		s.calls.Add(1)
		p := obj.(*v1.Pod).DeepCopy()
		p.Annotations = map[string]string{"transformed": fmt.Sprint(len(p.Annotations))}
		return p, nil
	}
}

func (s reflTestTransformingStore) Replace(list []interface{}, rv string) error {
	tf := s.Transformer()
	for i := range list {
		list[i], _ = tf(list[i])
	}
	return s.reflTestStore.Replace(list, rv)
}

// reflTestPreTransformedStore is a TransformingStore that takes pre-transformed watch-list
// results.
type reflTestPreTransformedStore struct{ reflTestTransformingStore }

func (s reflTestPreTransformedStore) replaceTransformed(list []interface{}, rv string) error {
	return s.reflTestStore.Replace(list, rv)
}

func TestReflectorWatchListTransformsOnce(t *testing.T) {
	cases := []struct {
		name      string
		store     func(calls *atomic.Int32) ReflectorStore
		wantCalls int32
		// wantAnnotation is what the stored objects carry: "1" when transformed twice.
		wantAnnotation string
	}{
		{name: "store taking transformed results", store: func(c *atomic.Int32) ReflectorStore {
			return reflTestPreTransformedStore{reflTestTransformingStore{reflTestStore: newReflTestStore(), calls: c}}
		}, wantCalls: 2, wantAnnotation: "0"},
		{name: "other transforming store (client-go's double transform)", store: func(c *atomic.Int32) ReflectorStore {
			return reflTestTransformingStore{reflTestStore: newReflTestStore(), calls: c}
		}, wantCalls: 4, wantAnnotation: "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				store := tc.store(&calls)
				src := newReflTestSource("1")
				r, _ := reflTestNewWatchList(t, src, store)
				stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				w := src.watcher(t, 0)
				w.Add(reflTestPod("a", "1"))
				w.Add(reflTestPod("b", "2"))
				w.Action(watch.Bookmark, reflTestBookmark("3", true))
				synctest.Wait()
				if got := calls.Load(); got != tc.wantCalls {
					t.Fatalf("%d transforms for 2 objects, want %d", got, tc.wantCalls)
				}
				var inner *reflTestStore
				switch s := store.(type) {
				case reflTestPreTransformedStore:
					inner = s.reflTestStore
				case reflTestTransformingStore:
					inner = s.reflTestStore
				}
				inner.mu.Lock()
				defer inner.mu.Unlock()
				for k, obj := range inner.objs {
					if got := obj.(*v1.Pod).Annotations["transformed"]; got != tc.wantAnnotation {
						t.Errorf("%s: transformed annotation %q, want %q", k, got, tc.wantAnnotation)
					}
				}
			})
		})
	}
}

func TestWatchListBuffer(t *testing.T) {
	cases := []struct {
		name string
		ops  func(b *watchListBuffer) error
		want string
	}{
		{name: "arrival order", ops: func(b *watchListBuffer) error {
			return errors.Join(b.Add(reflTestPod("b", "1")), b.Add(reflTestPod("a", "2")))
		}, want: "b@1,a@2"},
		{name: "update in place", ops: func(b *watchListBuffer) error {
			return errors.Join(b.Add(reflTestPod("b", "1")), b.Add(reflTestPod("a", "2")), b.Update(reflTestPod("b", "3")))
		}, want: "b@3,a@2"},
		{name: "delete and re-add", ops: func(b *watchListBuffer) error {
			return errors.Join(b.Add(reflTestPod("b", "1")), b.Add(reflTestPod("a", "2")), b.Delete(reflTestPod("b", "3")), b.Add(reflTestPod("b", "4")))
		}, want: "a@2,b@4"},
		{name: "delete of an unknown key", ops: func(b *watchListBuffer) error {
			return errors.Join(b.Add(reflTestPod("a", "1")), b.Delete(reflTestPod("zz", "2")))
		}, want: "a@1"},
		{name: "replace", ops: func(b *watchListBuffer) error {
			return errors.Join(b.Add(reflTestPod("a", "1")), b.Replace([]interface{}{reflTestPod("c", "5")}, "5"), b.Resync())
		}, want: "c@5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newWatchListBuffer(nil)
			if err := tc.ops(b); err != nil {
				t.Fatalf("ops: %v", err)
			}
			var got []string
			objs, _ := b.list()
			for _, o := range objs {
				p := o.(*v1.Pod)
				got = append(got, p.Name+"@"+p.ResourceVersion)
			}
			if strings.Join(got, ",") != tc.want {
				t.Fatalf("list %v, want %s", got, tc.want)
			}
		})
	}
	if err := newWatchListBuffer(nil).Add("not an object"); err == nil {
		t.Fatalf("Add of an object without metadata succeeded")
	}
	failing := newWatchListBuffer(func(interface{}) (interface{}, error) { return nil, errors.New("no") })
	if err := failing.Add(reflTestPod("a", "1")); err == nil || failing.live != 0 {
		objs, _ := failing.list()
		t.Fatalf("a failing transform: err %v, list %v; want an error and nothing buffered", err, objs)
	}
}

func TestInitialEventsEndBookmarkTicker(t *testing.T) {
	start := time.Unix(1000, 0)
	cases := []struct {
		name          string
		initialEvents bool
		lastEvent     time.Duration // after start; <0 means no event yet
		now           time.Duration // after start
		want          string        // substring of the error, "" for none
	}{
		{name: "steady-state watch never expires", initialEvents: false, lastEvent: -1, now: time.Minute},
		{name: "no event yet", initialEvents: true, lastEvent: -1, now: 10 * time.Second, want: "no events received for 10s"},
		{name: "no event, not yet due", initialEvents: true, lastEvent: -1, now: 9 * time.Second},
		{name: "recent event", initialEvents: true, lastEvent: 5 * time.Second, now: 10 * time.Second},
		{name: "stale event", initialEvents: true, lastEvent: 5 * time.Second, now: 20 * time.Second, want: "received last event 15s ago"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clocktesting.NewFakeClock(start)
			tk := newInitialEventsEndBookmarkTicker("n", c, start, tc.initialEvents)
			defer tk.Stop()
			if (tk.C() != nil) != tc.initialEvents {
				t.Fatalf("ticker channel set: %v, want %v", tk.C() != nil, tc.initialEvents)
			}
			if tc.lastEvent >= 0 {
				tk.observeLastEventTimeStamp(start.Add(tc.lastEvent))
			}
			c.SetTime(start.Add(tc.now))
			err := tk.expired()
			if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, errInitialEventsEndMissing) || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("expired() = %v, want %q", err, tc.want)
			}
		})
	}
}

// A stream that never ends its initial events (a fake client that cannot serve watch-lists but
// does not say so) is given up after initialEventsEndTimeout of quiet: the reflector logs the
// fix, lists, and lists on every later round. client-go waits forever.
func TestReflectorWatchListFallsBackWhenTheBookmarkNeverComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0), ktesting.BufferLogs(true)))
		logs := func() string { return logger.GetSink().(ktesting.Underlier).GetBuffer().String() }
		src := newReflTestSource("1")
		src.lists = []reflTestListResult{{obj: reflTestPodList("3", reflTestPod("a", "2"))}}
		store := newReflTestStore()
		r, c := reflTestNewWatchList(t, src, store)
		stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(klog.NewContext(ctx, logger)) })
		defer stop()
		synctest.Wait()
		w := src.watcher(t, 0)

		reflTestStep(c, 5*time.Second)
		w.Add(reflTestPod("a", "1")) // at 5s: the stream is alive
		reflTestStep(c, 9*time.Second)
		if n := len(src.listOptions()); n != 0 || logs() != "" {
			t.Fatalf("at 14s, 9s after the last event: %d lists, log %q; want the stream still awaited", n, logs())
		}
		reflTestStep(c, time.Second)
		if n := len(src.listOptions()); n != 1 {
			t.Fatalf("at 15s, 10s after the last event: %d lists, want the fallback LIST", n)
		}
		for _, want := range []string{"received last event 10s ago", "informers.WithWatchListSemanticsOf", "KUBE_FEATURE_WatchListClient=false"} {
			if !strings.Contains(logs(), want) {
				t.Fatalf("log %q does not contain %q", logs(), want)
			}
		}
		if got, want := reflTestJoin(store.takeOps()), "replace 1@3"; got != want {
			t.Fatalf("store ops %q, want %q (the LIST's result, nothing of the stream)", got, want)
		}
		if got := r.LastSyncResourceVersion(); got != "3" {
			t.Fatalf("LastSyncResourceVersion %q, want 3", got)
		}
		// The steady-state watch that follows is a plain one, and so is every later round.
		opts := src.watchOptions()
		if last := opts[len(opts)-1]; len(opts) != 2 || last.SendInitialEvents != nil {
			t.Fatalf("watches %+v, want the watch-list then a plain watch", opts)
		}
		if r.useWatchList {
			t.Fatalf("useWatchList still set after the fallback")
		}
	})
}
