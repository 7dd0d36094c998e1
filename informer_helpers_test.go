package cache

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	fcache "github.com/kcache/cache/testing"
)

// runtimeGosched yields while a test waits for another goroutine to reach a fake clock.
func runtimeGosched() { runtime.Gosched() }

// infTestTimeout bounds every wait in these tests; reaching it is a failure, not a pacing tool.
const infTestTimeout = 20 * time.Second

// infTestChecker is a DoneChecker the test completes by calling finish.
type infTestChecker struct {
	name string
	ch   chan struct{}
	once sync.Once
}

func newInfTestChecker(name string) *infTestChecker {
	return &infTestChecker{name: name, ch: make(chan struct{})}
}

func (c *infTestChecker) Name() string { return c.name }

func (c *infTestChecker) Done() <-chan struct{} { return c.ch }

func (c *infTestChecker) finish() { c.once.Do(func() { close(c.ch) }) }

// infTestEvent is one handler call as a recorder saw it.
type infTestEvent struct {
	kind    string // "add", "update", "delete"
	obj     interface{}
	old     interface{}
	initial bool
}

func (e infTestEvent) String() string {
	switch e.kind {
	case "update":
		return fmt.Sprintf("update %v->%v", e.old, e.obj)
	case "add":
		return fmt.Sprintf("add %v initial=%v", e.obj, e.initial)
	default:
		return fmt.Sprintf("%s %v", e.kind, e.obj)
	}
}

// infTestRecorder is a handler that sends every call to events and can be made to block
// before each call (gate) or to panic for chosen objects.
type infTestRecorder struct {
	events  chan infTestEvent
	gate    chan struct{} // if non-nil, each call first receives from it
	entered chan struct{} // if non-nil, each call sends to it before waiting on gate
	panicOn interface{}   // if non-nil, a call for this object panics after recording
}

func newInfTestRecorder() *infTestRecorder {
	return &infTestRecorder{events: make(chan infTestEvent, 1<<16)}
}

func (r *infTestRecorder) record(e infTestEvent) {
	if r.entered != nil {
		r.entered <- struct{}{}
	}
	if r.gate != nil {
		<-r.gate
	}
	r.events <- e
	if r.panicOn != nil && e.obj == r.panicOn {
		panic(fmt.Sprintf("handler fails on %v", e.obj))
	}
}

func (r *infTestRecorder) OnAdd(obj interface{}, initial bool) {
	r.record(infTestEvent{kind: "add", obj: obj, initial: initial})
}

func (r *infTestRecorder) OnUpdate(old, obj interface{}) {
	r.record(infTestEvent{kind: "update", obj: obj, old: old})
}

func (r *infTestRecorder) OnDelete(obj interface{}) { r.record(infTestEvent{kind: "delete", obj: obj}) }

// next returns the recorder's next event, failing the test after infTestTimeout.
func (r *infTestRecorder) next(t *testing.T) infTestEvent {
	t.Helper()
	select {
	case e := <-r.events:
		return e
	case <-time.After(infTestTimeout):
		t.Fatalf("no event within %v", infTestTimeout)
		return infTestEvent{}
	}
}

// expectNone fails if the recorder has an event queued right now.
func (r *infTestRecorder) expectNone(t *testing.T) {
	t.Helper()
	select {
	case e := <-r.events:
		t.Fatalf("unexpected event %v", e)
	default:
	}
}

// infTestWaitClosed fails the test if ch is not closed within infTestTimeout.
func infTestWaitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(infTestTimeout):
		t.Fatalf("%s did not happen within %v", what, infTestTimeout)
	}
}

// infTestRun runs inf until the test ends (or until the returned stop is called) and waits
// for Run to return.
func infTestRun(t *testing.T, inf SharedInformer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(infTestTimeout):
				t.Errorf("informer did not stop within %v", infTestTimeout)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// infTestWaitSynced waits for the informer and the given registrations.
func infTestWaitSynced(t *testing.T, inf SharedInformer, regs ...ResourceEventHandlerRegistration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), infTestTimeout)
	defer cancel()
	checkers := []DoneChecker{inf.HasSyncedChecker()}
	for _, r := range regs {
		checkers = append(checkers, r.HasSyncedChecker())
	}
	if !WaitFor(ctx, "", checkers...) {
		t.Fatal("informer or handlers did not sync")
	}
}

// infTestName returns "name@rv" of a pod, or "tombstone:name" of a DeletedFinalStateUnknown.
func infTestName(obj interface{}) string {
	switch o := obj.(type) {
	case *v1.Pod:
		return o.Name + "@" + o.ResourceVersion
	case DeletedFinalStateUnknown:
		return "tombstone:" + o.Obj.(*v1.Pod).Name
	default:
		return fmt.Sprintf("%T", obj)
	}
}

// infTestNext returns the next event of rec in a compact form: "add x@1 initial", "update
// x@1->x@2", "delete x@2".
func infTestNext(t *testing.T, rec *infTestRecorder) string {
	t.Helper()
	e := rec.next(t)
	switch e.kind {
	case "add":
		s := "add " + infTestName(e.obj)
		if e.initial {
			s += " initial"
		}
		return s
	case "update":
		return "update " + infTestName(e.old) + "->" + infTestName(e.obj)
	default:
		return "delete " + infTestName(e.obj)
	}
}

// infTestNextN returns the next n events, sorted (for events whose order is not defined, such
// as the initial list).
func infTestNextN(t *testing.T, rec *infTestRecorder, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = infTestNext(t, rec)
	}
	sort.Strings(out)
	return out
}

func infTestNewInformer(src *fcache.FakeControllerSource, resync time.Duration) *sharedIndexInformer {
	return newSharedIndexInformer(src, &v1.Pod{}, SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
	}, clock.RealClock{})
}

func infTestSorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// runInBubble runs inf until the bubble's test ends.
func runInBubble(t *testing.T, inf SharedInformer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
