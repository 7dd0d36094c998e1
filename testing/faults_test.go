package testing_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	fcache "github.com/kcache/cache/testing"
)

func TestInjectedErrors(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{name: "410 expired", err: fcache.ExpiredError(), check: apierrors.IsResourceExpired},
		{name: "429 with retry-after", err: fcache.TooManyRequestsError(3), check: func(err error) bool {
			delay, ok := apierrors.SuggestsClientDelay(err)
			return apierrors.IsTooManyRequests(err) && ok && delay == 3
		}},
		{name: "500", err: fcache.InternalError(), check: apierrors.IsInternalError},
		{name: "connection refused", err: fcache.ConnectionRefusedError(), check: utilnet.IsConnectionRefused},
	}
	type call func(s *fcache.FakeControllerSource) error
	list := func(s *fcache.FakeControllerSource) error { _, err := s.List(metav1.ListOptions{}); return err }
	watchCall := func(s *fcache.FakeControllerSource) error {
		w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
		if w != nil {
			w.Stop()
		}
		return err
	}
	for _, tc := range cases {
		for _, verb := range []struct {
			name        string
			fail        func(s *fcache.FakeControllerSource, n int, err error)
			call, other call
		}{
			{name: "lists", fail: (*fcache.FakeControllerSource).FailLists, call: list, other: watchCall},
			{name: "watches", fail: (*fcache.FakeControllerSource).FailWatches, call: watchCall, other: list},
		} {
			t.Run(tc.name+" "+verb.name, func(t *testing.T) {
				s := fcache.NewFakeControllerSource()
				s.Add(cm("a"))
				verb.fail(s, 2, tc.err)
				if err := verb.other(s); err != nil {
					t.Fatalf("the other verb failed: %v", err)
				}
				for i := range 2 {
					if err := verb.call(s); err == nil || !tc.check(err) {
						t.Fatalf("call %d: error %v, want the injected one", i, err)
					}
				}
				if err := verb.call(s); err != nil {
					t.Fatalf("third call: %v, want success", err)
				}
			})
		}
	}
}

func TestFailuresQueueInOrder(t *testing.T) {
	s := fcache.NewFakeControllerSource()
	s.FailLists(1, fcache.ExpiredError())
	s.FailLists(2, fcache.TooManyRequestsError(1))
	checks := []func(error) bool{apierrors.IsResourceExpired, apierrors.IsTooManyRequests, apierrors.IsTooManyRequests, func(err error) bool { return err == nil }}
	for i, check := range checks {
		if _, err := s.List(metav1.ListOptions{}); !check(err) {
			t.Fatalf("list %d: unexpected error %v", i, err)
		}
	}
}

// TestCloseWatches checks a broken stream: the queued events are lost, and a client resuming
// from the last version it saw gets them back.
func TestCloseWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fcache.NewFakeControllerSource()
		w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		s.Add(cm("a"))
		expectEvents(t, w, []string{"ADDED a@1"}, false)
		s.Add(cm("b"))
		s.Add(cm("c"))
		synctest.Wait() // b is in the watcher's hands, c in its queue
		s.CloseWatches()
		expectEvents(t, w, nil, true)

		resumed, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		defer resumed.Stop()
		expectEvents(t, resumed, []string{"ADDED b@2", "ADDED c@3"}, false)
	})
}

func TestInject(t *testing.T) {
	notFound := apierrors.NewNotFound(schemaGR, "x")
	cases := []struct {
		name   string
		inject func(s *fcache.FakeControllerSource)
		check  func(t *testing.T, ev watch.Event)
	}{
		{
			name:   "an API error keeps its status",
			inject: func(s *fcache.FakeControllerSource) { s.InjectError(notFound) },
			check: func(t *testing.T, ev watch.Event) {
				if ev.Type != watch.Error || !apierrors.IsNotFound(apierrors.FromObject(ev.Object)) {
					t.Fatalf("got %s %v, want an Error event with the NotFound status", ev.Type, ev.Object)
				}
			},
		},
		{
			name:   "another error becomes an internal error",
			inject: func(s *fcache.FakeControllerSource) { s.InjectError(errors.New("disk on fire")) },
			check: func(t *testing.T, ev watch.Event) {
				if ev.Type != watch.Error || !apierrors.IsInternalError(apierrors.FromObject(ev.Object)) {
					t.Fatalf("got %s %v, want an Error event with an InternalError status", ev.Type, ev.Object)
				}
			},
		},
		{
			name:   "a raw event with a nil object",
			inject: func(s *fcache.FakeControllerSource) { s.Inject(watch.Event{Type: watch.Added}) },
			check: func(t *testing.T, ev watch.Event) {
				if ev.Type != watch.Added || ev.Object != nil {
					t.Fatalf("got %s %v, want the raw event", ev.Type, ev.Object)
				}
			},
		},
		{
			name: "a raw event of another type",
			inject: func(s *fcache.FakeControllerSource) {
				s.Inject(watch.Event{Type: watch.Modified, Object: &metav1.Status{Message: "odd"}})
			},
			check: func(t *testing.T, ev watch.Event) {
				if st, ok := ev.Object.(*metav1.Status); !ok || st.Message != "odd" {
					t.Fatalf("got %s %v, want the raw event", ev.Type, ev.Object)
				}
			},
		},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			tc.inject(s)
			expectN(t, w, 1, func(evs []watch.Event) { tc.check(t, evs[0]) })
			if s.ResourceVersion() != 0 {
				t.Fatal("an injected event was recorded")
			}
		})
	}
}

