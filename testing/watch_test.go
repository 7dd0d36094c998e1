package testing_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	fcache "github.com/kcache/cache/testing"
)

const endMark = "BOOKMARK end@" // eventString of the initial-events-end bookmark, before its version

// TestWatchStart checks where watches start, against seeded(): at version 3 it held a, b and
// c; now (version 5) it holds b@4 and c@3. After the watch starts, d is added (version 6).
func TestWatchStart(t *testing.T) {
	notOlder := metav1.ResourceVersionMatchNotOlderThan
	watchList := func(rv string, bookmarks bool) metav1.ListOptions {
		return metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: notOlder, SendInitialEvents: ptr(true), AllowWatchBookmarks: bookmarks}
	}
	cases := []struct {
		name       string
		opts       metav1.ListOptions
		setup      func(s *fcache.FakeControllerSource)
		wantEvents []string
		wantErr    func(error) bool
	}{
		{name: "unset: current state, then changes", opts: metav1.ListOptions{}, wantEvents: []string{"ADDED b@4", "ADDED c@3", "ADDED d@6"}},
		{name: "0: current state, then changes", opts: metav1.ListOptions{ResourceVersion: "0"}, wantEvents: []string{"ADDED b@4", "ADDED c@3", "ADDED d@6"}},
		{name: "a version: replay after it", opts: metav1.ListOptions{ResourceVersion: "3"}, wantEvents: []string{"MODIFIED b@4", "DELETED a@5", "ADDED d@6"}},
		{name: "the current version: only what follows", opts: metav1.ListOptions{ResourceVersion: "5"}, wantEvents: []string{"ADDED d@6"}},
		{name: "the oldest retained version", setup: func(s *fcache.FakeControllerSource) { s.Compact(4) }, opts: metav1.ListOptions{ResourceVersion: "4"}, wantEvents: []string{"DELETED a@5", "ADDED d@6"}},
		{name: "a compacted version", setup: func(s *fcache.FakeControllerSource) { s.Compact(4) }, opts: metav1.ListOptions{ResourceVersion: "3"}, wantErr: apierrors.IsResourceExpired},
		{name: "a future version waits for it", opts: metav1.ListOptions{ResourceVersion: "6"}, wantEvents: []string{}},
		{name: "streaming list with bookmarks", opts: watchList("", true), wantEvents: []string{"ADDED b@4", "ADDED c@3", endMark + "5", "ADDED d@6"}},
		{name: "streaming list not older than a version", opts: watchList("4", true), wantEvents: []string{"ADDED b@4", "ADDED c@3", endMark + "5", "ADDED d@6"}},
		{name: "streaming list from a compacted version", setup: func(s *fcache.FakeControllerSource) { s.Compact(5) }, opts: watchList("2", true), wantEvents: []string{"ADDED b@4", "ADDED c@3", endMark + "5", "ADDED d@6"}},
		{name: "streaming list without bookmarks has no end mark", opts: watchList("", false), wantEvents: []string{"ADDED b@4", "ADDED c@3", "ADDED d@6"}},
		{name: "streaming list from a future version", opts: watchList("6", true), wantErr: isTooLarge},
		{name: "no initial events from unset", opts: metav1.ListOptions{ResourceVersionMatch: notOlder, SendInitialEvents: ptr(false)}, wantEvents: []string{"ADDED d@6"}},
		{name: "no initial events from a version", opts: metav1.ListOptions{ResourceVersion: "4", ResourceVersionMatch: notOlder, SendInitialEvents: ptr(false)}, wantEvents: []string{"DELETED a@5", "ADDED d@6"}},
		{name: "streaming list switched off", setup: func(s *fcache.FakeControllerSource) { s.SetWatchListSupported(false) }, opts: watchList("", true), wantErr: apierrors.IsInvalid},
		{name: "switched off, plain watches still work", setup: func(s *fcache.FakeControllerSource) { s.SetWatchListSupported(false) }, opts: metav1.ListOptions{ResourceVersion: "5"}, wantEvents: []string{"ADDED d@6"}},
		{name: "sendInitialEvents needs NotOlderThan", opts: metav1.ListOptions{SendInitialEvents: ptr(true)}, wantErr: apierrors.IsInvalid},
		{name: "a match needs sendInitialEvents", opts: metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: notOlder}, wantErr: apierrors.IsInvalid},
		{name: "not a number", opts: metav1.ListOptions{ResourceVersion: "x"}, wantErr: apierrors.IsBadRequest},
		{name: "selectors apply to the initial state", opts: metav1.ListOptions{FieldSelector: "metadata.name=c"}, wantEvents: []string{"ADDED c@3"}},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := seeded()
			if tc.setup != nil {
				tc.setup(s)
			}
			w, err := s.Watch(tc.opts)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("Watch error = %v, want a matching error", err)
				}
				if s.NumWatchers() != 0 {
					t.Fatal("a failed watch was registered")
				}
				return
			}
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer w.Stop()
			s.Add(cm("d"))
			expectEvents(t, w, renameEndMark(tc.wantEvents), false)
		})
	}
}

