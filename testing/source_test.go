package testing_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	fcache "github.com/kcache/cache/testing"
)

func TestChangesBumpVersions(t *testing.T) {
	cases := []struct {
		name      string
		do        func(s *fcache.FakeControllerSource)
		wantItems []string
		wantRV    int
	}{
		{name: "empty", do: func(*fcache.FakeControllerSource) {}, wantItems: []string{}, wantRV: 0},
		{
			name:      "adds are stored sorted",
			do:        func(s *fcache.FakeControllerSource) { s.Add(cm("b")); s.Add(cm("a")) },
			wantItems: []string{"a@2", "b@1"}, wantRV: 2,
		},
		{
			name:      "modify replaces",
			do:        func(s *fcache.FakeControllerSource) { s.Add(cm("a")); s.Modify(cm("a", "k", "v")) },
			wantItems: []string{"a@2"}, wantRV: 2,
		},
		{
			name:      "delete removes",
			do:        func(s *fcache.FakeControllerSource) { s.Add(cm("a")); s.Add(cm("b")); s.Delete(cm("a")) },
			wantItems: []string{"b@2"}, wantRV: 3,
		},
		{
			name:      "modify of a missing object stores it, delete of one is still a version",
			do:        func(s *fcache.FakeControllerSource) { s.Modify(cm("a")); s.Delete(cm("zz")) },
			wantItems: []string{"a@1"}, wantRV: 2,
		},
		{
			name: "the drop-watch forms change the state too",
			do: func(s *fcache.FakeControllerSource) {
				s.AddDropWatch(cm("a"))
				s.AddDropWatch(cm("b"))
				s.ModifyDropWatch(cm("b"))
				s.DeleteDropWatch(cm("a"))
			},
			wantItems: []string{"b@3"}, wantRV: 4,
		},
		{
			name: "objects are keyed by namespace, name and UID",
			do: func(s *fcache.FakeControllerSource) {
				s.Add(cm("a"))
				s.Add(inNS("other", cm("a")))
				withUID := cm("a")
				withUID.UID = "u2"
				s.Add(withUID)
			},
			wantItems: []string{"a@1", "a@3", "a@2"}, wantRV: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			tc.do(s)
			list := mustList(t, s, metav1.ListOptions{})
			if got := itemNames(t, list); !slices.Equal(got, tc.wantItems) {
				t.Fatalf("items = %v, want %v", got, tc.wantItems)
			}
			if s.ResourceVersion() != tc.wantRV || s.Len() != len(tc.wantItems) {
				t.Fatalf("ResourceVersion = %d, Len = %d; want %d, %d", s.ResourceVersion(), s.Len(), tc.wantRV, len(tc.wantItems))
			}
			if got, want := listRV(t, list), itoa(tc.wantRV); got != want {
				t.Fatalf("list resourceVersion = %q, want %q", got, want)
			}
		})
	}
}

// TestChangeCopies checks that the caller's object gets the new resource version (as in
// client-go) but that the source keeps its own copy, and hands out copies.
func TestChangeCopies(t *testing.T) {
	s := fcache.NewFakeControllerSource()
	obj := cm("a", "k", "v")
	s.Add(obj)
	if obj.ResourceVersion != "1" {
		t.Fatalf("caller's object has resourceVersion %q, want 1", obj.ResourceVersion)
	}
	obj.Labels["k"] = "changed by the caller"
	first := mustList(t, s, metav1.ListOptions{}).(*metav1.List).Items[0].Object.(*v1.ConfigMap)
	first.Labels["k"] = "changed by a reader"
	again := mustList(t, s, metav1.ListOptions{}).(*metav1.List).Items[0].Object.(*v1.ConfigMap)
	if again.Labels["k"] != "v" {
		t.Fatalf("stored label = %q, want it untouched by the caller and readers", again.Labels["k"])
	}
}

