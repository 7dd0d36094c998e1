package cache

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestProcessorListenerPanic: with utilruntime.ReallyCrash off, a panic is reported to
// utilruntime.PanicHandlers, the item is skipped, and the next item comes after a one-second
// pause on the clock. A panicking initial add still counts as processed.
func TestProcessorListenerPanic(t *testing.T) {
	oldCrash, oldHandlers := utilruntime.ReallyCrash, utilruntime.PanicHandlers
	var reported atomic.Int32
	utilruntime.ReallyCrash = false
	utilruntime.PanicHandlers = []func(context.Context, interface{}){func(context.Context, interface{}) { reported.Add(1) }}
	defer func() { utilruntime.ReallyCrash, utilruntime.PanicHandlers = oldCrash, oldHandlers }()

	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	rec := newInfTestRecorder()
	rec.panicOn = "bad"
	up := newInfTestChecker("up")
	l := infTestListener(rec, up, clk)
	p := newSharedProcessor(clk)
	p.addListener(l, []interface{}{"bad"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.run(ctx)
	defer func() { cancel(); infTestWaitClosed(t, l.stopped, "listener exit") }()

	l.add(infTestAdd("good", false))
	if e := rec.next(t); e.obj != "bad" {
		t.Fatalf("first event %v", e)
	}
	p.markUpstreamSynced()
	infTestWaitClosed(t, l.HasSyncedChecker().Done(), "sync despite the panicking initial add")
	if reported.Load() != 1 {
		t.Fatalf("panic reported %d times, want 1", reported.Load())
	}
	for !clk.HasWaiters() {
		runtimeGosched()
	}
	rec.expectNone(t)
	clk.Step(pauseAfterPanic)
	if e := rec.next(t); e.obj != "good" {
		t.Fatalf("after the pause got %v", e)
	}
}

// TestProcessorListenerSlowHandlerTrace: a slow call is logged only while the backlog is
// longer than initialBufferSize.
func TestProcessorListenerSlowHandlerTrace(t *testing.T) {
	cases := []struct {
		name    string
		backlog int
		slow    time.Duration
		wantLog bool
	}{
		{name: "slow call, long backlog", backlog: initialBufferSize + 10, slow: 2 * slowHandlerThreshold, wantLog: true},
		{name: "fast call, long backlog", backlog: initialBufferSize + 10, slow: slowHandlerThreshold / 2},
		{name: "slow call, short backlog", backlog: 10, slow: 2 * slowHandlerThreshold},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, logs := infTestLogContext(context.Background())
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			gate := make(chan struct{})
			calls := make(chan struct{}, tc.backlog+2)
			first := true
			h := ResourceEventHandlerFuncs{AddFunc: func(interface{}) {
				if first {
					<-gate
					clk.Step(tc.slow)
					first = false
				}
				calls <- struct{}{}
			}}
			l := newProcessListener(klog.FromContext(ctx), h, 0, 0, clk, newInfTestChecker("up"))
			for i := 0; i < tc.backlog+2; i++ {
				l.add(infTestAdd(i, false))
			}
			var wg sync.WaitGroup
			l.start(&wg) // after queueing, so that the first call sees the whole backlog
			defer func() { l.close(); wg.Wait() }()
			close(gate)
			for i := 0; i < tc.backlog+2; i++ {
				select {
				case <-calls:
				case <-time.After(infTestTimeout):
					t.Fatal("handler calls did not finish")
				}
			}
			got := strings.Contains(logs.String(), `processorListener handler`)
			if got != tc.wantLog {
				t.Fatalf("logged = %v, want %v:\n%s", got, tc.wantLog, logs.String())
			}
			if tc.wantLog && !strings.Contains(logs.String(), "pendingNotifications") {
				t.Fatalf("log lacks the backlog:\n%s", logs.String())
			}
		})
	}
}

// BenchmarkListener measures add → handler for one listener with parallel producers, like
// client-go's BenchmarkListener.
func BenchmarkListener(b *testing.B) {
	var calls atomic.Int64
	var wg sync.WaitGroup
	h := ResourceEventHandlerFuncs{AddFunc: func(interface{}) {
		calls.Add(1)
		wg.Done()
	}}
	l := newProcessListener(klog.Background(), h, 0, 0, clock.RealClock{}, newInfTestChecker("up"))
	var runners sync.WaitGroup
	l.start(&runners)
	defer func() { l.close(); runners.Wait() }()
	wg.Add(b.N)
	b.SetParallelism(5)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.add(infTestAdd("obj", false))
		}
	})
	wg.Wait()
}