// renameEndMark turns the endMark placeholder into what eventString gives for the bookmark:
// an empty ConfigMap has no name.
func renameEndMark(events []string) []string {
	out := make([]string, len(events))
	for i, e := range events {
		if len(e) > len(endMark) && e[:len(endMark)] == endMark {
			e = "BOOKMARK @" + e[len(endMark):]
		}
		out[i] = e
	}
	return out
}

// TestWatchListEndMark checks the bookmark that ends a streaming list: the served type,
// the current version and the initial-events-end annotation, also for a source that has
// never held an object when NewFunc is set, and the error without it.
func TestWatchListEndMark(t *testing.T) {
	opts := metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, SendInitialEvents: ptr(true), AllowWatchBookmarks: true}
	cases := []struct {
		name     string
		newFunc  func() runtime.Object
		add      bool
		wantType string
		wantErr  func(error) bool
	}{
		{name: "type of the first object", add: true, wantType: "*v1.ConfigMap"},
		{name: "NewFunc on an empty source", newFunc: func() runtime.Object { return &v1.Pod{} }, wantType: "*v1.Pod"},
		{name: "nothing to go by", wantErr: apierrors.IsInternalError},
		{name: "NewFunc returns nil", newFunc: func() runtime.Object { return nil }, wantErr: apierrors.IsInternalError},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.New(fcache.Options{NewFunc: tc.newFunc})
			if tc.add {
				s.Add(cm("a"))
			}
			w, err := s.Watch(opts)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("Watch error = %v, want a matching error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			evs, _ := receivedEvents(w)
			last := evs[len(evs)-1]
			m, err := meta.Accessor(last.Object)
			if err != nil {
				t.Fatal(err)
			}
			if last.Type != watch.Bookmark || typeOf(last.Object) != tc.wantType ||
				m.GetResourceVersion() != itoa(s.ResourceVersion()) || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
				t.Fatalf("last event %s %s rv %q annotations %v; want a %s bookmark at %d with the end annotation",
					last.Type, typeOf(last.Object), m.GetResourceVersion(), m.GetAnnotations(), tc.wantType, s.ResourceVersion())
			}
		})
	}
}

// TestWatchSelectorTransitions checks that objects entering or leaving a watch's selection
// arrive as Added or Deleted, as from a real server's watch cache.
func TestWatchSelectorTransitions(t *testing.T) {
	cases := []struct {
		name   string
		change func(s *fcache.FakeControllerSource)
		want   []string
		// wantApp, if set, is the app label the event's object must carry.
		wantApp string
	}{
		{name: "modified inside", change: func(s *fcache.FakeControllerSource) { s.Modify(cm("in", "app", "x", "v", "2")) }, want: []string{"MODIFIED in@3"}},
		{name: "enters", change: func(s *fcache.FakeControllerSource) { s.Modify(cm("out", "app", "x")) }, want: []string{"ADDED out@3"}},
		{name: "leaves as its previous state at the new version", change: func(s *fcache.FakeControllerSource) { s.Modify(cm("in", "app", "y")) }, want: []string{"DELETED in@3"}, wantApp: "x"},
		{name: "modified outside", change: func(s *fcache.FakeControllerSource) { s.Modify(cm("out", "app", "z")) }, want: []string{}},
		{name: "deleted inside, by name only", change: func(s *fcache.FakeControllerSource) { s.Delete(cm("in")) }, want: []string{"DELETED in@3"}},
		{name: "deleted outside", change: func(s *fcache.FakeControllerSource) { s.Delete(cm("out")) }, want: []string{}},
		{name: "added outside", change: func(s *fcache.FakeControllerSource) { s.Add(cm("new", "app", "y")) }, want: []string{}},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.Add(cm("in", "app", "x"))
			s.Add(cm("out", "app", "y"))
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "2", LabelSelector: "app=x"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			tc.change(s)
			evs, _ := receivedEvents(w)
			got := []string{}
			for _, ev := range evs {
				got = append(got, eventString(ev))
				if app := ev.Object.(*v1.ConfigMap).Labels["app"]; tc.wantApp != "" && app != tc.wantApp {
					t.Fatalf("the event carries app=%q, want the last state the watch saw (app=%q)", app, tc.wantApp)
				}
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Fatalf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBookmark(t *testing.T) {
	cases := []struct {
		name      string
		bookmarks bool
		want      []string
	}{
		{name: "asked for", bookmarks: true, want: []string{"ADDED b@2", "BOOKMARK @2"}},
		{name: "not asked for", bookmarks: false, want: []string{"ADDED b@2"}},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.Add(cm("a"))
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: tc.bookmarks})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			s.Add(cm("b"))
			s.Bookmark()
			expectEvents(t, w, tc.want, false)
		})
	}
	inBubble(t, "unknown type sends nothing", func(t *testing.T) {
		s := fcache.NewFakeControllerSource()
		w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		s.Bookmark()
		expectEvents(t, w, nil, false)
	})
}