func TestChangeBadInput(t *testing.T) {
	cases := []struct {
		name string
		ev   watch.Event
	}{
		{name: "nil object", ev: watch.Event{Type: watch.Added}},
		{name: "typed nil object", ev: watch.Event{Type: watch.Added, Object: (*v1.ConfigMap)(nil)}},
		{name: "object without metadata", ev: watch.Event{Type: watch.Added, Object: &metav1.Status{}}},
		{name: "bookmark", ev: watch.Event{Type: watch.Bookmark, Object: cm("a")}},
		{name: "error", ev: watch.Event{Type: watch.Error, Object: &metav1.Status{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.Add(cm("x"))
			s.Change(tc.ev, 1)
			if s.ResourceVersion() != 1 || s.Len() != 1 {
				t.Fatalf("after a refused change: ResourceVersion %d, Len %d; want 1, 1", s.ResourceVersion(), s.Len())
			}
		})
	}
}

// TestChangeProbability checks that a watch probability between 0 and 1 sends some changes
// and not others, and does so the same way on every run with the same seed.
func TestChangeProbability(t *testing.T) {
	sent := func(seed uint64) []string {
		s := fcache.New(fcache.Options{Rand: rand.New(rand.NewPCG(seed, seed))})
		w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			s.Change(watch.Event{Type: watch.Added, Object: cm(itoa(i))}, 0.5)
		}
		s.Shutdown()
		var names []string
		for ev := range w.ResultChan() {
			names = append(names, describe(ev.Object))
		}
		w.Stop()
		return names
	}
	cases := []struct {
		name string
		a, b uint64
		same bool
	}{
		{name: "same seed, same choices", a: 7, b: 7, same: true},
		{name: "other seed, other choices", a: 7, b: 8, same: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := sent(tc.a), sent(tc.b)
			if len(a) == 0 || len(a) == 50 {
				t.Fatalf("probability 0.5 sent %d of 50 changes", len(a))
			}
			if slices.Equal(a, b) != tc.same {
				t.Fatalf("runs equal = %v, want %v:\n%v\n%v", !tc.same, tc.same, a, b)
			}
		})
	}
}

func TestListError(t *testing.T) {
	errDenied := errors.New("access denied")
	cases := []struct {
		name string
		set  func(s *fcache.FakeControllerSource, err error)
	}{
		{name: "field", set: func(s *fcache.FakeControllerSource, err error) { s.ListError = err }},
		{name: "setter", set: func(s *fcache.FakeControllerSource, err error) { s.SetListError(err) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.Add(cm("a"))
			tc.set(s, errDenied)
			if _, err := s.List(metav1.ListOptions{}); !errors.Is(err, errDenied) {
				t.Fatalf("List error = %v, want %v", err, errDenied)
			}
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
			if err != nil {
				t.Fatalf("Watch must not be affected by ListError: %v", err)
			}
			w.Stop()
			tc.set(s, nil)
			if _, err := s.List(metav1.ListOptions{}); err != nil {
				t.Fatalf("List after clearing ListError: %v", err)
			}
		})
	}
}

func TestResetWatchAndShutdown(t *testing.T) {
	cases := []struct {
		name string
		end  func(s *fcache.FakeControllerSource)
		// after ending: what a watch from version 1, one from the current version, and a
		// list give
		wantOldWatch, wantNewWatch, wantList error
		wantExpired                          bool
	}{
		{name: "ResetWatch", end: (*fcache.FakeControllerSource).ResetWatch, wantExpired: true},
		{
			name: "Shutdown", end: (*fcache.FakeControllerSource).Shutdown,
			wantOldWatch: fcache.ErrShutdown, wantNewWatch: fcache.ErrShutdown, wantList: fcache.ErrShutdown,
		},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.Add(cm("a"))
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			s.Add(cm("b"))
			s.Add(cm("c"))
			tc.end(s)
			tc.end(s) // idempotent
			// The events queued before the end are still delivered, then the channel closes.
			expectEvents(t, w, []string{"ADDED b@2", "ADDED c@3"}, true)
			if s.NumWatchers() != 0 {
				t.Fatalf("NumWatchers = %d after %s", s.NumWatchers(), tc.name)
			}

			_, err = s.Watch(metav1.ListOptions{ResourceVersion: "1"})
			if tc.wantExpired {
				if !isExpired(err) {
					t.Fatalf("watch from an old version after %s: %v, want Expired", tc.name, err)
				}
			} else if !errors.Is(err, tc.wantOldWatch) {
				t.Fatalf("watch from an old version: %v, want %v", err, tc.wantOldWatch)
			}
			w2, err := s.Watch(metav1.ListOptions{ResourceVersion: "3"})
			if !errors.Is(err, tc.wantNewWatch) {
				t.Fatalf("watch from the current version: %v, want %v", err, tc.wantNewWatch)
			}
			if w2 != nil {
				w2.Stop()
			}
			if _, err := s.List(metav1.ListOptions{}); !errors.Is(err, tc.wantList) {
				t.Fatalf("List: %v, want %v", err, tc.wantList)
			}
		})
	}
}

