package cache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

// fifoTestDrainReal closes f and pops everything left, one description per delta.
func fifoTestDrainReal(t *testing.T, f *RealFIFO) []string {
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
		if len(ds) != 1 {
			t.Fatalf("Pop handed out %d deltas, want 1", len(ds))
		}
		got = append(got, fifoTestDescribeDeltas(fifoTestKeyOf(ds[0]), ds))
	}
}

func TestRealFIFOSequences(t *testing.T) {
	a1, a2, a3 := fifoTestObj("a", 1), fifoTestObj("a", 2), fifoTestObj("a", 3)
	b1, b2 := fifoTestObj("b", 1), fifoTestObj("b", 2)
	c1 := fifoTestObj("c", 1)
	type op func(f *RealFIFO) error
	add := func(o *fifoTestItem) op { return func(f *RealFIFO) error { return f.Add(o) } }
	update := func(o *fifoTestItem) op { return func(f *RealFIFO) error { return f.Update(o) } }
	del := func(o interface{}) op { return func(f *RealFIFO) error { return f.Delete(o) } }
	replace := func(objs ...interface{}) op {
		return func(f *RealFIFO) error { return f.Replace(objs, "10") }
	}
	resync := func(f *RealFIFO) error { return f.Resync() }
	bookmark := func(rv string) op { return func(f *RealFIFO) error { return f.Bookmark(rv) } }

	cases := []struct {
		name string
		// atomic builds an atomic FIFO (with bookmarks) instead of one over known.
		atomic bool
		known  *fifoTestKnown
		ops    []op
		want   []string
	}{
		{
			name: "every change is delivered in order, across keys",
			ops:  []op{add(a1), add(b1), update(a2), del(b2), update(a3)},
			want: []string{"a: Added(1)", "b: Added(1)", "a: Updated(2)", "b: Deleted(2)", "a: Updated(3)"},
		},
		{
			name: "deletions are never merged or dropped",
			ops:  []op{del(a1), del(a2), del(DeletedFinalStateUnknown{Key: "a", Obj: a3})},
			want: []string{"a: Deleted(1)", "a: Deleted(2)", "a: Deleted(tomb a 3)"},
		},
		{
			name:  "replace tombstones queued and known keys missing from the list, then replaces in list order",
			known: fifoTestKnownOf(a1, b1, c1),
			ops:   []op{update(b2), replace(c1, a2)},
			want:  []string{"b: Updated(2)", "b: Deleted(tomb b 2)", "c: Replaced(1)", "a: Replaced(2)"},
		},
		{
			name:  "replace adds no tombstone after a queued deletion",
			known: fifoTestKnownOf(a1),
			ops:   []op{del(a1), replace()},
			want:  []string{"a: Deleted(1)"},
		},
		{
			name:  "replace tombstones a key whose last queued delta is not a deletion",
			known: fifoTestKnownOf(),
			ops:   []op{add(a1), del(a1), add(a2), replace()},
			want:  []string{"a: Added(1)", "a: Deleted(1)", "a: Added(2)", "a: Deleted(tomb a 2)"},
		},
		{
			name:  "replace keeps queued deltas of keys in the list",
			known: fifoTestKnownOf(),
			ops:   []op{del(a1), replace(a2)},
			want:  []string{"a: Deleted(1)", "a: Replaced(2)"},
		},
		{
			name: "replace tombstones a known key without object when the lookup fails or finds nothing",
			known: &fifoTestKnown{objs: map[string]interface{}{"a": a1}, failing: map[string]bool{"a": true},
				listOnly: map[string]bool{"b": true}},
			ops:  []op{replace(c1)},
			want: []string{"a: Deleted(tomb a nil)", "b: Deleted(tomb b nil)", "c: Replaced(1)"},
		},
		{
			name:  "resync queues Sync for known keys with nothing queued",
			known: fifoTestKnownOf(a1, b1, c1),
			ops:   []op{update(b2), resync},
			want:  []string{"b: Updated(2)", "a: Sync(1)", "c: Sync(1)"},
		},
		{
			name: "resync skips keys the known objects cannot return",
			known: &fifoTestKnown{objs: map[string]interface{}{"a": a1, "b": b1}, failing: map[string]bool{"a": true},
				listOnly: map[string]bool{"c": true}},
			ops:  []op{resync},
			want: []string{"b: Sync(1)"},
		},
		{
			name:  "bookmark does nothing without atomic events",
			known: fifoTestKnownOf(),
			ops:   []op{bookmark("5"), add(a1)},
			want:  []string{"a: Added(1)"},
		},
		{
			name:   "atomic replace is one ReplacedAll with the list and resource version",
			atomic: true,
			ops:    []op{add(a1), replace(b1, c1), update(b2)},
			want:   []string{"a: Added(1)", "ReplacedAll(10 b=1,c=1)", "b: Updated(2)"},
		},
		{
			name:   "atomic resync is one SyncAll, bookmarks are queued in order",
			atomic: true,
			ops:    []op{bookmark("3"), add(a1), resync, bookmark("4")},
			want:   []string{"Bookmark(3)", "a: Added(1)", "SyncAll", "Bookmark(4)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := RealFIFOOptions{AtomicEvents: tc.atomic, EmitDeltaTypeBookmark: tc.atomic}
			if !tc.atomic {
				opts.KnownObjects = fifoTestKnownOf()
				if tc.known != nil {
					opts.KnownObjects = tc.known
				}
			}
			f := NewRealFIFOWithOptions(opts)
			for i, o := range tc.ops {
				if err := o(f); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			if got := fifoTestDrainReal(t, f); !slices.Equal(got, tc.want) {
				t.Errorf("popped\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestRealFIFOTransformer(t *testing.T) {
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
	cases := []struct {
		name    string
		atomic  bool
		ops     func(f *RealFIFO) error
		want    []string
		wantErr bool
	}{
		{
			name: "watch events are transformed, tombstones are not",
			ops: func(f *RealFIFO) error {
				return errors.Join(f.Add(fifoTestObj("a", 1)), f.Update(fifoTestObj("a", 2)), f.Delete(fifoTestObj("a", 3)),
					f.Delete(DeletedFinalStateUnknown{Key: "a", Obj: fifoTestObj("a", 4)}))
			},
			want: []string{"a: Added(101)", "a: Updated(102)", "a: Deleted(103)", "a: Deleted(tomb a 4)"},
		},
		{
			name: "replaced objects are transformed, resynced known objects and tombstones are not",
			ops: func(f *RealFIFO) error {
				return errors.Join(f.Resync(), f.Replace([]interface{}{fifoTestObj("b", 5)}, "1"))
			},
			want: []string{"k: Sync(7)", "k: Deleted(tomb k 7)", "b: Replaced(105)"},
		},
		{
			name:   "atomic replace transforms its objects",
			atomic: true,
			ops: func(f *RealFIFO) error {
				return f.Replace([]interface{}{fifoTestObj("b", 5), fifoTestObj("c", 6)}, "9")
			},
			want: []string{"ReplacedAll(9 b=105,c=106)"},
		},
		{
			name:    "a failing transform queues nothing",
			ops:     func(f *RealFIFO) error { return f.Add(fifoTestObj("a", -1)) },
			wantErr: true,
		},
		{
			name:   "a failing transform in replace queues nothing",
			atomic: true,
			ops: func(f *RealFIFO) error {
				return f.Replace([]interface{}{fifoTestObj("a", 1), fifoTestObj("b", -1)}, "")
			},
			wantErr: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := RealFIFOOptions{Transformer: transform, AtomicEvents: tc.atomic}
			if !tc.atomic {
				opts.KnownObjects = fifoTestKnownOf(fifoTestObj("k", 7))
			}
			f := NewRealFIFOWithOptions(opts)
			if f.Transformer() == nil {
				t.Fatal("Transformer() = nil")
			}
			if err := tc.ops(f); (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got := fifoTestDrainReal(t, f); !slices.Equal(got, tc.want) {
				t.Errorf("popped\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestRealFIFOKeyErrors(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: fifoTestKnownOf()})
	cases := []struct {
		name string
		do   func() error
	}{
		{"add", func() error { return f.Add(fifoTestNoMeta{}) }},
		{"update", func() error { return f.Update(nil) }},
		{"delete", func() error { return f.Delete(fifoTestNoMeta{}) }},
		{"replace", func() error { return f.Replace([]interface{}{fifoTestObj("a", 1), fifoTestNoMeta{}}, "") }},
		{"empty deltas", func() error { return f.Add(Deltas{}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var keyErr KeyError
			if err := tc.do(); !errors.As(err, &keyErr) {
				t.Fatalf("err = %v, want a KeyError", err)
			}
		})
	}
	if got := fifoTestDrainReal(t, f); len(got) != 0 {
		t.Errorf("queue holds %q after failed writes", got)
	}
}

func TestRealFIFOOptionValidation(t *testing.T) {
	known := fifoTestKnownOf()
	cases := []struct {
		name      string
		opts      RealFIFOOptions
		wantPanic string
	}{
		{"atomic", RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true}, ""},
		{"non-atomic", RealFIFOOptions{KnownObjects: known}, ""},
		{"atomic with known objects", RealFIFOOptions{AtomicEvents: true, KnownObjects: known}, "KnownObjects must be nil when AtomicEvents is true"},
		{"non-atomic without known objects", RealFIFOOptions{}, "KnownObjects must be set when AtomicEvents is false"},
		{"unlock without atomic", RealFIFOOptions{KnownObjects: known, UnlockWhileProcessing: true}, "UnlockWhileProcessing requires AtomicEvents"},
		{"bookmarks without atomic", RealFIFOOptions{KnownObjects: known, EmitDeltaTypeBookmark: true}, "EmitDeltaTypeBookmark requires AtomicEvents"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				switch {
				case tc.wantPanic == "" && r != nil:
					t.Fatalf("unexpected panic: %v", r)
				case tc.wantPanic != "" && (r == nil || !strings.Contains(fmt.Sprint(r), tc.wantPanic)):
					t.Fatalf("panic = %v, want one mentioning %q", r, tc.wantPanic)
				}
			}()
			NewRealFIFOWithOptions(tc.opts)
		})
	}
}

func TestRealFIFONames(t *testing.T) {
	name, err := NewInformerName("fifo-names-test")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	cases := []struct {
		name string
		opts RealFIFOOptions
		want string
	}{
		{"default", RealFIFOOptions{AtomicEvents: true}, "RealFIFO"},
		{"option", RealFIFOOptions{AtomicEvents: true, Name: "mine"}, "mine"},
		{"identifier wins", RealFIFOOptions{AtomicEvents: true, Name: "mine", Identifier: name.WithResource(schema.GroupVersionResource{Resource: "pods"})}, "fifo-names-test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewRealFIFOWithOptions(tc.opts).HasSyncedChecker().Name(); got != tc.want {
				t.Errorf("Name() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRealFIFOHasSynced checks when HasSynced and Done flip, and what isInInitialList says.
func TestRealFIFOHasSynced(t *testing.T) {
	objs := func(names ...string) []interface{} {
		out := make([]interface{}, len(names))
		for i, n := range names {
			out[i] = fifoTestObj(n, 1)
		}
		return out
	}
	cases := []struct {
		name        string
		atomic      bool
		known       *fifoTestKnown
		setup       func(f *RealFIFO) error
		wantInitial []bool
		syncedAfter int
	}{
		{name: "nothing happened", setup: func(*RealFIFO) error { return nil }, syncedAfter: -1},
		{
			name:        "a delete before any replace counts as synced",
			setup:       func(f *RealFIFO) error { return f.Delete(fifoTestObj("a", 1)) },
			wantInitial: []bool{false},
			syncedAfter: 0,
		},
		{
			name:        "empty replace",
			setup:       func(f *RealFIFO) error { return f.Replace(nil, "") },
			syncedAfter: 0,
		},
		{
			name:  "non-atomic: every delta of the first replace, tombstones included",
			known: fifoTestKnownOf(fifoTestObj("gone", 1)),
			setup: func(f *RealFIFO) error {
				return errors.Join(f.Replace(objs("a", "b"), ""), f.Add(fifoTestObj("c", 1)))
			},
			wantInitial: []bool{true, true, true, false},
			syncedAfter: 3,
		},
		{
			name:   "atomic: the ReplacedAll is the population",
			atomic: true,
			setup: func(f *RealFIFO) error {
				return errors.Join(f.Replace(objs("a", "b"), "1"), f.Add(fifoTestObj("c", 1)))
			},
			wantInitial: []bool{true, false},
			syncedAfter: 1,
		},
		{
			name:   "atomic: deltas queued before the first replace are part of the population",
			atomic: true,
			setup: func(f *RealFIFO) error {
				return errors.Join(f.Bookmark("1"), f.Resync(), f.Replace(objs("a"), "2"))
			},
			wantInitial: []bool{true, true, true},
			syncedAfter: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := RealFIFOOptions{AtomicEvents: tc.atomic, EmitDeltaTypeBookmark: tc.atomic}
			if !tc.atomic {
				opts.KnownObjects = fifoTestKnownOf()
				if tc.known != nil {
					opts.KnownObjects = tc.known
				}
			}
			f := NewRealFIFOWithOptions(opts)
			if err := tc.setup(f); err != nil {
				t.Fatal(err)
			}
			checker := f.HasSyncedChecker()
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
					want := tc.syncedAfter >= 0 && i >= tc.syncedAfter
					if got := f.HasSynced(); got != want {
						t.Errorf("pop %d: HasSynced during processing = %v, want %v", i, got, want)
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

func TestRealFIFOPopBlocksUntilAddOrClose(t *testing.T) {
	cases := []struct {
		name    string
		batch   bool
		unblock func(f *RealFIFO)
		wantErr error
	}{
		{"pop, add", false, func(f *RealFIFO) { _ = f.Add(fifoTestObj("a", 1)) }, nil},
		{"pop, close", false, func(f *RealFIFO) { f.Close() }, ErrFIFOClosed},
		{"popbatch, add", true, func(f *RealFIFO) { _ = f.Add(fifoTestObj("a", 1)) }, nil},
		{"popbatch, close", true, func(f *RealFIFO) { f.Close() }, ErrFIFOClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})
				results := make(chan error, 2)
				for range 2 {
					go func() {
						var err error
						if tc.batch {
							err = f.PopBatch(func([]Delta, bool) error { return nil }, func(interface{}, bool) error { return nil })
						} else {
							_, err = f.Pop(func(interface{}, bool) error { return nil })
						}
						results <- err
					}()
				}
				synctest.Wait()
				select {
				case err := <-results:
					t.Fatalf("returned %v before anything happened", err)
				default:
				}
				tc.unblock(f)
				synctest.Wait()
				if err := <-results; !errors.Is(err, tc.wantErr) {
					t.Fatalf("got %v, want %v", err, tc.wantErr)
				}
				f.Close()
				if err := <-results; !errors.Is(err, ErrFIFOClosed) {
					t.Fatalf("second consumer got %v, want ErrFIFOClosed", err)
				}
				if !f.IsClosed() {
					t.Error("IsClosed = false after Close")
				}
			})
		})
	}
}

func TestRealFIFOUnlockWhileProcessing(t *testing.T) {
	cases := []struct {
		name   string
		unlock bool
		queued int // deltas left in the queue while the popped one is processed
		batch  bool
		// wantFree says whether producers can take the lock during processing.
		wantFree bool
	}{
		{"locked mode holds the lock", false, 5, false, false},
		{"unlocked below two batches", true, 2*defaultBatchSize - 1, false, true},
		{"back-pressure at two batches", true, 2 * defaultBatchSize, false, false},
		{"batch: unlocked below two batches", true, 2*defaultBatchSize - 1, true, true},
		{"batch: back-pressure at two batches", true, 2 * defaultBatchSize, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: tc.unlock}
			f := NewRealFIFOWithOptions(opts)
			// The first pop takes one delta (or one batch, all distinct keys); fill so that
			// exactly tc.queued remain.
			taken := 1
			if tc.batch {
				taken = 2
			}
			for i := range tc.queued + taken {
				key := fmt.Sprint("k", i)
				if tc.batch && i >= taken {
					key = fmt.Sprint("k", i%taken) // duplicates end the first batch after `taken`
				}
				if err := f.Add(fifoTestObj(key, i)); err != nil {
					t.Fatal(err)
				}
			}
			free := func() bool {
				if f.mu.TryLock() {
					f.mu.Unlock()
					return true
				}
				return false
			}
			var gotFree bool
			var err error
			if tc.batch {
				err = f.PopBatch(func(ds []Delta, _ bool) error {
					if len(ds) != taken {
						t.Errorf("batch of %d, want %d", len(ds), taken)
					}
					gotFree = free()
					return nil
				}, func(interface{}, bool) error { t.Error("processSingle called"); return nil })
			} else {
				_, err = f.Pop(func(interface{}, bool) error { gotFree = free(); return nil })
			}
			if err != nil {
				t.Fatal(err)
			}
			if gotFree != tc.wantFree {
				t.Errorf("lock free during processing = %v, want %v", gotFree, tc.wantFree)
			}
			if f.mu.TryLock() {
				f.mu.Unlock()
			} else {
				t.Error("lock still held after Pop returned")
			}
		})
	}
}

func TestRealFIFOMetrics(t *testing.T) {
	name, err := NewInformerName("fifo-metrics-test")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	provider := &fifoTestMetricsProvider{}
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	f := NewRealFIFOWithOptions(RealFIFOOptions{
		AtomicEvents:    true,
		Identifier:      name.WithResource(schema.GroupVersionResource{Resource: "pods"}),
		MetricsProvider: provider,
	})
	f.clock = clk
	for i := range 3 {
		if err := f.Add(fifoTestObj(fmt.Sprint("k", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := provider.queued.last; got != 3 {
		t.Errorf("queued gauge = %v, want 3", got)
	}
	if _, err := f.Pop(func(interface{}, bool) error { clk.Step(2 * time.Second); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := provider.queued.last; got != 2 {
		t.Errorf("queued gauge after pop = %v, want 2", got)
	}
	if got := provider.latency.observed; !slices.Equal(got, []float64{2}) {
		t.Errorf("latency observations = %v, want [2]", got)
	}
}

type fifoTestGauge struct{ last float64 }

func (g *fifoTestGauge) Set(v float64) { g.last = v }

type fifoTestHistogram struct{ observed []float64 }

func (h *fifoTestHistogram) Observe(v float64) { h.observed = append(h.observed, v) }

type fifoTestMetricsProvider struct {
	queued  fifoTestGauge
	latency fifoTestHistogram
}

func (p *fifoTestMetricsProvider) NewQueuedItemMetric(InformerNameAndResource) GaugeMetric {
	return &p.queued
}

func (p *fifoTestMetricsProvider) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric {
	return &p.latency
}

func (p *fifoTestMetricsProvider) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return &fifoTestGauge{}
}

func TestRealFIFOSlowProcessingIsLogged(t *testing.T) {
	cases := []struct {
		name    string
		batch   bool
		depth   int
		elapsed time.Duration
		want    string
	}{
		{"pop deep and slow", false, 11, 100 * time.Millisecond, "RealFIFO Pop Process"},
		{"pop shallow", false, 10, time.Second, ""},
		{"pop fast", false, 11, 99 * time.Millisecond, ""},
		// A batch of 2 has a threshold of 200ms.
		{"batch deep and slow", true, 11, 200 * time.Millisecond, "RealFIFO PopBatch Process"},
		{"batch below its threshold", true, 11, 150 * time.Millisecond, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, buf := fifoTestBufferLogger()
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, Logger: &logger})
			f.clock = clk
			// Two distinct keys first (the batch), then duplicates, so that tc.depth deltas
			// remain queued after the pop.
			n := tc.depth + 1
			if tc.batch {
				n++
			}
			for i := range n {
				key := "k0"
				if i > 0 {
					key = "k1"
				}
				if err := f.Add(fifoTestObj(key, i)); err != nil {
					t.Fatal(err)
				}
			}
			slow := func() { clk.Step(tc.elapsed) }
			if tc.batch {
				err := f.PopBatch(func([]Delta, bool) error { slow(); return nil }, func(interface{}, bool) error { return nil })
				if err != nil {
					t.Fatal(err)
				}
			} else if _, err := f.Pop(func(interface{}, bool) error { slow(); return nil }); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if tc.want == "" {
				if strings.Contains(out, "Process") {
					t.Errorf("unexpected log:\n%s", out)
				}
				return
			}
			for _, s := range []string{tc.want, `ID="k0"`, "Depth=", "slow event handlers blocking the queue"} {
				if !strings.Contains(out, s) {
					t.Errorf("log lacks %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestRealFIFOPopBatchBoundaries(t *testing.T) {
	a1, a2 := fifoTestObj("a", 1), fifoTestObj("a", 2)
	b1, c1, d1 := fifoTestObj("b", 1), fifoTestObj("c", 1), fifoTestObj("d", 1)
	type op func(f *RealFIFO) error
	add := func(o *fifoTestItem) op { return func(f *RealFIFO) error { return f.Add(o) } }
	update := func(o *fifoTestItem) op { return func(f *RealFIFO) error { return f.Update(o) } }
	replace := func(objs ...interface{}) op { return func(f *RealFIFO) error { return f.Replace(objs, "7") } }
	cases := []struct {
		name      string
		atomic    bool
		batchSize int
		ops       []op
		// want lists what each PopBatch handed out; "single:" marks processSingle.
		want []string
	}{
		{
			name: "distinct keys form one batch",
			ops:  []op{add(a1), add(b1), add(c1)},
			want: []string{"a: Added(1) | b: Added(1) | c: Added(1)"},
		},
		{
			name: "a batch of one goes to processSingle",
			ops:  []op{add(a1)},
			want: []string{"single: a: Added(1)"},
		},
		{
			name: "a second delta for a key ends the batch",
			ops:  []op{add(a1), add(b1), update(a2), add(c1)},
			want: []string{"a: Added(1) | b: Added(1)", "a: Updated(2) | c: Added(1)"},
		},
		{
			name:      "the batch size limits a batch",
			batchSize: 2,
			ops:       []op{add(a1), add(b1), add(c1)},
			want:      []string{"a: Added(1) | b: Added(1)", "single: c: Added(1)"},
		},
		{
			name: "the initial population is never mixed with later changes",
			ops:  []op{replace(a1, b1), add(c1), add(d1)},
			want: []string{"a: Replaced(1) | b: Replaced(1)", "c: Added(1) | d: Added(1)"},
		},
		{
			name:   "an unbatchable delta first is handed out alone",
			atomic: true,
			ops:    []op{replace(a1, b1), add(c1), add(d1)},
			want:   []string{"single: ReplacedAll(7 a=1,b=1)", "c: Added(1) | d: Added(1)"},
		},
		{
			name:   "an unbatchable delta ends the batch before it",
			atomic: true,
			ops: []op{add(a1), add(b1), func(f *RealFIFO) error { return f.Resync() },
				func(f *RealFIFO) error { return f.Bookmark("8") }, add(c1)},
			want: []string{"a: Added(1) | b: Added(1)", "single: SyncAll", "single: Bookmark(8)", "single: c: Added(1)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := RealFIFOOptions{AtomicEvents: tc.atomic, EmitDeltaTypeBookmark: tc.atomic}
			if !tc.atomic {
				opts.KnownObjects = fifoTestKnownOf()
			}
			f := NewRealFIFOWithOptions(opts)
			if tc.batchSize > 0 {
				f.batchSize = tc.batchSize
			}
			for i, o := range tc.ops {
				if err := o(f); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			f.Close()
			got := fifoTestDrainBatches(t, f)
			if !slices.Equal(got, tc.want) {
				t.Errorf("batches\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// fifoTestDrainBatches pops batches until f, which must be closed, is empty.
func fifoTestDrainBatches(t *testing.T, f *RealFIFO) []string {
	t.Helper()
	var got []string
	describe := func(ds []Delta) string {
		parts := make([]string, len(ds))
		for i, d := range ds {
			parts[i] = fifoTestDescribeDeltas(fifoTestKeyOf(d), ds[i:i+1])
		}
		return strings.Join(parts, " | ")
	}
	for {
		err := f.PopBatch(func(ds []Delta, _ bool) error {
			if len(ds) < 2 {
				t.Errorf("processBatch got %d deltas", len(ds))
			}
			got = append(got, describe(ds))
			return nil
		}, func(obj interface{}, _ bool) error {
			got = append(got, "single: "+describe(obj.(Deltas)))
			return nil
		})
		if errors.Is(err, ErrFIFOClosed) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRealFIFOKeysAreComputedOnce checks that batches are cut by the keys computed when the
// deltas were queued: a key function that later fails or changes its answers does not matter.
func TestRealFIFOKeysAreComputedOnce(t *testing.T) {
	calls := 0
	mode := "normal"
	keyFunc := func(obj interface{}) (string, error) {
		calls++
		switch mode {
		case "failing":
			return "", errors.New("broken key")
		case "constant":
			return "same", nil
		}
		return obj.(*fifoTestItem).Name, nil
	}
	cases := []struct {
		name string
		mode string
		keys []string
		want []string
	}{
		{"a key function failing later", "failing", []string{"a", "b", "c"}, []string{"a b c"}},
		{"a key function merging keys later", "constant", []string{"a", "b", "a", "c"}, []string{"a b", "a c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mode, calls = "normal", 0
			f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, KeyFunction: keyFunc})
			for _, k := range tc.keys {
				if err := f.Add(fifoTestObj(k, 1)); err != nil {
					t.Fatal(err)
				}
			}
			if calls != len(tc.keys) {
				t.Errorf("key function called %d times for %d adds", calls, len(tc.keys))
			}
			mode = tc.mode
			f.Close()
			var got []string
			names := func(ds []Delta) string {
				var n []string
				for _, d := range ds {
					n = append(n, d.Object.(*fifoTestItem).Name)
				}
				return strings.Join(n, " ")
			}
			for {
				err := f.PopBatch(func(ds []Delta, _ bool) error { got = append(got, names(ds)); return nil },
					func(obj interface{}, _ bool) error { got = append(got, "single: "+names(obj.(Deltas))); return nil })
				if errors.Is(err, ErrFIFOClosed) {
					break
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("batches %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFIFOReplaceTransformed checks that Replace runs the transformer on every listed object,
// and replaceTransformed (which a Reflector uses for a watch-list it already transformed) does
// not.
func TestFIFOReplaceTransformed(t *testing.T) {
	calls := 0
	transform := func(obj interface{}) (interface{}, error) {
		calls++
		item := obj.(*fifoTestItem)
		return fifoTestObj(item.Name, item.Val+100), nil
	}
	list := func() []interface{} { return []interface{}{fifoTestObj("a", 1), fifoTestObj("b", 2)} }
	cases := []struct {
		name      string
		queue     func() interface{}
		already   bool
		wantCalls int
		want      []string
	}{
		{"RealFIFO atomic Replace", func() interface{} {
			return NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, Transformer: transform})
		}, false, 2, []string{"ReplacedAll(7 a=101,b=102)"}},
		{"RealFIFO atomic replaceTransformed", func() interface{} {
			return NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, Transformer: transform})
		}, true, 0, []string{"ReplacedAll(7 a=1,b=2)"}},
		{"RealFIFO replaceTransformed", func() interface{} {
			return NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: fifoTestKnownOf(), Transformer: transform})
		}, true, 0, []string{"a: Replaced(1)", "b: Replaced(2)"}},
		{"DeltaFIFO Replace", func() interface{} {
			return NewDeltaFIFOWithOptions(DeltaFIFOOptions{EmitDeltaTypeReplaced: true, Transformer: transform})
		}, false, 2, []string{"a: Replaced(101)", "b: Replaced(102)"}},
		{"DeltaFIFO replaceTransformed", func() interface{} {
			return NewDeltaFIFOWithOptions(DeltaFIFOOptions{EmitDeltaTypeReplaced: true, Transformer: transform})
		}, true, 0, []string{"a: Replaced(1)", "b: Replaced(2)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = 0
			q := tc.queue()
			var err error
			if tc.already {
				err = q.(transformedReplacer).replaceTransformed(list(), "7")
			} else {
				err = q.(ReflectorStore).Replace(list(), "7")
			}
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.wantCalls {
				t.Errorf("transformer ran %d times, want %d", calls, tc.wantCalls)
			}
			var got []string
			switch f := q.(type) {
			case *RealFIFO:
				got = fifoTestDrainReal(t, f)
			case *DeltaFIFO:
				got = fifoTestDrainDelta(t, f)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("popped %q, want %q", got, tc.want)
			}
		})
	}
}