func TestRequestHook(t *testing.T) {
	errNope := errors.New("nope")
	cases := []struct {
		name    string
		hook    fcache.RequestHook
		wantErr error
	}{
		{name: "pass", hook: func(context.Context, string, metav1.ListOptions) error { return nil }},
		{name: "fail", hook: func(context.Context, string, metav1.ListOptions) error { return errNope }, wantErr: errNope},
		{name: "fail lists only", hook: func(_ context.Context, verb string, _ metav1.ListOptions) error {
			if verb == fcache.VerbList {
				return errNope
			}
			return nil
		}, wantErr: errNope},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			s.SetRequestHook(tc.hook)
			if _, err := s.List(metav1.ListOptions{Limit: 5}); !errors.Is(err, tc.wantErr) {
				t.Fatalf("List error %v, want %v", err, tc.wantErr)
			}
			s.SetRequestHook(nil)
			if _, err := s.List(metav1.ListOptions{}); err != nil {
				t.Fatalf("List after removing the hook: %v", err)
			}
			want := []fcache.Request{{Verb: fcache.VerbList, Options: metav1.ListOptions{Limit: 5}}, {Verb: fcache.VerbList}}
			if got := s.Requests(); !slices.EqualFunc(got, want, func(a, b fcache.Request) bool {
				return a.Verb == b.Verb && a.Options.Limit == b.Options.Limit
			}) {
				t.Fatalf("Requests = %+v, want %+v", got, want)
			}
		})
	}
}

// TestDelayHook delays a list on a fake clock: the list completes only once the clock has
// been stepped, and a cancelled context ends the wait.
func TestDelayHook(t *testing.T) {
	cases := []struct {
		name    string
		release func(clk *clocktesting.FakeClock, cancel context.CancelFunc)
		wantErr error
	}{
		{name: "released by the clock", release: func(clk *clocktesting.FakeClock, _ context.CancelFunc) { clk.Step(time.Second) }},
		{name: "cancelled", release: func(_ *clocktesting.FakeClock, cancel context.CancelFunc) { cancel() }, wantErr: context.Canceled},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			s := fcache.NewFakeControllerSource()
			s.SetRequestHook(fcache.DelayHook(clk, time.Second))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.ListWithContext(ctx, metav1.ListOptions{})
				done <- err
			}()
			synctest.Wait()
			if !clk.HasWaiters() {
				t.Fatal("the list is not waiting on the clock")
			}
			select {
			case err := <-done:
				t.Fatalf("the list returned %v before the delay", err)
			default:
			}
			tc.release(clk, cancel)
			if err := <-done; !errors.Is(err, tc.wantErr) {
				t.Fatalf("List error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestWaitFor(t *testing.T) {
	cases := []struct {
		name string
		wait func(ctx context.Context, s *fcache.FakeControllerSource) error
	}{
		{name: "watchers", wait: func(ctx context.Context, s *fcache.FakeControllerSource) error { return s.WaitForWatchers(ctx, 2) }},
		{name: "requests", wait: func(ctx context.Context, s *fcache.FakeControllerSource) error { return s.WaitForRequests(ctx, 2) }},
	}
	for _, tc := range cases {
		inBubble(t, tc.name, func(t *testing.T) {
			s := fcache.NewFakeControllerSource()
			done := make(chan error, 1)
			go func() { done <- tc.wait(context.Background(), s) }()
			w1, _ := s.Watch(metav1.ListOptions{})
			defer w1.Stop()
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("returned %v after one watch", err)
			default:
			}
			w2, _ := s.Watch(metav1.ListOptions{})
			defer w2.Stop()
			if err := <-done; err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithCancel(context.Background())
			go func() { done <- s.WaitForWatchers(ctx, 3) }()
			synctest.Wait()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
		})
	}
}
