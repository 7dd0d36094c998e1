package synctrack

import (
	"strings"
	"sync"
	"testing"
)

// trackerTestChecker is what both trackers offer besides their counting methods.
type trackerTestChecker interface {
	HasSynced() bool
	Done() <-chan struct{}
	Name() string
}

func trackerTestDone(c trackerTestChecker) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

func TestSingleFileTracker(t *testing.T) {
	type step string // "start", "finish", "upstream"
	cases := []struct {
		name  string
		steps []step
		want  []bool // HasSynced after each step
	}{
		{name: "upstream synced with nothing started", steps: []step{"upstream"}, want: []bool{true}},
		{name: "nothing happened", steps: nil, want: nil},
		{
			name:  "items finish before upstream syncs",
			steps: []step{"start", "start", "finish", "finish", "upstream"},
			want:  []bool{false, false, false, false, true},
		},
		{
			name:  "upstream syncs before the last item finishes",
			steps: []step{"start", "start", "upstream", "finish", "finish"},
			want:  []bool{false, false, false, false, true},
		},
		{
			name:  "stays synced after a later start",
			steps: []step{"upstream", "start", "finish"},
			want:  []bool{true, true, true},
		},
		{
			name:  "upstream reported twice",
			steps: []step{"start", "upstream", "upstream", "finish"},
			want:  []bool{false, false, false, true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, tracker := range []*SingleFileTracker{NewSingleFileTracker("sft"), {}} {
				if tracker.HasSynced() || trackerTestDone(tracker) {
					t.Fatalf("a new tracker is synced")
				}
				for i, s := range tc.steps {
					switch s {
					case "start":
						tracker.Start()
					case "finish":
						tracker.Finished()
					case "upstream":
						tracker.UpstreamHasSynced()
					}
					if got := tracker.HasSynced(); got != tc.want[i] {
						t.Fatalf("after step %d (%s): HasSynced = %v, want %v", i, s, got, tc.want[i])
					}
					if got := trackerTestDone(tracker); got != tc.want[i] {
						t.Fatalf("after step %d (%s): Done closed = %v, want %v", i, s, got, tc.want[i])
					}
				}
			}
		})
	}
}

func TestSingleFileTrackerNegativePanics(t *testing.T) {
	tracker := NewSingleFileTracker("x")
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("Finished without Start did not panic")
		}
		// Users' tests match client-go's panic text on this phrase.
		if msg, ok := r.(string); !ok || !strings.Contains(msg, "negative counter") {
			t.Fatalf("panic value %#v does not contain %q", r, "negative counter")
		}
	}()
	tracker.Finished()
}

func TestAsyncTracker(t *testing.T) {
	type step struct {
		op  string // "start", "finish", "upstream"
		key string
	}
	cases := []struct {
		name  string
		steps []step
		want  []bool
	}{
		{name: "upstream synced with nothing started", steps: []step{{op: "upstream"}}, want: []bool{true}},
		{
			name:  "keys finish in any order",
			steps: []step{{"start", "a"}, {"start", "b"}, {"upstream", ""}, {"finish", "b"}, {"finish", "a"}},
			want:  []bool{false, false, false, false, true},
		},
		{
			name:  "a key started twice is one key",
			steps: []step{{"start", "a"}, {"start", "a"}, {"upstream", ""}, {"finish", "a"}},
			want:  []bool{false, false, false, true},
		},
		{
			name:  "finishing an unknown key is harmless",
			steps: []step{{"start", "a"}, {"finish", "zzz"}, {"upstream", ""}, {"finish", "a"}},
			want:  []bool{false, false, false, true},
		},
		{
			name:  "finished before upstream",
			steps: []step{{"start", "a"}, {"finish", "a"}, {"upstream", ""}},
			want:  []bool{false, false, true},
		},
		{
			name:  "stays synced after a later start",
			steps: []step{{"upstream", ""}, {"start", "a"}},
			want:  []bool{true, true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, tracker := range []*AsyncTracker[string]{NewAsyncTracker[string]("at"), {}} {
				for i, s := range tc.steps {
					switch s.op {
					case "start":
						tracker.Start(s.key)
					case "finish":
						tracker.Finished(s.key)
					case "upstream":
						tracker.UpstreamHasSynced()
					}
					if got := tracker.HasSynced(); got != tc.want[i] {
						t.Fatalf("after step %d (%v): HasSynced = %v, want %v", i, s, got, tc.want[i])
					}
					if got := trackerTestDone(tracker); got != tc.want[i] {
						t.Fatalf("after step %d (%v): Done closed = %v, want %v", i, s, got, tc.want[i])
					}
				}
			}
		})
	}
}

func TestTrackerNames(t *testing.T) {
	cases := []struct {
		name    string
		tracker trackerTestChecker
		want    string
	}{
		{"single file", NewSingleFileTracker("informer + event handler h"), "informer + event handler h"},
		{"async", NewAsyncTracker[int]("workers"), "workers"},
		{"zero single file", &SingleFileTracker{}, ""},
		{"zero async", &AsyncTracker[int]{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tracker.Name(); got != tc.want {
				t.Fatalf("Name() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTrackersConcurrent races many finishing goroutines against UpstreamHasSynced: whatever
// the interleaving, the trackers end synced exactly once everything finished.
func TestTrackersConcurrent(t *testing.T) {
	const items = 200
	single := NewSingleFileTracker("s")
	async := NewAsyncTracker[int]("a")
	for i := 0; i < items; i++ {
		single.Start()
		async.Start(i)
	}
	var wg sync.WaitGroup
	for i := 0; i < items; i++ {
		wg.Go(func() {
			single.Finished()
			async.Finished(i)
		})
	}
	wg.Go(func() {
		single.UpstreamHasSynced()
		async.UpstreamHasSynced()
	})
	wg.Wait()
	<-single.Done()
	<-async.Done()
	if !single.HasSynced() || !async.HasSynced() {
		t.Fatal("trackers not synced after everything finished")
	}
}