// TestWatchEnds checks every way a watch ends: each closes the result channel and ends the
// watch's goroutine (goleak in TestMain checks the latter), and unregisters the watch.
func TestWatchEnds(t *testing.T) {
	cases := []struct {
		name string
		opts metav1.ListOptions
		// end ends the watch; it may use the fake clock the source runs on.
		end func(t *testing.T, w watch.Interface, cancel context.CancelFunc, clk *clocktesting.FakeClock)
	}{
		{name: "Stop", end: func(_ *testing.T, w watch.Interface, _ context.CancelFunc, _ *clocktesting.FakeClock) { w.Stop() }},
		{name: "Stop twice", end: func(_ *testing.T, w watch.Interface, _ context.CancelFunc, _ *clocktesting.FakeClock) {
			w.Stop()
			w.Stop()
		}},
		{name: "context cancelled", end: func(_ *testing.T, _ watch.Interface, cancel context.CancelFunc, _ *clocktesting.FakeClock) { cancel() }},
		{
			name: "timeout", opts: metav1.ListOptions{TimeoutSeconds: ptr(int64(30))},
			end: func(t *testing.T, w watch.Interface, _ context.CancelFunc, clk *clocktesting.FakeClock) {
				clk.Step(29 * time.Second)
				if _, closed := received(w); closed {
					t.Fatal("the watch ended before its timeout")
				}
				clk.Step(time.Second)
			},
		},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			s := fcache.New(fcache.Options{Clock: clk})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := tc.opts
			opts.ResourceVersion = "0"
			w, err := s.WatchWithContext(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			s.Add(cm("a"))
			synctest.Wait()
			if s.NumWatchers() != 1 {
				t.Fatalf("NumWatchers = %d, want 1", s.NumWatchers())
			}
			tc.end(t, w, cancel, clk)
			received(w) // drain whatever was sent before the end
			if _, closed := received(w); !closed {
				t.Fatal("the result channel is still open")
			}
			if s.NumWatchers() != 0 {
				t.Fatalf("NumWatchers = %d after the watch ended", s.NumWatchers())
			}
		})
	}
}

// TestSlowWatcher checks that a watcher that does not read never blocks the source, and that
// MaxWatchQueue closes it once it falls too far behind.
func TestSlowWatcher(t *testing.T) {
	cases := []struct {
		name       string
		maxQueue   int
		wantEvents int
		wantClosed bool
	}{
		{name: "unbounded queue keeps everything", maxQueue: 0, wantEvents: 5000},
		// The watcher is closed at the 101st event; what it had in hand is dropped with the rest.
		{name: "bounded queue drops the watcher", maxQueue: 100, wantEvents: 0, wantClosed: true},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.New(fcache.Options{MaxWatchQueue: tc.maxQueue})
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			synctest.Wait()
			for i := range 5000 {
				s.Add(cm(itoa(i)))
			}
			evs, closed := receivedEvents(w)
			if len(evs) != tc.wantEvents || closed != tc.wantClosed {
				t.Fatalf("got %d events, closed %v; want %d, %v", len(evs), closed, tc.wantEvents, tc.wantClosed)
			}
			for i, ev := range evs {
				if m, _ := meta.Accessor(ev.Object); m.GetResourceVersion() != itoa(i+1) {
					t.Fatalf("event %d has version %s: out of order", i, m.GetResourceVersion())
				}
			}
		})
	}
}

// TestWatchEventsAreCopies checks that two watches and the source never share an object.
func TestWatchEventsAreCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fcache.NewFakeControllerSource()
		w1, _ := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
		w2, _ := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
		defer w1.Stop()
		defer w2.Stop()
		s.Add(cm("a", "k", "v"))
		e1, _ := receivedEvents(w1)
		e2, _ := receivedEvents(w2)
		e1[0].Object.(*v1.ConfigMap).Labels["k"] = "changed"
		if e2[0].Object.(*v1.ConfigMap).Labels["k"] != "v" {
			t.Fatal("two watches share an object")
		}
		if got := itemNames(t, mustList(t, s, metav1.ListOptions{LabelSelector: "k=v"})); len(got) != 1 {
			t.Fatal("a watch shares its object with the source")
		}
	})
}
