package priorityqueue

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue"
)

func prio(p int) *int { return &p }

// drain takes every eligible item without blocking (Len counts them all here).
func drain(t *testing.T, q PriorityQueue[string]) []string {
	t.Helper()
	var got []string
	for q.Len() > 0 {
		item, p, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("unexpected shutdown")
		}
		got = append(got, item+"@"+itoa(p))
		q.Done(item)
	}
	return got
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestOrder(t *testing.T) {
	type add struct {
		key   string
		prio  int
		after time.Duration
	}
	cases := []struct {
		name string
		adds []add
		wait time.Duration
		want []string
	}{
		{"priority first, FIFO within", []add{{"a", 0, 0}, {"b", 1, 0}, {"c", 0, 0}, {"d", 1, 0}, {"e", -1, 0}},
			0, []string{"b@1", "d@1", "a@0", "c@0", "e@-1"}},
		{"re-add keeps the higher priority", []add{{"a", 5, 0}, {"b", 1, 0}, {"a", 0, 0}},
			0, []string{"a@5", "b@1"}},
		{"raised priority goes to the back of its level", []add{{"a", 1, 0}, {"b", 0, 0}, {"c", 1, 0}, {"b", 1, 0}},
			0, []string{"a@1", "c@1", "b@1"}},
		{"re-add keeps the earlier ready time", []add{{"a", 0, time.Hour}, {"a", 0, time.Second}, {"b", 0, 2 * time.Second}},
			2 * time.Second, []string{"a@0", "b@0"}},
		{"a later re-add does not delay", []add{{"a", 0, time.Second}, {"a", 0, time.Hour}},
			time.Second, []string{"a@0"}},
		{"an immediate re-add makes a delayed item ready", []add{{"a", 0, time.Hour}, {"a", 0, 0}},
			0, []string{"a@0"}},
		{"delayed items join the back when ready", []add{{"a", 0, time.Second}, {"b", 0, 0}},
			time.Second, []string{"b@0", "a@0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string]("")
				defer q.ShutDown()
				for _, a := range tc.adds {
					q.AddWithOpts(AddOpts{After: a.after, Priority: prio(a.prio)}, a.key)
				}
				time.Sleep(tc.wait) // synctest: advances the bubble's clock
				synctest.Wait()
				got := drain(t, q)
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("got %v, want %v", got, tc.want)
					}
				}
			})
		})
	}
}

