package workqueue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestWaitingSet(t *testing.T) {
	type add struct {
		item string
		due  int64
		head bool // add must report a new earliest due time
	}
	cases := []struct {
		name string
		adds []add
		now  int64
		want []string // popDue(now), in order
		next int64    // next() afterwards; -1 for none
	}{
		{"empty", nil, 100, nil, -1},
		{"in due order", []add{{"c", 30, true}, {"a", 10, true}, {"b", 20, false}}, 100, []string{"a", "b", "c"}, -1},
		{"only what is due", []add{{"a", 10, true}, {"b", 20, false}, {"c", 30, false}}, 20, []string{"a", "b"}, 30},
		{"earlier re-add wins", []add{{"a", 50, true}, {"b", 40, true}, {"a", 10, true}}, 20, []string{"a"}, 40},
		{"later re-add is ignored", []add{{"a", 10, true}, {"a", 50, false}}, 20, []string{"a"}, -1},
		{"stale slot is not delivered", []add{{"a", 50, true}, {"a", 10, true}}, 100, []string{"a"}, -1},
		{"stale slot does not count as next", []add{{"a", 50, true}, {"a", 10, true}}, 10, []string{"a"}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWaitingSet[string]()
			for i, a := range tc.adds {
				if got := w.add(a.item, a.due); got != a.head {
					t.Fatalf("add #%d %v: new head = %v", i, a, got)
				}
			}
			got := w.popDue(tc.now, nil, 1000)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("popDue(%d) = %v, want %v", tc.now, got, tc.want)
			}
			next, ok := w.next()
			if !ok {
				next = -1
			}
			if next != tc.next {
				t.Fatalf("next = %d, want %d", next, tc.next)
			}
		})
	}
}

// TestWaitingSetModel compares random adds and pops with a plain map of due times.
func TestWaitingSetModel(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			w := newWaitingSet[int]()
			model := map[int]int64{}
			now := int64(0)
			for step := range 8000 {
				switch rng.IntN(10) {
				case 0, 1: // time passes, due items come out
					now += rng.Int64N(50)
					limit := 1 + rng.IntN(20)
					got := w.popDue(now, nil, limit)
					var due []int
					for item, at := range model {
						if at <= now {
							due = append(due, item)
						}
					}
					if len(got) != min(limit, len(due)) {
						t.Fatalf("step %d: popDue gave %d items, %d due, limit %d", step, len(got), len(due), limit)
					}
					last := int64(-1 << 63)
					for _, item := range got {
						at, ok := model[item]
						if !ok || at > now || at < last {
							t.Fatalf("step %d: popDue gave %d (due %d, ok %v) out of order", step, item, at, ok)
						}
						last = at
						delete(model, item)
					}
				default: // AddAfter of a key, earlier or later than it was
					item := rng.IntN(300)
					at := now + 1 + rng.Int64N(500)
					w.add(item, at)
					if cur, ok := model[item]; !ok || at < cur {
						model[item] = at
					}
				}
				if w.len() != len(model) {
					t.Fatalf("step %d: len = %d, model %d", step, w.len(), len(model))
				}
				want, wantOK := int64(0), false
				for _, at := range model {
					if !wantOK || at < want {
						want, wantOK = at, true
					}
				}
				if got, ok := w.next(); ok != wantOK || got != want {
					t.Fatalf("step %d: next = %d, %v; want %d, %v", step, got, ok, want, wantOK)
				}
				if w.heap.Len() > 2*len(w.due)+shrinkThreshold {
					t.Fatalf("step %d: %d slots for %d items: stale slots are not compacted", step, w.heap.Len(), len(w.due))
				}
			}
		})
	}
}

// TestWaitingSetCompacts moves one item earlier again and again: the stale slots must not pile up.
func TestWaitingSetCompacts(t *testing.T) {
	w := newWaitingSet[int]()
	w.add(1, 1<<40)
	for i := range 10 * shrinkThreshold {
		w.add(1, 1<<40-int64(i)-1)
	}
	if w.heap.Len() > shrinkThreshold+2 {
		t.Fatalf("%d slots kept for one item", w.heap.Len())
	}
	if got := w.popDue(1<<40, nil, 10); !slices.Equal(got, []int{1}) {
		t.Fatalf("popDue = %v", got)
	}
}

func TestWaitingSetShrinks(t *testing.T) {
	w := newWaitingSet[int]()
	for i := range 8 * shrinkThreshold {
		w.add(i, int64(i))
	}
	var out []int
	for len(out) < 8*shrinkThreshold {
		out = w.popDue(1<<40, out, len(out)+100)
	}
	if w.heap.Cap() > shrinkThreshold || w.peak != 0 {
		t.Fatalf("after draining: heap capacity %d, map peak %d", w.heap.Cap(), w.peak)
	}
}
