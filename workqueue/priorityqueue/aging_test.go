package priorityqueue

import (
	"fmt"
	"math/rand"
	"testing"
)

// agingTracker checks the documented bound on a core: once a ready item is aged, it is
// handed out within every×(A+1) handouts, A being the queued items that became ready before
// it: those ahead of it in the age list and the parked ones that were re-added before it
// (they take their place ahead of it at Done).
type agingTracker struct {
	t     *testing.T
	every int
	after int64
	// tracked maps an aged item to [A, handouts since it aged].
	tracked  map[int]*[2]int
	maxAhead int
}

// beforeTake starts tracking the items that are aged now.
func (a *agingTracker) beforeTake(c *core[int], now int64) {
	ahead := 0
	for e := c.age.head; e != nil; e = e.ageNext {
		if now-e.readyAt < a.after {
			break // the age list is ordered: the rest are younger
		}
		if _, ok := a.tracked[e.key]; !ok {
			parked := 0
			for r := c.running.head; r != nil; r = r.runNext {
				if r.state == stateParked && r.ageSeq < e.ageSeq {
					parked++
				}
			}
			a.tracked[e.key] = &[2]int{ahead + parked, 0}
			a.maxAhead = max(a.maxAhead, ahead+parked)
		}
		ahead++
	}
}

// afterTake counts one handout and checks the item handed out.
func (a *agingTracker) afterTake(key int) {
	for k, s := range a.tracked {
		s[1]++
		if k != key {
			continue
		}
		bound := a.every * (s[0] + 1)
		if s[1] > bound {
			a.t.Fatalf("item %d handed out %d handouts after aging with %d ahead, bound %d", k, s[1], s[0], bound)
		}
		delete(a.tracked, k)
	}
}

// TestAgingBound runs steady loads in which higher-priority items keep arriving at least as
// fast as workers take them — strict priority would starve the low ones — and checks that
// every item is handed out within the documented bound once aged.
func TestAgingBound(t *testing.T) {
	cases := []struct {
		name       string
		every      int
		after      int64
		inFlight   int // items processed at once; a re-added key in flight is parked
		addsPerGet int // adds of higher-priority keys per handout: 1 = steady, 2 = overload
		steps      int
		keys       int // key space of the higher-priority adds; small = many re-adds
	}{
		{"every 1", 1, 20, 1, 1, 20000, 1 << 30},
		{"default every 4", 4, 20, 1, 1, 20000, 1 << 30},
		{"every 8, four workers", 8, 50, 4, 1, 20000, 1 << 30},
		{"every 4, overload", 4, 20, 1, 2, 4000, 1 << 30},
		{"every 4, re-adds of 300 keys", 4, 10, 4, 2, 20000, 300},
		{"every 2, re-adds of 40 keys", 2, 5, 2, 3, 20000, 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(tc.every)*31 + int64(tc.keys)))
			c := newCore[int](tc.every, tc.after, nil)
			tr := &agingTracker{t: t, every: tc.every, after: tc.after, tracked: map[int]*[2]int{}}
			var now int64
			next := 0
			newKey := func() int {
				next++
				if tc.keys < 1<<30 {
					return r.Intn(tc.keys)
				}
				return next
			}
			// A backlog of low-priority items, as after a restart; their keys are negative.
			low := map[int]bool{}
			for i := range 200 {
				c.add(-1-i, LowPriority, 0, at(now))
				low[-1-i] = true
			}
			var running []int
			for range tc.steps {
				now++
				for range tc.addsPerGet {
					prio := []int{0, 10, 10, 100}[r.Intn(4)]
					c.add(newKey(), prio, 0, at(now))
				}
				tr.beforeTake(c, now)
				e := c.take(at(now))
				if e == nil {
					t.Fatal("nothing to take under steady load")
				}
				delete(low, e.key)
				tr.afterTake(e.key)
				running = append(running, e.key)
				if len(running) >= tc.inFlight {
					c.done(running[0], at(now))
					running = running[1:]
				}
			}
			if len(low) > 0 {
				t.Fatalf("%d of the 200 low-priority items were never handed out", len(low))
			}
			t.Logf("largest A seen %d", tr.maxAhead)
		})
	}
}

// TestStrictPriorityStarves shows what the aging rule prevents: with aging disabled, the same
// steady load never hands out the low-priority backlog.
func TestStrictPriorityStarves(t *testing.T) {
	c := newCore[string](0, 0, nil)
	c.add("low", LowPriority, 0, at(0))
	for i := range 10000 {
		c.add(fmt.Sprint(i), 0, 0, at(int64(i)))
		if e := c.take(at(int64(i))); e.key == "low" {
			t.Fatalf("low-priority item handed out at %d with aging disabled", i)
		}
	}
}
