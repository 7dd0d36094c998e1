package ring

import (
	"math/rand"
	"strings"
	"testing"
)

func TestRingFIFO(t *testing.T) {
	cases := []struct {
		name    string
		min     int
		ops     string // 'p' pushes the next integer, 'o' pops and checks it
		wantLen int
		wantCap int
	}{
		{name: "empty zero value", min: -1, ops: "", wantLen: 0, wantCap: 0},
		{name: "pop on empty", min: 4, ops: "o", wantLen: 0, wantCap: 0},
		{name: "fits the initial capacity", min: 4, ops: "pppp", wantLen: 4, wantCap: 4},
		{name: "grows when full", min: 4, ops: "ppppp", wantLen: 5, wantCap: 8},
		{name: "wraps around", min: 4, ops: "pppooopppp", wantLen: 4, wantCap: 4},
		{name: "grows while wrapped", min: 4, ops: "pppoopppppp", wantLen: 7, wantCap: 8},
		{name: "shrinks after draining", min: 4, ops: "pppppppppppppppppoooooooooooooooo", wantLen: 1, wantCap: 4},
		{name: "a backlog that recurs keeps its capacity", min: 4, ops: strings.Repeat("p", 17) + strings.Repeat("o", 16) + strings.Repeat("p", 16) + strings.Repeat("o", 16), wantLen: 1, wantCap: 32},
		{name: "a backlog that recurs much later may shrink", min: 4, ops: strings.Repeat("p", 17) + strings.Repeat("o", 16) + strings.Repeat("po", 32) + strings.Repeat("p", 16) + strings.Repeat("o", 16), wantLen: 1, wantCap: 4},
		{name: "never below the minimum", min: 8, ops: "ppppppppppoooooooooo", wantLen: 0, wantCap: 8},
		{name: "minimum rounded to a power of two", min: 5, ops: "p", wantLen: 1, wantCap: 8},
		{name: "zero value minimum", min: -1, ops: "p", wantLen: 1, wantCap: defaultMinCapacity},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r *Ring[int]
			if tc.min < 0 {
				r = &Ring[int]{}
			} else {
				r = New[int](tc.min)
			}
			next, want := 0, 0
			for i, op := range tc.ops {
				switch op {
				case 'p':
					r.Push(next)
					next++
				case 'o':
					v, ok := r.Pop()
					if want == next {
						if ok {
							t.Fatalf("op %d: Pop on empty returned %d", i, v)
						}
						continue
					}
					if !ok || v != want {
						t.Fatalf("op %d: Pop() = %d, %v; want %d, true", i, v, ok, want)
					}
					want++
				}
			}
			if r.Len() != tc.wantLen || r.Cap() != tc.wantCap {
				t.Fatalf("Len, Cap = %d, %d; want %d, %d", r.Len(), r.Cap(), tc.wantLen, tc.wantCap)
			}
		})
	}
}

func TestRingPeekAndReset(t *testing.T) {
	r := New[string](2)
	if _, ok := r.Peek(); ok {
		t.Fatal("Peek on empty ring succeeded")
	}
	r.Push("a")
	r.Push("b")
	if v, ok := r.Peek(); !ok || v != "a" {
		t.Fatalf("Peek() = %q, %v; want a, true", v, ok)
	}
	if r.Len() != 2 {
		t.Fatalf("Peek changed Len to %d", r.Len())
	}
	r.Reset()
	if r.Len() != 0 || r.Cap() != 0 {
		t.Fatalf("after Reset: Len, Cap = %d, %d", r.Len(), r.Cap())
	}
	r.Push("c")
	if v, _ := r.Pop(); v != "c" {
		t.Fatalf("after Reset, Pop() = %q", v)
	}
}

// TestRingClearsPoppedSlots checks that popped pointers are not kept reachable.
func TestRingClearsPoppedSlots(t *testing.T) {
	r := New[*int](4)
	for i := 0; i < 3; i++ {
		v := i
		r.Push(&v)
	}
	r.Pop()
	if r.buf[0] != nil {
		t.Fatal("slot of the popped element was not cleared")
	}
}

// TestRingAgainstSlice drives a Ring and a plain slice with the same random operations.
func TestRingAgainstSlice(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		r := New[int](1 + rng.Intn(8))
		var model []int
		for i := 0; i < 5000; i++ {
			// Phases bias towards pushing, then popping, to exercise growth and shrinking.
			pushBias := 0.7
			if (i/500)%2 == 1 {
				pushBias = 0.3
			}
			if rng.Float64() < pushBias {
				r.Push(i)
				model = append(model, i)
			} else {
				v, ok := r.Pop()
				if len(model) == 0 {
					if ok {
						t.Fatalf("seed %d op %d: Pop on empty returned %d", seed, i, v)
					}
					continue
				}
				if !ok || v != model[0] {
					t.Fatalf("seed %d op %d: Pop() = %d, %v; want %d", seed, i, v, ok, model[0])
				}
				model = model[1:]
			}
			if r.Len() != len(model) {
				t.Fatalf("seed %d op %d: Len() = %d, want %d", seed, i, r.Len(), len(model))
			}
			if c := r.Cap(); c != 0 && (c&(c-1) != 0 || c < r.Len()) {
				t.Fatalf("seed %d op %d: bad capacity %d for %d elements", seed, i, c, r.Len())
			}
			if c := r.Cap(); c > r.shrinkFloor() && r.Len() < c/8 {
				t.Fatalf("seed %d op %d: capacity %d kept for only %d elements", seed, i, c, r.Len())
			}
		}
	}
}
