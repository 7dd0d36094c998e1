package heap

import (
	"math/rand"
	"slices"
	"testing"
)

// tracked is a value that knows its index, as a caller of New with a moved function keeps
// it; tie orders values with equal keys.
type tracked struct {
	key   int64
	tie   int
	index int
}

func (v *tracked) order(w *tracked) int {
	if v.key != w.key {
		return int(v.key - w.key)
	}
	return v.tie - w.tie
}

func newTracked() *Heap[*tracked] {
	return New(func(a, b *tracked) bool { return a.tie < b.tie }, func(v *tracked, i int) { v.index = i })
}

// check fails unless h is ordered and every value knows its index and key.
func check(t *testing.T, step int, h *Heap[*tracked]) {
	t.Helper()
	for i := range h.Len() {
		key, v := h.At(i)
		if v.index != i || key != v.key {
			t.Fatalf("step %d: value %+v at %d with key %d", step, v, i, key)
		}
		if _, parent := h.At((i - 1) / 2); i > 0 && v.order(parent) < 0 {
			t.Fatalf("step %d: value %+v at %d goes before its parent %+v", step, v, i, parent)
		}
	}
}

// TestHeapAgainstModel drives a Heap with random Push, Pop, Remove, Replace, Fix and Filter
// calls and checks it against a slice.
func TestHeapAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	h := newTracked()
	var model []*tracked // the values, in no order
	smallest := func() *tracked { return slices.MinFunc(model, (*tracked).order) }
	for step := range 20000 {
		switch op := rng.Intn(10); {
		case op < 5 || len(model) == 0:
			v := &tracked{key: int64(rng.Intn(100)), tie: rng.Intn(10)}
			// It ends at the root if it goes before every other value (not if it only ties).
			newHead := !slices.ContainsFunc(model, func(w *tracked) bool { return w.order(v) <= 0 })
			if i := h.Push(v.key, v); (i == 0) != newHead {
				t.Fatalf("step %d: Push(%+v) ended at %d", step, v, i)
			}
			model = append(model, v)
		case op < 7:
			want := smallest()
			if _, p, _ := h.Peek(); p.order(want) != 0 {
				t.Fatalf("step %d: Peek() = %+v, want %+v", step, p, want)
			}
			key, got := h.Pop()
			if got.order(want) != 0 || key != got.key {
				t.Fatalf("step %d: Pop() = %d, %+v; want %+v", step, key, got, want)
			}
			model = slices.DeleteFunc(model, func(v *tracked) bool { return v == got })
		case op < 8:
			v := model[rng.Intn(len(model))]
			if _, got := h.Remove(v.index); got != v {
				t.Fatalf("step %d: Remove(%d) removed %+v, want %+v", step, v.index, got, v)
			}
			model = slices.DeleteFunc(model, func(w *tracked) bool { return w == v })
		case op < 9:
			v := model[rng.Intn(len(model))]
			if rng.Intn(2) == 0 {
				v.tie = rng.Intn(10)
				h.Fix(v.index)
			} else {
				v.key = int64(rng.Intn(100))
				h.Replace(v.index, v.key, v)
			}
		default:
			if rng.Intn(20) == 0 {
				h.Filter(func(_ int64, v *tracked) bool { return v.tie%3 != 0 })
				model = slices.DeleteFunc(model, func(v *tracked) bool { return v.tie%3 == 0 })
			}
		}
		if h.Len() != len(model) {
			t.Fatalf("step %d: Len() = %d, want %d", step, h.Len(), len(model))
		}
		check(t, step, h)
	}
}

// TestHeapMemory: a drained burst gives its backing array back, and popped slots are cleared.
func TestHeapMemory(t *testing.T) {
	h := New[*int](nil, nil)
	for i := range 100 * shrinkThreshold {
		h.Push(int64(i), &i)
	}
	for h.Len() > 1 {
		h.Pop()
	}
	if c := cap(h.items); c > shrinkThreshold {
		t.Errorf("capacity %d kept for %d values", c, h.Len())
	}
	h.Pop()
	if full := h.items[:cap(h.items)]; slices.ContainsFunc(full, func(s slot[*int]) bool { return s.v != nil }) {
		t.Error("a popped value is still referenced")
	}
	if _, _, ok := h.Peek(); ok {
		t.Error("Peek on an empty heap reported a value")
	}
	h.Push(0, new(int))
	h.Clear()
	if h.Len() != 0 || h.items[:1][0].v != nil {
		t.Error("Clear left a value behind")
	}
}

func TestShrinkCap(t *testing.T) {
	cases := []struct {
		n, c, want int
	}{
		{0, shrinkThreshold, 0}, // small arrays stay
		{0, 4 * shrinkThreshold, shrinkThreshold},
		{10, 64 * shrinkThreshold, 16 * shrinkThreshold},
		{4*shrinkThreshold - 1, 64 * shrinkThreshold, 16 * shrinkThreshold},
		{4 * shrinkThreshold, 64 * shrinkThreshold, 0}, // 1/16 full: keep
		{1, 2 * shrinkThreshold, shrinkThreshold},      // never below the threshold
	}
	for _, tc := range cases {
		if got := shrinkCap(tc.n, tc.c); got != tc.want {
			t.Errorf("shrinkCap(%d, %d) = %d, want %d", tc.n, tc.c, got, tc.want)
		}
	}
}

// TestHeapByKey checks a heap ordered by key alone, with no index tracking (the path a
// delaying queue's waiting set takes), against a sorted model.
func TestHeapByKey(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	h := New[int](nil, nil)
	var model []int64
	for step := range 20000 {
		if rng.Intn(3) > 0 || len(model) == 0 {
			key := int64(rng.Intn(500))
			h.Push(key, int(key))
			model = append(model, key)
			continue
		}
		slices.Sort(model)
		key, v := h.Pop()
		if key != model[0] || v != int(key) {
			t.Fatalf("step %d: Pop() = %d, %d; want key %d", step, key, v, model[0])
		}
		model = model[1:]
		if len(model) > 0 && rng.Intn(50) == 0 {
			i := rng.Intn(h.Len())
			k, _ := h.Remove(i)
			model = slices.Delete(model, slices.Index(model, k), slices.Index(model, k)+1)
		}
	}
}