// reAddCases are scripts in which an item is added again while a worker holds it. want is
// controller-runtime's rule: the re-Add's time and priority give the item its place, so at
// Done it comes before the items of its priority that became ready after the re-Add (and
// after those that became ready before it). A raise while held counts as a re-Add at the
// new priority; a delayed re-Add takes its place when the delay ends.
var reAddCases = []struct {
	name   string
	script []reAddStep
	want   []string // handed out after the script, each Done at once
}{
	{"controller-runtime's spec: returned as soon as it is unlocked", []reAddStep{
		{op: "add", key: "foo"}, {op: "get", key: "foo"},
		{op: "add", key: "foo"}, {op: "add", key: "bar"}, {op: "get", key: "bar"},
		{op: "add", key: "baz"}, {op: "done", key: "foo"},
	}, []string{"foo@0", "baz@0"}},
	{"ahead of later items, behind earlier ones", []reAddStep{
		{op: "add", key: "a"}, {op: "add", key: "b"}, {op: "get", key: "a"},
		{op: "add", key: "c"}, {op: "add", key: "a"}, {op: "add", key: "d"}, {op: "done", key: "a"},
	}, []string{"b@0", "c@0", "a@0", "d@0"}},
	{"its priority decides across levels", []reAddStep{
		{op: "add", key: "a"}, {op: "get", key: "a"},
		{op: "add", key: "a", prio: 5}, {op: "add", key: "hi", prio: 9}, {op: "add", key: "x", prio: 5},
		{op: "add", key: "lo"}, {op: "done", key: "a"},
	}, []string{"hi@9", "a@5", "x@5", "lo@0"}},
	{"a raise while held goes behind the items of the new level ready by then", []reAddStep{
		{op: "add", key: "a"}, {op: "get", key: "a"},
		{op: "add", key: "a"}, {op: "add", key: "b", prio: 5},
		{op: "add", key: "a", prio: 5}, {op: "add", key: "c", prio: 5}, {op: "done", key: "a"},
	}, []string{"b@5", "a@5", "c@5"}},
	{"a lower re-Add does not lower it", []reAddStep{
		{op: "add", key: "a"}, {op: "get", key: "a"},
		{op: "add", key: "a", prio: 5}, {op: "add", key: "b", prio: 5}, {op: "add", key: "a", prio: 1},
		{op: "done", key: "a"},
	}, []string{"a@5", "b@5"}},
	{"a delayed re-Add takes its place when the delay ends", []reAddStep{
		{op: "add", key: "a"}, {op: "get", key: "a"},
		{op: "add", key: "a", after: time.Second}, {op: "add", key: "b"},
		{op: "wait", after: time.Second}, {op: "add", key: "c"}, {op: "done", key: "a"},
	}, []string{"b@0", "a@0", "c@0"}},
	{"a re-Add while another held item comes back first", []reAddStep{
		{op: "add", key: "a"}, {op: "add", key: "b"}, {op: "get", key: "a"}, {op: "get", key: "b"},
		{op: "add", key: "b"}, {op: "add", key: "a"}, {op: "add", key: "c"},
		{op: "done", key: "a"}, {op: "done", key: "b"},
	}, []string{"b@0", "a@0", "c@0"}},
	{"done in between hands nothing out of turn", []reAddStep{
		{op: "add", key: "a"}, {op: "get", key: "a"}, {op: "add", key: "a"},
		{op: "add", key: "b"}, {op: "get", key: "b"}, {op: "add", key: "b"},
		{op: "done", key: "b"}, {op: "done", key: "a"},
	}, []string{"a@0", "b@0"}},
}

type reAddStep struct {
	op    string // add, get (key: the item expected), done, wait (after: how long)
	key   string
	prio  int
	after time.Duration
}

func TestReAddWhileProcessing(t *testing.T) {
	for _, tc := range reAddCases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string]("")
				defer q.ShutDown()
				for i, s := range tc.script {
					switch s.op {
					case "add":
						q.AddWithOpts(AddOpts{Priority: prio(s.prio), After: s.after}, s.key)
					case "get":
						if got, _ := q.Get(); got != s.key {
							t.Fatalf("step %d: got %q, want %q", i, got, s.key)
						}
					case "done":
						q.Done(s.key)
					case "wait":
						time.Sleep(s.after) // synctest: advances the bubble's clock
						synctest.Wait()
					}
				}
				got := drain(t, q)
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		})
	}
}

// TestReAddedItemWaitsForDone checks that a re-added item is never handed to a second
// worker while the first holds it, even when it is the only ready item.
func TestReAddedItemWaitsForDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string]("")
		defer q.ShutDown()
		q.Add("a")
		item, _ := q.Get()
		q.Add(item)
		if n := q.Len(); n != 1 {
			t.Fatalf("Len = %d, want 1 (the re-added a)", n)
		}
		got := make(chan string)
		go func() { item, _ := q.Get(); got <- item }()
		synctest.Wait()
		select {
		case item := <-got:
			t.Fatalf("a second worker got %q before Done(a)", item)
		default:
		}
		q.Done("a")
		if item := <-got; item != "a" {
			t.Fatalf("after Done got %q, want a", item)
		}
	})
}

func TestShutDownWakesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int]("")
		var wg sync.WaitGroup
		results := make(chan bool, 8)
		for range 8 {
			wg.Go(func() { _, shutdown := q.Get(); results <- shutdown })
		}
		synctest.Wait()
		q.ShutDown()
		wg.Wait()
		close(results)
		for shutdown := range results {
			if !shutdown {
				t.Fatal("a waiter got an item from an empty queue")
			}
		}
	})
}

