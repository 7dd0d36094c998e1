package sharding

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeLock is a resourcelock.Interface whose calls are recorded; during each call the clock
// advances by callTime, and calls return err.
type fakeLock struct {
	clock    *testingclock.FakeClock
	callTime time.Duration
	// mu guards calls and err.
	mu    sync.Mutex
	calls []string
	err   error
}

func (l *fakeLock) do(op string) error {
	l.clock.Step(l.callTime)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, op)
	return l.err
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return &resourcelock.LeaderElectionRecord{}, nil, l.do("get")
}
func (l *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	return l.do("create")
}
func (l *fakeLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	if r.HolderIdentity == "" {
		return l.do("release")
	}
	return l.do("update")
}
func (l *fakeLock) RecordEvent(string) {}
func (l *fakeLock) Identity() string   { return "me" }
func (l *fakeLock) Describe() string   { return "ns/me" }
func (l *fakeLock) ops() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

var record = resourcelock.LeaderElectionRecord{HolderIdentity: "me"}

func TestFencedLockDeadline(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// callTime is how long each request takes.
		callTime time.Duration
		// renewAt are the instants (from the start) of renewals after the create.
		renewAt []time.Duration
		// fencedAt is when the fence must close (window = 10s − 2s = 8s after the last send).
		fencedAt time.Duration
	}{
		{"no renewal", 0, nil, 8 * time.Second},
		{"renewals move the deadline", 0, []time.Duration{3 * time.Second, 6 * time.Second}, 14 * time.Second},
		{"the deadline counts from the send, not the reply", time.Second, nil, 8 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := testingclock.NewFakeClock(start)
			inner := &fakeLock{clock: clk, callTime: tc.callTime}
			f := newFence()
			f.open()
			l := newFencedLock(inner, clk, f, 10*time.Second, 2*time.Second)
			defer l.stop()
			if err := l.Create(ctx, record); err != nil {
				t.Fatal(err)
			}
			for _, at := range tc.renewAt {
				clk.SetTime(start.Add(at))
				if err := l.Update(ctx, record); err != nil {
					t.Fatal(err)
				}
			}
			clk.SetTime(start.Add(tc.fencedAt - time.Millisecond))
			if f.isClosed() {
				t.Fatalf("fenced before %v", tc.fencedAt)
			}
			clk.SetTime(start.Add(tc.fencedAt))
			if !f.isClosed() || !l.wasLost() {
				t.Fatalf("not fenced (or not lost) at %v", tc.fencedAt)
			}
			if err := l.Update(ctx, record); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("renewal after the fence = %v, want ErrLeaseLost", err)
			}
		})
	}
}

func TestFencedLockLateRenewalDoesNotReopen(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	inner := &fakeLock{clock: clk}
	f := newFence()
	f.open()
	l := newFencedLock(inner, clk, f, 10*time.Second, 2*time.Second)
	defer l.stop()
	if err := l.Create(context.Background(), record); err != nil {
		t.Fatal(err)
	}
	// A renewal sent at 7s that takes 2s lands after the deadline of the create (8s): the fence
	// closes at 8s while it is in flight and stays closed.
	clk.SetTime(start.Add(7 * time.Second))
	inner.callTime = 2 * time.Second
	if err := l.Update(context.Background(), record); err != nil {
		t.Fatal(err)
	}
	if !f.isClosed() {
		t.Fatal("a renewal that landed after the deadline reopened the fence")
	}
}

func TestFencedLockRefusesToRecreate(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	inner := &fakeLock{clock: clk}
	f := newFence()
	f.open()
	l := newFencedLock(inner, clk, f, 10*time.Second, 2*time.Second)
	defer l.stop()
	if err := l.Create(context.Background(), record); err != nil {
		t.Fatal(err)
	}
	// The sharder deleted the lease after confirming this member gone; the elector's next
	// attempt creates it again, which must fail.
	if err := l.Create(context.Background(), record); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("second Create = %v, want ErrLeaseLost", err)
	}
	if got := inner.ops(); len(got) != 1 {
		t.Fatalf("inner lock calls %v, want one create", got)
	}
}

func TestFencedLockReleaseWaitsForWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := testingclock.NewFakeClock(time.Now())
		inner := &fakeLock{clock: clk}
		f := newFence()
		f.open()
		l := newFencedLock(inner, clk, f, 10*time.Second, 2*time.Second)
		if err := l.Create(context.Background(), record); err != nil {
			t.Fatal(err)
		}
		if !f.enter() {
			t.Fatal("fence refused work")
		}
		released := make(chan error, 1)
		go func() { released <- l.Update(context.Background(), resourcelock.LeaderElectionRecord{}) }()
		synctest.Wait()
		if got := inner.ops(); len(got) != 1 {
			t.Fatalf("released while work was in flight: %v", got)
		}
		if f.enter() {
			t.Fatal("fence admitted work during the release")
		}
		f.exit()
		if err := <-released; err != nil {
			t.Fatal(err)
		}
		if got := inner.ops(); len(got) != 2 || got[1] != "release" {
			t.Fatalf("inner lock calls %v, want create then release", got)
		}
	})
}

func TestLeaseTiming(t *testing.T) {
	cases := []struct {
		name    string
		in      LeaseTiming
		want    LeaseTiming
		wantErr bool
	}{
		{"defaults", LeaseTiming{}, LeaseTiming{15 * time.Second, 10 * time.Second, 2 * time.Second, 3 * time.Second}, false},
		{"short", LeaseTiming{LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond, SkewMargin: time.Second},
			LeaseTiming{4 * time.Second, 2 * time.Second, 500 * time.Millisecond, time.Second}, false},
		{"fractional lease", LeaseTiming{LeaseDuration: 1500 * time.Millisecond}, LeaseTiming{}, true},
		{"renewal outlasts the fence", LeaseTiming{LeaseDuration: 10 * time.Second, RenewDeadline: 8 * time.Second}, LeaseTiming{}, true},
		{"negative margin", LeaseTiming{SkewMargin: -time.Second}, LeaseTiming{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.withDefaults()
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidOptions) {
					t.Fatalf("error %v, want ErrInvalidOptions", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("withDefaults = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
