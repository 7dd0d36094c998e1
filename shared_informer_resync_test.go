package cache

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestSharedInformerResyncPerHandler: with a fake clock, each handler gets resyncs (updates
// with the same old and new object) at its own period, and handlers without one get none.
//
// It runs in a synctest bubble so that synctest.Wait tells when the informer is idle again
// (the reflector waiting on its next resync timer, every notification delivered); which
// waiters the fake clock has at a given moment is not something the test can rely on.
func TestSharedInformerResyncPerHandler(t *testing.T) {
	synctest.Test(t, infTestResyncPerHandler)
}

func infTestResyncPerHandler(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	src := infTestSource("a", "b")
	inf := newSharedIndexInformer(src, &v1.Pod{}, SharedIndexInformerOptions{ResyncPeriod: time.Second}, clk)
	periods := []time.Duration{0, time.Second, 3 * time.Second}
	recs := make([]*infTestRecorder, len(periods))
	for i, p := range periods {
		recs[i] = newInfTestRecorder()
		if _, err := inf.AddEventHandlerWithResyncPeriod(recs[i], p); err != nil {
			t.Fatal(err)
		}
	}
	infTestRun(t, inf)
	infTestWaitSynced(t, inf)
	for _, r := range recs {
		infTestNextN(t, r, 2)
	}

	objects := 2
	due := [][]bool{ // per step, per handler
		{false, true, false},
		{false, true, false},
		{false, true, true},
		{false, true, false},
	}
	for step, want := range due {
		// The reflector is waiting on its resync timer (armed when its watch started, or
		// re-armed after the previous resync) and every notification has been delivered.
		synctest.Wait()
		if !clk.HasWaiters() {
			t.Fatalf("step %d: the reflector is not waiting for a resync", step)
		}
		clk.Step(time.Second)
		synctest.Wait()
		for h, r := range recs {
			if !want[h] {
				r.expectNone(t)
				continue
			}
			got := infTestNextN(t, r, objects)
			for _, g := range got {
				if !strings.HasPrefix(g, "update ") {
					t.Fatalf("step %d handler %d: %q, want a resync update", step, h, g)
				}
				parts := strings.SplitN(strings.TrimPrefix(g, "update "), "->", 2)
				if parts[0] != parts[1] {
					t.Fatalf("step %d handler %d: resync %q changes the object", step, h, g)
				}
			}
			r.expectNone(t)
		}
		// A new object reaches every handler and is resynced from the next step on.
		marker := fmt.Sprintf("m%d", step)
		src.Add(infTestPod("ns", marker, ""))
		for h, r := range recs {
			if got := infTestNext(t, r); !strings.HasPrefix(got, "add "+marker+"@") {
				t.Fatalf("step %d handler %d: got %q, want the marker", step, h, got)
			}
		}
		objects++
	}
}

// TestSharedInformerResyncPeriods checks how requested periods are adjusted.
func TestSharedInformerResyncPeriods(t *testing.T) {
	cases := []struct {
		name          string
		informer      time.Duration
		beforeStart   []time.Duration // handlers added before the start
		afterStart    []time.Duration // handlers added once running
		wantCheck     time.Duration
		wantListeners []time.Duration // in the order added
	}{
		{name: "no resync informer", informer: 0, beforeStart: []time.Duration{time.Minute}, wantCheck: 0,
			wantListeners: []time.Duration{0}},
		{name: "raised to the minimum", informer: time.Minute, beforeStart: []time.Duration{time.Millisecond},
			wantCheck: time.Second, wantListeners: []time.Duration{time.Second}},
		{name: "early short period lowers the check period", informer: time.Minute,
			beforeStart: []time.Duration{time.Hour, 10 * time.Second}, wantCheck: 10 * time.Second,
			wantListeners: []time.Duration{time.Hour, 10 * time.Second}},
		{name: "late short period is raised to the check period", informer: time.Minute,
			afterStart: []time.Duration{10 * time.Second, 0}, wantCheck: time.Minute,
			wantListeners: []time.Duration{time.Minute, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inf := infTestNewInformer(infTestSource(), tc.informer)
			var regs []ResourceEventHandlerRegistration
			for _, p := range tc.beforeStart {
				r, err := inf.AddEventHandlerWithResyncPeriod(newInfTestRecorder(), p)
				if err != nil {
					t.Fatal(err)
				}
				regs = append(regs, r)
			}
			if len(tc.afterStart) > 0 {
				infTestRun(t, inf)
				infTestWaitSynced(t, inf)
			}
			for _, p := range tc.afterStart {
				r, err := inf.AddEventHandlerWithResyncPeriod(newInfTestRecorder(), p)
				if err != nil {
					t.Fatal(err)
				}
				regs = append(regs, r)
			}
			inf.startedMu.Lock()
			check := inf.resyncCheckPeriod
			inf.startedMu.Unlock()
			if check != tc.wantCheck {
				t.Fatalf("resync check period %v, want %v", check, tc.wantCheck)
			}
			for i, r := range regs {
				l := r.(*processorListener)
				l.resyncMu.Lock()
				got := l.resyncPeriod
				l.resyncMu.Unlock()
				if got != tc.wantListeners[i] {
					t.Fatalf("handler %d: period %v, want %v", i, got, tc.wantListeners[i])
				}
			}
		})
	}
}
