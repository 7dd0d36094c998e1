package cache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

// fifoTestDrainDelta closes f and pops everything left, describing each popped Deltas.
func fifoTestDrainDelta(t *testing.T, f *DeltaFIFO) []string {
	t.Helper()
	f.Close()
	var got []string
	for {
		item, err := f.Pop(func(interface{}, bool) error { return nil })
		if errors.Is(err, ErrFIFOClosed) {
			return got
		}
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
		ds := item.(Deltas)
		key, err := f.KeyOf(ds)
		if err != nil {
			t.Fatalf("KeyOf: %v", err)
		}
		got = append(got, fifoTestDescribeDeltas(key, ds))
	}
}

func TestDeltaFIFOSequences(t *testing.T) {
	a1, a2, a3 := fifoTestObj("a", 1), fifoTestObj("a", 2), fifoTestObj("a", 3)
	b1, b2 := fifoTestObj("b", 1), fifoTestObj("b", 2)
	c1 := fifoTestObj("c", 1)
	type op func(f *DeltaFIFO) error
	add := func(o *fifoTestItem) op { return func(f *DeltaFIFO) error { return f.Add(o) } }
	update := func(o *fifoTestItem) op { return func(f *DeltaFIFO) error { return f.Update(o) } }
	del := func(o interface{}) op { return func(f *DeltaFIFO) error { return f.Delete(o) } }
	replace := func(objs ...interface{}) op {
		return func(f *DeltaFIFO) error { return f.Replace(objs, "rv") }
	}
	resync := func(f *DeltaFIFO) error { return f.Resync() }

	cases := []struct {
		name     string
		known    *fifoTestKnown
		replaced bool
		ops      []op
		want     []string
	}{
		{
			name: "deltas of one key accumulate in order",
			ops:  []op{add(a1), update(a2), del(a3)},
			want: []string{"a: Added(1) Updated(2) Deleted(3)"},
		},
		{
			name: "keys pop in the order they were first queued",
			ops:  []op{add(a1), add(b1), update(a2), add(c1), update(b2)},
			want: []string{"a: Added(1) Updated(2)", "b: Added(1) Updated(2)", "c: Added(1)"},
		},
		{
			name: "two real deletions collapse into the older",
			ops:  []op{add(a1), del(a2), del(a3)},
			want: []string{"a: Added(1) Deleted(2)"},
		},
		{
			name: "a real deletion replaces a trailing tombstone",
			ops:  []op{add(a1), replace(), del(a2)},
			want: []string{"a: Added(1) Deleted(2)"},
		},
		{
			name: "a tombstone after a real deletion is dropped",
			ops:  []op{add(a1), del(a2), del(DeletedFinalStateUnknown{Key: "a", Obj: a3})},
			want: []string{"a: Added(1) Deleted(2)"},
		},
		{
			name: "non-consecutive deletions are kept",
			ops:  []op{add(a1), del(a1), add(a2), del(a2)},
			want: []string{"a: Added(1) Deleted(1) Added(2) Deleted(2)"},
		},
		{
			name: "delete of an unknown key is ignored without known objects",
			ops:  []op{del(a1), add(b1)},
			want: []string{"b: Added(1)"},
		},
		{
			name:  "delete of a key only in known objects is queued",
			known: fifoTestKnownOf(a1),
			ops:   []op{del(a2)},
			want:  []string{"a: Deleted(2)"},
		},
		{
			name:  "delete of a key in neither queue nor known objects is ignored",
			known: fifoTestKnownOf(b1),
			ops:   []op{del(a1)},
			want:  nil,
		},
		{
			name:  "delete is queued when the known-object lookup fails",
			known: &fifoTestKnown{objs: map[string]interface{}{}, failing: map[string]bool{"a": true}},
			ops:   []op{del(a1)},
			want:  []string{"a: Deleted(1)"},
		},
		{
			name: "replace emits Sync by default",
			ops:  []op{replace(a1, b1)},
			want: []string{"a: Sync(1)", "b: Sync(1)"},
		},
		{
			name:     "replace emits Replaced when asked",
			replaced: true,
			ops:      []op{replace(a1, b1)},
			want:     []string{"a: Replaced(1)", "b: Replaced(1)"},
		},
		{
			name:     "replace tombstones queued keys missing from the list with their newest object",
			replaced: true,
			ops:      []op{add(a1), update(a2), add(b1), replace(b2)},
			want:     []string{"a: Added(1) Updated(2) Deleted(tomb a 2)", "b: Added(1) Replaced(2)"},
		},
		{
			name:     "replace unwraps a queued tombstone's object",
			replaced: true,
			known:    fifoTestKnownOf(a1),
			ops:      []op{replace(), replace()},
			want:     []string{"a: Deleted(tomb a 1)"},
		},
		{
			name:     "replace tombstones known keys missing from the list",
			replaced: true,
			known:    fifoTestKnownOf(a1, b1, c1),
			ops:      []op{replace(b2)},
			want:     []string{"b: Replaced(2)", "a: Deleted(tomb a 1)", "c: Deleted(tomb c 1)"},
		},
		{
			name:     "replace does not tombstone a known key that is queued; the queued one is",
			replaced: true,
			known:    fifoTestKnownOf(a1),
			ops:      []op{update(a2), replace()},
			want:     []string{"a: Updated(2) Deleted(tomb a 2)"},
		},
		{
			name:     "replace tombstones a known key without object when the lookup fails or finds nothing",
			replaced: true,
			known: &fifoTestKnown{objs: map[string]interface{}{"a": a1}, failing: map[string]bool{"a": true},
				listOnly: map[string]bool{"b": true}},
			ops:  []op{replace()},
			want: []string{"a: Deleted(tomb a nil)", "b: Deleted(tomb b nil)"},
		},
		{
			name:     "replace keeps a queued deletion and adds no tombstone after it",
			replaced: true,
			known:    fifoTestKnownOf(a1),
			ops:      []op{del(a1), replace()},
			want:     []string{"a: Deleted(1)"},
		},
		{
			name:  "resync queues Sync for known keys without pending deltas",
			known: fifoTestKnownOf(a1, b1),
			ops:   []op{update(a2), resync},
			want:  []string{"a: Updated(2)", "b: Sync(1)"},
		},
		{
			name: "resync without known objects does nothing",
			ops:  []op{resync},
			want: nil,
		},
		{
			name:  "resync skips keys the known objects cannot return",
			known: &fifoTestKnown{objs: map[string]interface{}{"a": a1, "b": b1}, failing: map[string]bool{"a": true}, listOnly: map[string]bool{"c": true}},
			ops:   []op{resync},
			want:  []string{"b: Sync(1)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := DeltaFIFOOptions{EmitDeltaTypeReplaced: tc.replaced}
			if tc.known != nil {
				opts.KnownObjects = tc.known
			}
			f := NewDeltaFIFOWithOptions(opts)
			for i, o := range tc.ops {
				if err := o(f); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			if got := fifoTestDrainDelta(t, f); !slices.Equal(got, tc.want) {
				t.Errorf("popped\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestDeltaFIFOTransformer(t *testing.T) {
	// The transformer adds 100; tombstones and resynced objects must come out untouched.
	transform := func(obj interface{}) (interface{}, error) {
		item, ok := obj.(*fifoTestItem)
		if !ok {
			return nil, fmt.Errorf("unexpected %T", obj)
		}
		if item.Val < 0 {
			return nil, errors.New("negative")
		}
		return fifoTestObj(item.Name, item.Val+100), nil
	}
	known := fifoTestKnownOf(fifoTestObj("k", 7))
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Transformer: transform, KnownObjects: known, EmitDeltaTypeReplaced: true})
	if got := f.Transformer(); got == nil {
		t.Fatal("Transformer() = nil")
	}
	steps := []struct {
		name    string
		do      func() error
		wantErr bool
	}{
		{"add", func() error { return f.Add(fifoTestObj("a", 1)) }, false},
		{"update", func() error { return f.Update(fifoTestObj("a", 2)) }, false},
		{"delete", func() error { return f.Delete(fifoTestObj("a", 3)) }, false},
		{"delete tombstone", func() error { return f.Delete(DeletedFinalStateUnknown{Key: "a", Obj: fifoTestObj("a", 4)}) }, false},
		{"resync", f.Resync, false},
		{"replace", func() error { return f.Replace([]interface{}{fifoTestObj("b", 5), fifoTestObj("k", 7)}, "") }, false},
		{"failing transform on add", func() error { return f.Add(fifoTestObj("c", -1)) }, true},
		{"failing transform on replace leaves queue untouched", func() error {
			return f.Replace([]interface{}{fifoTestObj("d", 1), fifoTestObj("e", -1)}, "")
		}, true},
	}
	for _, s := range steps {
		if err := s.do(); (err != nil) != s.wantErr {
			t.Fatalf("%s: err = %v, wantErr %v", s.name, err, s.wantErr)
		}
	}
	// The tombstones (from Delete and from Replace) follow a real deletion, so they are dropped;
	// the resynced k keeps its known, untransformed value.
	want := []string{
		"a: Added(101) Updated(102) Deleted(103)",
		"k: Sync(7) Replaced(107)",
		"b: Replaced(105)",
	}
	if got := fifoTestDrainDelta(t, f); !slices.Equal(got, want) {
		t.Errorf("popped\n  %q\nwant\n  %q", got, want)
	}
}

func TestDeltaFIFOKeyErrors(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{EmitDeltaTypeReplaced: true})
	cases := []struct {
		name string
		do   func() error
	}{
		{"add", func() error { return f.Add(fifoTestNoMeta{}) }},
		{"update", func() error { return f.Update(nil) }},
		{"delete", func() error { return f.Delete(fifoTestNoMeta{}) }},
		{"replace", func() error { return f.Replace([]interface{}{fifoTestObj("a", 1), fifoTestNoMeta{}}, "") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			var keyErr KeyError
			if !errors.As(err, &keyErr) {
				t.Fatalf("err = %v, want a KeyError", err)
			}
		})
	}
	if got := fifoTestDrainDelta(t, f); len(got) != 0 {
		t.Errorf("queue holds %q after failed writes, want nothing", got)
	}
}

func TestDeltaFIFOKeyOf(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	cases := []struct {
		name    string
		obj     interface{}
		want    string
		wantErr error
	}{
		{"object", fifoTestObj("a", 1), "a", nil},
		{"tombstone", DeletedFinalStateUnknown{Key: "ns/b"}, "ns/b", nil},
		{"deltas use the newest object", Deltas{{Added, fifoTestObj("x", 1)}, {Deleted, DeletedFinalStateUnknown{Key: "c"}}}, "c", nil},
		{"empty deltas", Deltas{}, "", ErrZeroLengthDeltasObject},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.KeyOf(tc.obj)
			if got != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("KeyOf = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestDeltaFIFOHasSynced checks when HasSynced and Done flip, and what isInInitialList says.
func TestDeltaFIFOHasSynced(t *testing.T) {
	cases := []struct {
		name  string
		known *fifoTestKnown
		// setup runs before any pop.
		setup func(f *DeltaFIFO) error
		// wantInitial is, for each pop, the isInInitialList it must see.
		wantInitial []bool
		// syncedAfter is the number of completed pops after which HasSynced is true
		// (-1: never within wantInitial's pops).
		syncedAfter int
	}{
		{
			name:        "nothing happened",
			setup:       func(*DeltaFIFO) error { return nil },
			syncedAfter: -1,
		},
		{
			name:        "an add before any replace counts as synced",
			setup:       func(f *DeltaFIFO) error { return f.Add(fifoTestObj("a", 1)) },
			wantInitial: []bool{false},
			syncedAfter: 0,
		},
		{
			name: "a delete before any replace counts as synced even when ignored",
			setup: func(f *DeltaFIFO) error {
				return f.Delete(fifoTestObj("a", 1))
			},
			syncedAfter: 0,
		},
		{
			name:        "an empty replace is synced at once",
			setup:       func(f *DeltaFIFO) error { return f.Replace(nil, "") },
			syncedAfter: 0,
		},
		{
			name: "synced after the last initial item is processed, later items are not initial",
			setup: func(f *DeltaFIFO) error {
				if err := f.Replace([]interface{}{fifoTestObj("a", 1), fifoTestObj("b", 1)}, ""); err != nil {
					return err
				}
				return f.Add(fifoTestObj("c", 1))
			},
			wantInitial: []bool{true, true, false},
			syncedAfter: 2,
		},
		{
			name:  "tombstones of the first replace count in the population",
			known: fifoTestKnownOf(fifoTestObj("gone", 1)),
			setup: func(f *DeltaFIFO) error {
				return f.Replace([]interface{}{fifoTestObj("a", 1)}, "")
			},
			wantInitial: []bool{true, true},
			syncedAfter: 2,
		},
		{
			name: "updates of initial keys before they pop do not add to the population",
			setup: func(f *DeltaFIFO) error {
				if err := f.Replace([]interface{}{fifoTestObj("a", 1), fifoTestObj("b", 1)}, ""); err != nil {
					return err
				}
				return f.Update(fifoTestObj("a", 2))
			},
			wantInitial: []bool{true, true},
			syncedAfter: 2,
		},
		{
			name: "a second replace does not reset the population",
			setup: func(f *DeltaFIFO) error {
				if err := f.Replace([]interface{}{fifoTestObj("a", 1)}, ""); err != nil {
					return err
				}
				return f.Replace([]interface{}{fifoTestObj("a", 1), fifoTestObj("b", 1)}, "")
			},
			wantInitial: []bool{true, false},
			syncedAfter: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := DeltaFIFOOptions{Name: "test-fifo"}
			if tc.known != nil {
				opts.KnownObjects = tc.known
			}
			f := NewDeltaFIFOWithOptions(opts)
			if err := tc.setup(f); err != nil {
				t.Fatal(err)
			}
			checker := f.HasSyncedChecker()
			if checker.Name() != "test-fifo" {
				t.Errorf("Name() = %q", checker.Name())
			}
			check := func(done int) {
				t.Helper()
				want := tc.syncedAfter >= 0 && done >= tc.syncedAfter
				if got := f.HasSynced(); got != want {
					t.Errorf("after %d pops: HasSynced = %v, want %v", done, got, want)
				}
				if got := IsDone(checker); got != want {
					t.Errorf("after %d pops: Done closed = %v, want %v", done, got, want)
				}
			}
			check(0)
			for i, wantInit := range tc.wantInitial {
				_, err := f.Pop(func(_ interface{}, isInInitialList bool) error {
					if isInInitialList != wantInit {
						t.Errorf("pop %d: isInInitialList = %v, want %v", i, isInInitialList, wantInit)
					}
					// While the item is processed, it does not count yet: it counts once processed.
					want := tc.syncedAfter >= 0 && i >= tc.syncedAfter
					if got := IsDone(checker); got != want {
						t.Errorf("pop %d: Done closed during processing = %v, want %v", i, got, want)
					}
					return nil
				})
				if err != nil {
					t.Fatalf("pop %d: %v", i, err)
				}
				check(i + 1)
			}
		})
	}
}

func TestDeltaFIFOPopReturnsProcessError(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	if err := f.Add(fifoTestObj("a", 1)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	item, err := f.Pop(func(interface{}, bool) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Pop error = %v, want %v", err, boom)
	}
	if got := fifoTestDescribeDeltas("", item.(Deltas)); got != "Added(1)" {
		t.Errorf("Pop item = %s", got)
	}
	// The item is gone: the queue does not requeue on error.
	if got := fifoTestDrainDelta(t, f); len(got) != 0 {
		t.Errorf("left in queue: %q", got)
	}
}

func TestDeltaFIFOPopBlocksUntilAddOrClose(t *testing.T) {
	cases := []struct {
		name    string
		unblock func(f *DeltaFIFO)
		wantErr error
	}{
		{"add", func(f *DeltaFIFO) { _ = f.Add(fifoTestObj("a", 1)) }, nil},
		{"close", func(f *DeltaFIFO) { f.Close() }, ErrFIFOClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
				// Two consumers wait; both must return on close, one on add.
				results := make(chan error, 2)
				for range 2 {
					go func() {
						_, err := f.Pop(func(interface{}, bool) error { return nil })
						results <- err
					}()
				}
				synctest.Wait()
				select {
				case err := <-results:
					t.Fatalf("Pop returned %v before anything happened", err)
				default:
				}
				tc.unblock(f)
				synctest.Wait()
				if err := <-results; !errors.Is(err, tc.wantErr) {
					t.Fatalf("Pop = %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == nil {
					f.Close()
				}
				if err := <-results; !errors.Is(err, ErrFIFOClosed) {
					t.Fatalf("second Pop = %v, want ErrFIFOClosed", err)
				}
				if !f.IsClosed() {
					t.Error("IsClosed = false after Close")
				}
			})
		})
	}
}

func TestDeltaFIFOPopRunsProcessUnderLock(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	if err := f.Add(fifoTestObj("a", 1)); err != nil {
		t.Fatal(err)
	}
	_, err := f.Pop(func(interface{}, bool) error {
		if f.mu.TryLock() {
			f.mu.Unlock()
			t.Error("the queue's lock is free while process runs")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeltaFIFOSlowProcessingIsLogged(t *testing.T) {
	cases := []struct {
		name    string
		depth   int
		elapsed time.Duration
		want    bool
	}{
		{"deep and slow", 12, 150 * time.Millisecond, true},
		{"shallow and slow", 10, time.Second, false},
		{"deep and fast", 50, 99 * time.Millisecond, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, buf := fifoTestBufferLogger()
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Logger: &logger})
			f.clock = clk
			for i := range tc.depth + 1 {
				if err := f.Add(fifoTestObj(fmt.Sprint("k", i), i)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.Pop(func(interface{}, bool) error { clk.Step(tc.elapsed); return nil }); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(buf.String(), "DeltaFIFO Pop Process"); got != tc.want {
				t.Errorf("logged = %v, want %v; log:\n%s", got, tc.want, buf.String())
			}
		})
	}
}

// fifoTestBufferLogger returns a logger that records everything into a buffer.
func fifoTestBufferLogger() (klog.Logger, interface{ String() string }) {
	logger := ktesting.NewLogger(ktesting.NopTL{}, ktesting.NewConfig(ktesting.BufferLogs(true)))
	return logger, logger.GetSink().(ktesting.Underlier).GetBuffer()
}

// TestDeltaFIFOReleasesMemoryAfterBurst checks that draining a large burst gives the memory of
// the key map and the key queue back, instead of keeping them sized for the burst.
func TestDeltaFIFOReleasesMemoryAfterBurst(t *testing.T) {
	cases := []struct {
		name       string
		burst      int
		wantFresh  bool // the map is reallocated once the queue is empty
		wantBufMax int  // the largest ring capacity left after draining: a chunk or two
	}{
		{"small burst keeps its map", 100, false, 128},
		{"large burst drops its map", 5000, true, 1024},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{EmitDeltaTypeReplaced: true})
			list := make([]interface{}, tc.burst)
			for i := range list {
				list[i] = fifoTestObj(fmt.Sprint("k", i), i)
			}
			if err := f.Replace(list, ""); err != nil {
				t.Fatal(err)
			}
			if f.itemsPeak != tc.burst {
				t.Fatalf("itemsPeak = %d, want %d", f.itemsPeak, tc.burst)
			}
			got := fifoTestDrainDelta(t, f)
			if len(got) != tc.burst {
				t.Fatalf("drained %d, want %d", len(got), tc.burst)
			}
			if fresh := f.itemsPeak == 0; fresh != tc.wantFresh {
				t.Errorf("map reallocated = %v, want %v (peak %d)", fresh, tc.wantFresh, f.itemsPeak)
			}
			if c := f.queue.Cap(); c > tc.wantBufMax {
				t.Errorf("key queue keeps capacity %d after draining", c)
			}
		})
	}
}
