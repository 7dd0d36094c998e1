package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// sdTestFuncs is a handler whose OnAdd calls a function given later (after registration).
type sdTestFuncs struct {
	onAdd chan func(obj interface{})
}

func (h *sdTestFuncs) OnAdd(obj interface{}, _ bool) { (<-h.onAdd)(obj) }
func (h *sdTestFuncs) OnUpdate(_, _ interface{})     {}
func (h *sdTestFuncs) OnDelete(interface{})          {}

// TestShutDownEventHandlerWaitsForCallback: ShutDownEventHandler returns only after the
// callback in progress has returned, and the notifications queued behind it are dropped.
func TestShutDownEventHandlerWaitsForCallback(t *testing.T) {
	src := infTestSource("a")
	inf := infTestNewInformer(src, 0)
	blocked, other := newInfTestRecorder(), newInfTestRecorder()
	blocked.entered = make(chan struct{}, 1)
	blocked.gate = make(chan struct{})
	reg, err := inf.AddEventHandler(blocked)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(other); err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	<-blocked.entered // the handler is inside OnAdd(a) and stays there until the gate opens
	for i := range 5 {
		src.Add(infTestPod("ns", fmt.Sprintf("q%d", i), ""))
	}
	for range 6 { // a and q0..q4 reached the other handler, so they are queued for blocked too
		infTestNext(t, other)
	}

	returned := make(chan error, 1)
	go func() { returned <- ShutDownEventHandler(inf, reg) }()
	listener := reg.(*processorListener)
	for !listener.isClosed() {
		runtimeGosched()
	}
	select {
	case err := <-returned:
		t.Fatalf("ShutDownEventHandler returned (%v) while the callback was still running", err)
	default:
	}
	close(blocked.gate)
	if err := <-returned; err != nil {
		t.Fatalf("ShutDownEventHandler: %v", err)
	}
	if got := infTestNext(t, blocked); got != "add a@1 initial" {
		t.Fatalf("in-flight callback: got %q", got)
	}
	blocked.expectNone(t) // q0..q4 were dropped; the handler will not be called again
	src.Add(infTestPod("ns", "late", ""))
	if got := infTestNext(t, other); got != "add late@7" {
		t.Fatalf("other handler got %q", got)
	}
	blocked.expectNone(t)
	if err := ShutDownEventHandler(inf, reg); err != nil {
		t.Fatalf("second ShutDownEventHandler: %v", err)
	}
}

// TestShutDownEventHandlerFromOwnCallback: called from the handler's own callback it does not
// deadlock: it removes the handler and reports ErrShutDownFromOwnHandler. Called from another
// handler's callback it waits as usual.
func TestShutDownEventHandlerFromOwnCallback(t *testing.T) {
	src := infTestSource("a", "b")
	inf := infTestNewInformer(src, 0)
	self := &sdTestFuncs{onAdd: make(chan func(interface{}), 1)}
	reg, err := inf.AddEventHandler(self)
	if err != nil {
		t.Fatal(err)
	}
	victim := newInfTestRecorder()
	victimReg, err := inf.AddEventHandler(victim)
	if err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)

	errs := make(chan error, 2)
	self.onAdd <- func(interface{}) {
		errs <- ShutDownEventHandler(inf, reg)       // own handle: must not wait for itself
		errs <- ShutDownEventHandler(inf, victimReg) // another handler: waits for it
	}
	ownErr, otherErr := <-errs, <-errs
	if !errors.Is(ownErr, ErrShutDownFromOwnHandler) {
		t.Fatalf("own handle: err = %v, want ErrShutDownFromOwnHandler", ownErr)
	}
	if otherErr != nil {
		t.Fatalf("other handle from a callback: %v", otherErr)
	}
	infTestWaitClosed(t, reg.(*processorListener).ShutdownChan(), "self-removed handler's stop")
	if len(self.onAdd) != 0 {
		t.Fatal("the handler was called again after removing itself")
	}
	if err := ShutDownEventHandler(inf, reg); err != nil { // from outside, once stopped
		t.Fatalf("ShutDownEventHandler from the test goroutine: %v", err)
	}
}

// sdTestInformer is a SharedInformer of another implementation: only RemoveEventHandler is
// implemented.
type sdTestInformer struct {
	SharedInformer
	removed []ResourceEventHandlerRegistration
}

func (f *sdTestInformer) RemoveEventHandler(h ResourceEventHandlerRegistration) error {
	f.removed = append(f.removed, h)
	return nil
}

// sdTestHandle is a foreign registration with a ShutdownChan.
type sdTestHandle struct {
	infTestForeignRegistration
	ch chan struct{}
}

func (h sdTestHandle) ShutdownChan() <-chan struct{} { return h.ch }

// TestShutDownEventHandlerHandles covers handles that are not the informer's own running
// handlers.
func TestShutDownEventHandlerHandles(t *testing.T) {
	running := infTestNewInformer(infTestSource("a"), 0)
	rec := newInfTestRecorder()
	otherReg, err := running.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	infTestRun(t, running)
	infTestWaitSynced(t, running, otherReg)

	idle := infTestNewInformer(infTestSource("a"), 0)
	idleReg, err := idle.AddEventHandler(newInfTestRecorder())
	if err != nil {
		t.Fatal(err)
	}
	closedCh := make(chan struct{})
	close(closedCh)

	cases := []struct {
		name     string
		informer SharedInformer
		handle   ResourceEventHandlerRegistration
		wantErr  bool
	}{
		{name: "informer never started", informer: idle, handle: idleReg},
		{name: "already shut down", informer: idle, handle: idleReg},
		{name: "foreign handle type", informer: idle, handle: newInfTestChecker("x").asRegistration(), wantErr: true},
		{name: "nil handle", informer: idle, handle: nil, wantErr: true},
		{name: "handle of another running informer", informer: idle, handle: otherReg, wantErr: true},
		{name: "foreign informer, handle without ShutdownChan", informer: &sdTestInformer{},
			handle: newInfTestChecker("x").asRegistration(), wantErr: true},
		{name: "foreign informer, handle with ShutdownChan", informer: &sdTestInformer{},
			handle: sdTestHandle{ch: closedCh}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ShutDownEventHandler(tc.informer, tc.handle)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
	// The other informer's handler was left alone.
	if !running.processor.hasListener(otherReg) {
		t.Fatal("a handle of another informer was removed")
	}
}

// TestShutDownEventHandlerAfterStop: once the informer has stopped, every handler has stopped
// too and ShutDownEventHandler returns at once.
func TestShutDownEventHandlerAfterStop(t *testing.T) {
	inf := infTestNewInformer(infTestSource("a"), 0)
	rec := newInfTestRecorder()
	reg, err := inf.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	stop := infTestRun(t, inf)
	infTestWaitSynced(t, inf, reg)
	stop()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs { // concurrent calls are fine too
		wg.Go(func() { errs[i] = ShutDownEventHandler(inf, reg) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("ShutDownEventHandler after stop: %v", err)
		}
	}
	infTestWaitClosed(t, reg.(*processorListener).ShutdownChan(), "ShutdownChan after stop")
}

func TestCurrentGoroutineID(t *testing.T) {
	here := currentGoroutineID()
	if here == 0 {
		t.Fatal("cannot read the goroutine id")
	}
	if again := currentGoroutineID(); again != here {
		t.Fatalf("id changed on the same goroutine: %d then %d", here, again)
	}
	other := make(chan uint64)
	go func() { other <- currentGoroutineID() }()
	if id := <-other; id == here || id == 0 {
		t.Fatalf("another goroutine's id %d, this one's %d", id, here)
	}
}