func TestShutdownDropsChanges(t *testing.T) {
	s := fcache.NewFakeControllerSource()
	s.Add(cm("a"))
	s.Shutdown()
	s.Add(cm("b"))
	if s.ResourceVersion() != 1 || s.Len() != 1 {
		t.Fatalf("a change after Shutdown was recorded: ResourceVersion %d, Len %d", s.ResourceVersion(), s.Len())
	}
}

// TestTypeAgnostic runs the same scenario on typed and unstructured objects and checks the
// bookmark object has the type (and for unstructured, the kind) of the stored objects.
func TestTypeAgnostic(t *testing.T) {
	cases := []struct {
		name     string
		obj      func(name string) runtime.Object
		wantType string
	}{
		{name: "typed", obj: func(n string) runtime.Object { return cm(n) }, wantType: "*v1.ConfigMap"},
		{name: "unstructured", obj: func(n string) runtime.Object { return unstructuredCM(n) }, wantType: "*unstructured.Unstructured /v1, Kind=ConfigMap"},
		{name: "partial metadata", obj: func(n string) runtime.Object {
			return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n}}
		}, wantType: "*v1.PartialObjectMetadata"},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.Add(tc.obj("a"))
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			s.Modify(tc.obj("a"))
			s.Bookmark()
			expectN(t, w, 2, func(evs []watch.Event) {
				if got := typeOf(evs[1].Object); got != tc.wantType || evs[1].Type != watch.Bookmark {
					t.Fatalf("bookmark %s of %s, want of %s", evs[1].Type, got, tc.wantType)
				}
				if describe(evs[0].Object) != "a@2" {
					t.Fatalf("modified event %s", describe(evs[0].Object))
				}
			})
			if got := itemNames(t, mustList(t, s, metav1.ListOptions{})); !slices.Equal(got, []string{"a@2"}) {
				t.Fatalf("list = %v", got)
			}
		})
	}
}

// TestCompaction checks Compact and Options.HistoryLimit: watches and exact lists from a
// forgotten version fail with Expired, those from a retained one work.
func TestCompaction(t *testing.T) {
	cases := []struct {
		name       string
		opts       fcache.Options
		compact    int
		oldestGood int // the oldest version a watch may start from
	}{
		{name: "nothing compacted", oldestGood: 0},
		{name: "Compact", compact: 3, oldestGood: 3},
		{name: "Compact beyond the current version is clamped", compact: 99, oldestGood: 5},
		{name: "HistoryLimit keeps the last changes", opts: fcache.Options{HistoryLimit: 2}, oldestGood: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.New(tc.opts)
			for i := range 5 {
				s.Add(cm(itoa(i)))
			}
			s.Compact(tc.compact)
			for rv := 1; rv <= 5; rv++ {
				w, err := s.Watch(metav1.ListOptions{ResourceVersion: itoa(rv)})
				if w != nil {
					w.Stop()
				}
				_, listErr := s.List(metav1.ListOptions{ResourceVersion: itoa(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
				wantOK := rv >= tc.oldestGood
				if (err == nil) != wantOK || (listErr == nil) != wantOK {
					t.Fatalf("version %d: watch error %v, list error %v; want success %v", rv, err, listErr, wantOK)
				}
				if !wantOK && (!isExpired(err) || !isExpired(listErr)) {
					t.Fatalf("version %d: errors %v, %v; want Expired", rv, err, listErr)
				}
			}
		})
	}
}

// The source has the shape of kcache's ListerWatcher and ListerWatcherWithContext, without
// importing the root package.
var (
	_ interface {
		List(metav1.ListOptions) (runtime.Object, error)
		Watch(metav1.ListOptions) (watch.Interface, error)
	} = (*fcache.FakeControllerSource)(nil)
	_ interface {
		ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error)
		WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error)
	} = (*fcache.FakeControllerSource)(nil)
)
