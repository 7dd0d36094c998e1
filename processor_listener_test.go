package cache

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func infTestAdd(obj interface{}, initial bool) notification {
	return addNotification(obj, initial)
}

// infTestProcessor runs a processor with the given listeners until the test ends.
func infTestProcessor(t *testing.T, clk clock.Clock, listeners ...*processorListener) *sharedProcessor {
	t.Helper()
	p := newSharedProcessor(clk)
	for _, l := range listeners {
		p.addListener(l, nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return p
}

func infTestListener(h ResourceEventHandler, upstream DoneChecker, clk clock.Clock) *processorListener {
	return newProcessListener(klog.Background(), h, 0, 0, clk, upstream)
}

func TestProcessorListenerDeliversInOrder(t *testing.T) {
	cases := []struct {
		name string
		in   []notification
		want []string
	}{
		{
			name: "every kind",
			in: []notification{
				infTestAdd("a", true),
				updateNotification("a", "a2"),
				deleteNotification("a2"),
				infTestAdd("b", false),
			},
			want: []string{"add a initial=true", "update a->a2", "delete a2", "add b initial=false"},
		},
		{name: "nothing", in: nil, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newInfTestRecorder()
			l := infTestListener(rec, newInfTestChecker("up"), clock.RealClock{})
			infTestProcessor(t, clock.RealClock{}, l)
			for _, n := range tc.in {
				l.add(n)
			}
			for _, w := range tc.want {
				if got := rec.next(t).String(); got != w {
					t.Fatalf("got %q, want %q", got, w)
				}
			}
		})
	}
}

// TestProcessorBlockedHandlerDoesNotStallOthers: one handler blocks; the other keeps
// receiving; once released, the blocked one gets everything in order.
func TestProcessorBlockedHandlerDoesNotStallOthers(t *testing.T) {
	const events = 5000
	slow, fast := newInfTestRecorder(), newInfTestRecorder()
	slow.gate = make(chan struct{})
	up := newInfTestChecker("up")
	p := infTestProcessor(t, clock.RealClock{},
		infTestListener(slow, up, clock.RealClock{}), infTestListener(fast, up, clock.RealClock{}))
	for i := 0; i < events; i++ {
		p.distribute(infTestAdd(i, false), false)
	}
	for i := 0; i < events; i++ {
		if e := fast.next(t); e.obj != i {
			t.Fatalf("fast handler: event %d is %v", i, e)
		}
	}
	slow.expectNone(t)
	close(slow.gate)
	for i := 0; i < events; i++ {
		if e := slow.next(t); e.obj != i {
			t.Fatalf("slow handler: event %d is %v", i, e)
		}
	}
}

// TestProcessorListenerBufferShrinks: a backlog far above the initial size grows the buffer,
// and draining gives the memory back.
func TestProcessorListenerBufferShrinks(t *testing.T) {
	rec := newInfTestRecorder()
	rec.gate = make(chan struct{})
	l := infTestListener(rec, newInfTestChecker("up"), clock.RealClock{})
	infTestProcessor(t, clock.RealClock{}, l)
	const backlog = 20 * initialBufferSize
	for i := 0; i < backlog; i++ {
		l.add(infTestAdd(i, false))
	}
	l.mu.Lock()
	grown := l.pending.Cap()
	l.mu.Unlock()
	if grown < backlog-1 {
		t.Fatalf("buffer capacity %d for a backlog of %d", grown, backlog)
	}
	close(rec.gate)
	for i := 0; i < backlog; i++ {
		rec.next(t)
	}
	l.mu.Lock()
	shrunk, n := l.pending.Cap(), l.pending.Len()
	l.mu.Unlock()
	if n != 0 || shrunk > initialBufferSize {
		t.Fatalf("after draining: %d pending, capacity %d; want 0 and at most %d", n, shrunk, initialBufferSize)
	}
}

// TestProcessorRemoveListener: removal stops delivery and ends the listener's goroutine, even
// with a backlog; removing again, or a foreign handle, is handled.
func TestProcessorRemoveListener(t *testing.T) {
	removed, kept := newInfTestRecorder(), newInfTestRecorder()
	removed.gate = make(chan struct{})
	up := newInfTestChecker("up")
	lr, lk := infTestListener(removed, up, clock.RealClock{}), infTestListener(kept, up, clock.RealClock{})
	p := infTestProcessor(t, clock.RealClock{}, lr, lk)
	for i := 0; i < 10; i++ {
		p.distribute(infTestAdd(i, false), false)
	}
	removed.gate <- struct{}{} // let exactly one call through
	if e := removed.next(t); e.obj != 0 {
		t.Fatalf("first event %v", e)
	}
	if err := p.removeListener(lr); err != nil {
		t.Fatalf("removeListener: %v", err)
	}
	close(removed.gate)
	infTestWaitClosed(t, lr.stopped, "removed listener's goroutine exit")
	if p.hasListener(lr) {
		t.Fatal("removed listener still registered")
	}
	p.distribute(infTestAdd("after", false), false)
	for i := 0; i < 10; i++ {
		kept.next(t)
	}
	if e := kept.next(t); e.obj != "after" {
		t.Fatalf("kept handler got %v", e)
	}
	// At most the call that was already past the gate when removal happened may have run.
	for len(removed.events) > 0 {
		if e := <-removed.events; e.obj == "after" {
			t.Fatalf("removed handler received %v", e)
		}
	}
	cases := []struct {
		name    string
		handle  ResourceEventHandlerRegistration
		wantErr bool
	}{
		{"again", lr, false},
		{"foreign handle", newInfTestChecker("x").asRegistration(), true},
		{"nil handle", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.removeListener(tc.handle); (err != nil) != tc.wantErr {
				t.Fatalf("removeListener: err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

// asRegistration wraps the checker as a registration of a foreign type.
func (c *infTestChecker) asRegistration() ResourceEventHandlerRegistration {
	return infTestForeignRegistration{c}
}

type infTestForeignRegistration struct{ c *infTestChecker }

func (r infTestForeignRegistration) HasSynced() bool               { return IsDone(r.c) }
func (r infTestForeignRegistration) HasSyncedChecker() DoneChecker { return r.c }

// TestProcessorListenerHasSynced: a handler is synced only once the upstream is synced and it
// has returned from every initial add.
func TestProcessorListenerHasSynced(t *testing.T) {
	cases := []struct {
		name           string
		initial        int
		upstreamFirst  bool
		wantBeforeLast bool
	}{
		{name: "upstream syncs first", initial: 3, upstreamFirst: true},
		{name: "handler finishes first", initial: 3, upstreamFirst: false},
		{name: "empty initial list", initial: 0, upstreamFirst: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newInfTestRecorder()
			rec.gate = make(chan struct{})
			up := newInfTestChecker("Informer")
			l := infTestListener(rec, up, clock.RealClock{})
			p := newSharedProcessor(clock.RealClock{})
			objs := make([]interface{}, tc.initial)
			for i := range objs {
				objs[i] = i
			}
			p.addListener(l, objs)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go p.run(ctx)
			defer func() { cancel(); infTestWaitClosed(t, l.stopped, "listener exit") }()

			if want := "Informer + event handler " + nameForHandler(rec); l.HasSyncedChecker().Name() != want {
				t.Fatalf("checker name %q, want %q", l.HasSyncedChecker().Name(), want)
			}
			if tc.upstreamFirst {
				p.markUpstreamSynced()
			}
			for i := 0; i < tc.initial; i++ {
				if l.HasSynced() {
					t.Fatalf("synced before initial add %d was processed", i)
				}
				rec.gate <- struct{}{}
				if e := rec.next(t); e.obj != i || !e.initial {
					t.Fatalf("event %d: %v", i, e)
				}
			}
			if !tc.upstreamFirst {
				// Every initial add is processed, but the informer has not synced.
				if l.HasSynced() {
					t.Fatal("synced before upstream")
				}
				p.markUpstreamSynced()
			}
			infTestWaitClosed(t, l.HasSyncedChecker().Done(), "handler sync")
			if !l.HasSynced() {
				t.Fatal("HasSynced false after Done closed")
			}
		})
	}
}

func TestProcessorSyncDistribution(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	up := newInfTestChecker("up")
	recs := []*infTestRecorder{newInfTestRecorder(), newInfTestRecorder(), newInfTestRecorder()}
	periods := []time.Duration{0, 10 * time.Second, 30 * time.Second}
	p := newSharedProcessor(clk)
	for i, r := range recs {
		p.addListener(newProcessListener(klog.Background(), r, periods[i], periods[i], clk, up), nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()

	// Before any resync check every listener takes sync updates (client-go's initial state).
	p.distribute(updateNotification("s0", "s0"), true)
	for i, r := range recs {
		if e := r.next(t); e.obj != "s0" {
			t.Fatalf("listener %d: %v", i, e)
		}
	}
	steps := []struct {
		advance time.Duration
		wantDue bool
		want    []bool // which listeners get the sync update
	}{
		{advance: 5 * time.Second, wantDue: false, want: []bool{false, false, false}},
		{advance: 5 * time.Second, wantDue: true, want: []bool{false, true, false}},
		{advance: 10 * time.Second, wantDue: true, want: []bool{false, true, false}},
		{advance: 10 * time.Second, wantDue: true, want: []bool{false, true, true}},
		{advance: 1 * time.Second, wantDue: false, want: []bool{false, false, false}},
	}
	for i, s := range steps {
		clk.Step(s.advance)
		if due := p.shouldResync(); due != s.wantDue {
			t.Fatalf("step %d: shouldResync = %v, want %v", i, due, s.wantDue)
		}
		obj := fmt.Sprintf("s%d", i+1)
		p.distribute(updateNotification(obj, obj), true)
		p.distribute(infTestAdd("marker"+obj, false), false)
		for j, r := range recs {
			e := r.next(t)
			if s.want[j] {
				if e.obj != obj {
					t.Fatalf("step %d listener %d: got %v, want the sync update", i, j, e)
				}
				e = r.next(t)
			}
			if e.obj != "marker"+obj {
				t.Fatalf("step %d listener %d: got %v, want the marker", i, j, e)
			}
		}
	}
}

func TestDetermineResyncPeriod(t *testing.T) {
	cases := []struct {
		name           string
		desired, check time.Duration
		want           time.Duration
	}{
		{"handler wants none", 0, time.Minute, 0},
		{"informer does none", time.Minute, 0, 0},
		{"raised to the check period", time.Second, time.Minute, time.Minute},
		{"kept", time.Hour, time.Minute, time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := determineResyncPeriod(klog.Background(), tc.desired, tc.check); got != tc.want {
				t.Fatalf("determineResyncPeriod(%v, %v) = %v, want %v", tc.desired, tc.check, got, tc.want)
			}
		})
	}
}

func TestProcessorResyncCheckPeriodChanged(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	up := newInfTestChecker("up")
	p := newSharedProcessor(clk)
	requested := []time.Duration{0, 2 * time.Second, time.Minute}
	var ls []*processorListener
	for _, r := range requested {
		l := newProcessListener(klog.Background(), newInfTestRecorder(), r, r, clk, up)
		ls = append(ls, l)
		p.addListener(l, nil)
	}
	p.resyncCheckPeriodChanged(klog.Background(), 10*time.Second)
	want := []time.Duration{0, 10 * time.Second, time.Minute}
	for i, l := range ls {
		l.resyncMu.Lock()
		got := l.resyncPeriod
		l.resyncMu.Unlock()
		if got != want[i] {
			t.Fatalf("listener %d: period %v, want %v", i, got, want[i])
		}
	}
}

// TestProcessorStop: stopping closes every listener, drops later notifications and refuses new
// listeners.
func TestProcessorStop(t *testing.T) {
	rec := newInfTestRecorder()
	up := newInfTestChecker("up")
	l := infTestListener(rec, up, clock.RealClock{})
	p := newSharedProcessor(clock.RealClock{})
	p.addListener(l, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	p.distribute(infTestAdd("x", false), false)
	rec.next(t)
	cancel()
	infTestWaitClosed(t, done, "processor stop")
	infTestWaitClosed(t, l.stopped, "listener stop")
	p.distribute(infTestAdd("late", false), false)
	rec.expectNone(t)
	late := infTestListener(newInfTestRecorder(), up, clock.RealClock{})
	if p.addListener(late, nil) {
		t.Fatal("addListener succeeded after stop")
	}
	// A listener that never ran still reports stopped once closed.
	late.close()
	infTestWaitClosed(t, late.stopped, "never-started listener stop")
}

// pendingForTest returns the number of queued notifications.
func (p *processorListener) pendingForTest() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pending.Len()
}
