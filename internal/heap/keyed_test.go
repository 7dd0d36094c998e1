package heap

import (
	"math/rand"
	"slices"
	"testing"
)

func intLess(a, b int) bool { return a < b }

func TestKeyed(t *testing.T) {
	type op struct {
		kind string // set, remove, pop
		key  string
		val  int
	}
	cases := []struct {
		name    string
		ops     []op
		wantPop []int // the values popped by draining the heap afterwards
	}{
		{"empty", nil, nil},
		{"ordered", []op{{"set", "a", 3}, {"set", "b", 1}, {"set", "c", 2}}, []int{1, 2, 3}},
		{"set replaces and reorders", []op{{"set", "a", 3}, {"set", "b", 1}, {"set", "b", 5}}, []int{3, 5}},
		{"remove", []op{{"set", "a", 3}, {"set", "b", 1}, {"set", "c", 2}, {"remove", "a", 0}}, []int{1, 2}},
		{"remove missing", []op{{"set", "a", 3}, {"remove", "z", 0}}, []int{3}},
		{"pop then set", []op{{"set", "a", 3}, {"set", "b", 1}, {"pop", "", 0}, {"set", "b", 0}}, []int{0, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewKeyed[string](intLess)
			for _, o := range tc.ops {
				switch o.kind {
				case "set":
					h.Set(o.key, o.val)
				case "remove":
					h.Remove(o.key)
				case "pop":
					h.Pop()
				}
			}
			var got []int
			for h.Len() > 0 {
				_, v, _ := h.Pop()
				got = append(got, v)
			}
			if !slices.Equal(got, tc.wantPop) {
				t.Errorf("popped %v, want %v", got, tc.wantPop)
			}
			if _, _, ok := h.Pop(); ok {
				t.Error("Pop on an empty heap reported a value")
			}
			if _, _, ok := h.Peek(); ok {
				t.Error("Peek on an empty heap reported a value")
			}
		})
	}
}

// TestKeyedRandom checks the heap against a sorted model over random operations.
func TestKeyedRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	h := NewKeyed[int](intLess)
	model := map[int]int{}
	for step := 0; step < 5000; step++ {
		key := rng.Intn(50)
		switch rng.Intn(4) {
		case 0, 1:
			v := rng.Intn(1000)
			h.Set(key, v)
			model[key] = v
		case 2:
			_, had := h.Remove(key)
			if _, want := model[key]; had != want {
				t.Fatalf("step %d: Remove(%d) = %v, want %v", step, key, had, want)
			}
			delete(model, key)
		case 3:
			k, v, ok := h.Pop()
			if ok != (len(model) > 0) {
				t.Fatalf("step %d: Pop ok=%v with %d values", step, ok, len(model))
			}
			if !ok {
				continue
			}
			for _, other := range model {
				if other < v {
					t.Fatalf("step %d: popped %d but %d is smaller", step, v, other)
				}
			}
			if model[k] != v {
				t.Fatalf("step %d: popped %d=%d, model has %d", step, k, v, model[k])
			}
			delete(model, k)
		}
		if h.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, h.Len(), len(model))
		}
		for k, want := range model {
			if got, ok := h.Get(k); !ok || got != want {
				t.Fatalf("step %d: Get(%d) = %d, %v; want %d", step, k, got, ok, want)
			}
		}
		n := 0
		h.Each(func(k, v int) {
			n++
			if model[k] != v {
				t.Fatalf("step %d: Each gave %d=%d, want %d", step, k, v, model[k])
			}
		})
		if n != len(model) {
			t.Fatalf("step %d: Each visited %d, want %d", step, n, len(model))
		}
	}
}
