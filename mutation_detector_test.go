package cache

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMutationDetector(t *testing.T) {
	cases := []struct {
		name       string
		mutate     bool
		add        interface{}
		wantFailed bool
	}{
		{name: "untouched object", add: infTestPod("ns", "a", "1")},
		{name: "mutated object", add: infTestPod("ns", "a", "1"), mutate: true, wantFailed: true},
		{name: "tombstone ignored", add: DeletedFinalStateUnknown{Key: "ns/a", Obj: infTestPod("ns", "a", "1")}},
		{name: "non-object ignored", add: "just a string"},
		{name: "nil pod ignored", add: (*v1.Pod)(nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newCacheMutationDetector("pods", clocktesting.NewFakeClock(time.Unix(0, 0)))
			var failure string
			d.failureFunc = func(msg string) { failure = msg }
			d.AddObject(tc.add)
			if tc.mutate {
				tc.add.(*v1.Pod).Labels = map[string]string{"changed": "yes"}
			}
			d.CompareObjects()
			if (failure != "") != tc.wantFailed {
				t.Fatalf("failure = %q, wantFailed %v", failure, tc.wantFailed)
			}
			if tc.wantFailed && failure != "cache pods modified" {
				t.Fatalf("failure message %q", failure)
			}
		})
	}
}

// TestMutationDetectorRun: Run compares at once and then every period, until stopped.
func TestMutationDetectorRun(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	d := newCacheMutationDetector("pods", clk)
	failures := make(chan string, 100)
	d.failureFunc = func(msg string) { failures <- msg }
	pod := infTestPod("ns", "a", "1")
	d.AddObject(pod)
	pod.Labels = map[string]string{"changed": "yes"}

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); d.Run(stop) }()
	for i := 0; i < 3; i++ {
		select {
		case <-failures:
		case <-time.After(infTestTimeout):
			t.Fatalf("comparison %d did not report the mutation", i)
		}
		for !clk.HasWaiters() {
			runtimeGosched()
		}
		clk.Step(time.Second)
	}
	close(stop)
	<-done
}

// TestMutationDetectorRetention: an object is compared for two retention windows, then
// forgotten.
func TestMutationDetectorRetention(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	d := newCacheMutationDetector("pods", clk)
	var failures int
	d.failureFunc = func(string) { failures++ }
	d.rotate() // starts the first window
	pod := infTestPod("ns", "a", "1")
	d.AddObject(pod)
	pod.Labels = map[string]string{"changed": "yes"}
	steps := []struct {
		advance time.Duration
		want    int // failures after this comparison
	}{
		{0, 1},
		{time.Minute, 2},
		{2 * time.Minute, 3}, // first rotation: kept as retained
		{3 * time.Minute, 3}, // second rotation: gone
	}
	for i, s := range steps {
		clk.Step(s.advance)
		d.rotate()
		d.CompareObjects()
		if failures != s.want {
			t.Fatalf("step %d: %d failures, want %d", i, failures, s.want)
		}
	}
}

func TestNewCacheMutationDetectorDisabled(t *testing.T) {
	if mutationDetectionEnabled {
		t.Skip("KUBE_CACHE_MUTATION_DETECTOR is set for this process")
	}
	d := NewCacheMutationDetector("pods")
	if _, ok := d.(dummyMutationDetector); !ok {
		t.Fatalf("detector is %T, want the no-op one", d)
	}
	stop := make(chan struct{})
	close(stop)
	d.AddObject(infTestPod("ns", "a", "1"))
	d.Run(stop) // returns at once
}