func TestShutDownWithDrain(t *testing.T) {
	cases := []struct {
		name     string
		thenHard bool // a ShutDown during the drain ends it
	}{
		{"waits for Done", false},
		{"ShutDown ends the wait", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string]("")
				q.Add("a")
				q.Add("b")
				q.AddAfter("later", time.Second)
				a, _ := q.Get()
				drained := make(chan struct{})
				go func() { q.ShutDownWithDrain(); close(drained) }()
				synctest.Wait()
				q.Add("ignored")
				if tc.thenHard {
					q.ShutDown()
					<-drained
					if _, shutdown := q.Get(); !shutdown {
						t.Fatal("Get after ShutDown handed out an item")
					}
					return
				}
				// Ready items are still handed out while draining; delayed ones are dropped.
				b, shutdown := q.Get()
				if shutdown || b != "b" {
					t.Fatalf("Get while draining = %q, %v; want b", b, shutdown)
				}
				q.Done(a)
				synctest.Wait()
				select {
				case <-drained:
					t.Fatal("ShutDownWithDrain returned while b is processing")
				default:
				}
				q.Done(b)
				<-drained
				if item, shutdown := q.Get(); !shutdown {
					t.Fatalf("Get after the drain = %q, want shutdown", item)
				}
			})
		})
	}
}

func TestBadUse(t *testing.T) {
	cases := []struct {
		name string
		do   func(q PriorityQueue[string])
	}{
		{"Done of an item never handed out", func(q PriorityQueue[string]) { q.Done("x") }},
		{"Done twice", func(q PriorityQueue[string]) {
			q.Add("x")
			item, _ := q.Get()
			q.Done(item)
			q.Done(item)
		}},
		{"AddWithOpts without items", func(q PriorityQueue[string]) { q.AddWithOpts(AddOpts{Priority: prio(1)}) }},
		{"calls after ShutDown", func(q PriorityQueue[string]) {
			q.ShutDown()
			q.Add("x")
			q.AddAfter("y", time.Second)
			q.AddRateLimited("z")
			q.AddWithOpts(AddOpts{}, "a", "b")
			if _, shutdown := q.Get(); !shutdown {
				panic("Get after ShutDown did not report shutdown")
			}
			q.Done("x")
			q.ShutDown()
			q.ShutDownWithDrain()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string]("", nil) // a nil Opt is ignored
				defer q.ShutDown()
				tc.do(q)
				if q.Len() != 0 {
					t.Fatalf("Len = %d after %s", q.Len(), tc.name)
				}
			})
		})
	}
}

// TestDelayGoroutine checks the goroutine budget without metrics: none while no item is
// delayed, one while some are, gone once they are ready.
func TestDelayGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string]("").(*queue[string])
		defer q.ShutDown()
		running := func() bool {
			synctest.Wait()
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.timerRunning
		}
		q.Add("now")
		if running() {
			t.Fatal("a goroutine runs without delayed items")
		}
		q.AddAfter("a", time.Minute)
		q.AddAfter("b", time.Second) // an earlier deadline wakes the same goroutine
		if !running() {
			t.Fatal("no goroutine waits for the delayed items")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if q.Len() != 2 {
			t.Fatalf("Len = %d after 1s, want 2", q.Len())
		}
		time.Sleep(time.Minute)
		if running() || q.Len() != 3 {
			t.Fatalf("after the last deadline: goroutine %v, Len %d", running(), q.Len())
		}
	})
}

// TestFakeClock drives delays with an injected fake clock instead of synctest.
func TestFakeClock(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Unix(1000, 0))
	q := New("", WithClock[string](fc), WithRateLimiter[string](workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute)))
	defer q.ShutDown()
	q.AddRateLimited("a")
	if q.NumRequeues("a") != 1 {
		t.Fatalf("NumRequeues = %d, want 1", q.NumRequeues("a"))
	}
	got := make(chan string)
	go func() { item, _ := q.Get(); got <- item }()
	for !fc.HasWaiters() {
		runtime.Gosched() // the timer goroutine arms its timer
	}
	fc.Step(time.Second)
	if item := <-got; item != "a" {
		t.Fatalf("got %q, want a", item)
	}
	q.Forget("a")
	if q.NumRequeues("a") != 0 {
		t.Fatal("Forget did not reset the rate limiter")
	}
}