// TestProcessorListenerContainPanics: with containPanics, a panic neither crashes (even with
// utilruntime.ReallyCrash on, the default) nor pauses the listener: it is counted, the first
// is logged with the handler's name and stack, the notification is dropped, and a panicking
// initial-list add still counts as processed. (The second panic, at the same instant, is
// counted but its stack not logged: see TestProcessorListenerPanicLogRate.)
func TestProcessorListenerContainPanics(t *testing.T) {
	if !utilruntime.ReallyCrash {
		t.Fatal("test expects utilruntime.ReallyCrash on")
	}
	defer ResetInformerNamesForTesting()
	var log coTestLog
	metrics := &coTestMetrics{}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	rec := newInfTestRecorder()
	rec.panicOn = "bad"
	up := newInfTestChecker("up")
	l := newProcessListener(log.logger(), rec, 0, 0, clk, up)
	l.configure(-1, true, newHandlerMetricsForTest(metrics))
	p := newSharedProcessor(clk)
	p.addListener(l, []interface{}{"bad"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()

	l.add(infTestAdd("good", false))
	l.add(updateNotification("bad", "bad"))
	l.add(infTestAdd("after", false))
	for _, want := range []interface{}{"bad", "good", "bad", "after"} {
		if e := rec.next(t); e.obj != want {
			t.Fatalf("got %v, want %v", e, want)
		}
	}
	if clk.HasWaiters() {
		t.Fatal("listener paused after a contained panic")
	}
	p.markUpstreamSynced()
	infTestWaitClosed(t, l.HasSyncedChecker().Done(), "sync despite the panicking initial add")
	if n := metrics.panics.n.Load(); n != 2 {
		t.Fatalf("panics counted %d, want 2", n)
	}
	if n := log.count("Event handler panicked, notification dropped"); n != 1 {
		t.Fatalf("logged %d panics, want 1:\n%s", n, strings.Join(log.lines, "\n"))
	}
	if log.count(l.handlerName) < 1 || log.count("handler fails on bad") < 1 || log.count("processor_listener") < 1 {
		t.Fatalf("panic log lacks the handler name, the panic value or the stack:\n%s", strings.Join(log.lines, "\n"))
	}
}

// newHandlerMetricsForTest returns the handler metrics of a provider under a reserved name.
func newHandlerMetricsForTest(provider InformerMetricsProvider) *handlerMetrics {
	ResetInformerNamesForTesting()
	name, _ := NewInformerName("handler-metrics-test")
	return newHandlerMetrics(name.WithResource(schema.GroupVersionResource{Resource: "pods"}), provider, "h")
}

// TestProcessorListenerPanicLogRate: a handler whose contained panics repeat has every panic
// counted, but its stacks logged at most once per panicLogInterval on the listener's clock;
// the panics in between go to V(4) without a stack, and the next logged stack says how many
// there were. Each handler has its own budget.
func TestProcessorListenerPanicLogRate(t *testing.T) {
	defer ResetInformerNamesForTesting()
	var log coTestLog
	logger := funcr.New(func(_, args string) {
		log.mu.Lock()
		defer log.mu.Unlock()
		log.lines = append(log.lines, args)
	}, funcr.Options{Verbosity: 4})
	metrics := &coTestMetrics{}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	up := newInfTestChecker("up")
	newListener := func(metrics *handlerMetrics) (*processorListener, *infTestRecorder) {
		rec := newInfTestRecorder()
		rec.panicOn = "bad"
		l := newProcessListener(logger, rec, 0, 0, clk, up)
		l.configure(-1, true, metrics)
		return l, rec
	}
	a, recA := newListener(newHandlerMetricsForTest(metrics))
	b, recB := newListener(nil)
	p := newSharedProcessor(clk)
	p.addListener(a, nil)
	p.addListener(b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()

	// panics delivers n panicking notifications to both handlers and waits for them.
	panics := func(n int) {
		t.Helper()
		for range n {
			p.distribute(updateNotification("bad", "bad"), false)
		}
		for _, rec := range []*infTestRecorder{recA, recB} {
			for range n {
				rec.next(t)
			}
		}
		// The panic is reported after the handler call the recorder saw: wait for the
		// listener to take the next notification, which it does only after reporting.
		p.distribute(updateNotification("ok", "ok"), false)
		for _, rec := range []*infTestRecorder{recA, recB} {
			if e := rec.next(t); e.obj != "ok" {
				t.Fatalf("got %v, want the notification after the panics", e)
			}
		}
	}
	stacks := func() int { return log.count("Event handler panicked, notification dropped") }
	steps := []struct {
		advance    time.Duration
		panics     int
		wantStacks int    // logged stacks so far, both handlers
		wantQuiet  int    // V(4) lines so far, both handlers
		wantNote   string // in the log once the step is done
	}{
		{0, 5, 2, 8, ""},
		{panicLogInterval / 2, 3, 2, 14, ""},
		{panicLogInterval / 2, 2, 4, 16, "panicsNotLogged\"=7"},
		{panicLogInterval, 1, 6, 16, ""},
	}
	total := 0
	for i, st := range steps {
		clk.Step(st.advance)
		panics(st.panics)
		total += st.panics
		if got := stacks(); got != st.wantStacks {
			t.Fatalf("step %d: %d stacks logged, want %d:\n%s", i, got, st.wantStacks, strings.Join(log.lines, "\n"))
		}
		if got := log.count("stack not logged"); got != st.wantQuiet {
			t.Fatalf("step %d: %d V(4) lines, want %d:\n%s", i, got, st.wantQuiet, strings.Join(log.lines, "\n"))
		}
		if st.wantNote != "" && log.count(st.wantNote) != 2 {
			t.Fatalf("step %d: want %s from both handlers:\n%s", i, st.wantNote, strings.Join(log.lines, "\n"))
		}
		if n := metrics.panics.n.Load(); int(n) != total {
			t.Fatalf("step %d: %d panics counted, want %d", i, n, total)
		}
	}
	if log.count("stack\"=") != stacks() || log.count("processor_listener") < stacks() {
		t.Fatalf("a logged panic lacks its stack:\n%s", strings.Join(log.lines, "\n"))
	}
}
