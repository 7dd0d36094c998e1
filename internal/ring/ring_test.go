package ring

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestRingFIFO(t *testing.T) {
	// Ints are 8 bytes, so chunks of a Ring[int] grow from the minimum capacity up to 1024.
	cases := []struct {
		name    string
		min     int
		ops     string // 'p' pushes the next integer, 'o' pops and checks it
		wantLen int
		wantCap int
	}{
		{name: "empty zero value", min: -1, ops: "", wantLen: 0, wantCap: 0},
		{name: "pop on empty", min: 4, ops: "o", wantLen: 0, wantCap: 0},
		{name: "fits the first chunk", min: 4, ops: "pppp", wantLen: 4, wantCap: 4},
		{name: "adds a chunk twice as large when full", min: 4, ops: "ppppp", wantLen: 5, wantCap: 4 + 8},
		{name: "an emptied chunk starts again", min: 4, ops: "pppooopppp", wantLen: 4, wantCap: 4},
		{name: "grows across chunks", min: 4, ops: "pppoopppppp", wantLen: 7, wantCap: 4 + 8},
		// 17 pushes fill chunks of 4, 8 and 16; popping 16 drains the first two: the first is
		// kept as the one spare, the second given back.
		{name: "gives drained chunks back", min: 4, ops: strings.Repeat("p", 17) + strings.Repeat("o", 16), wantLen: 1, wantCap: 16 + 4},
		// The second wave needs a new chunk (32) right after the first gave one back: the Ring
		// keeps 32 slots from then on, beyond its minimum.
		{name: "a backlog that recurs raises what is kept", min: 4, ops: strings.Repeat("p", 17) + strings.Repeat("o", 16) + strings.Repeat("p", 16) + strings.Repeat("o", 16), wantLen: 1, wantCap: 32 + 16},
		{name: "never below the minimum", min: 8, ops: "ppppppppppoooooooooo", wantLen: 0, wantCap: 8 + 16},
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

// TestRingMemory checks what a Ring allocates and keeps over a burst, a steady stream and a
// backlog that comes and goes.
func TestRingMemory(t *testing.T) {
	const chunk = 1024 // a Ring[int]'s largest chunk
	t.Run("a burst is given back once drained", func(t *testing.T) {
		r := New[int](64)
		for i := range 100_000 {
			r.Push(i)
		}
		if c := r.Cap(); c < 100_000 || c > 100_000+chunk {
			t.Fatalf("Cap() = %d for a backlog of 100000", c)
		}
		for range 100_000 {
			r.Pop()
		}
		if c := r.Cap(); c > 2*chunk {
			t.Fatalf("after draining, Cap() = %d, want at most %d", c, 2*chunk)
		}
	})
	t.Run("a steady stream allocates nothing", func(t *testing.T) {
		r := New[int](16)
		for i := range 5000 { // warm up: a backlog of 100 that never empties
			r.Push(i)
			if r.Len() > 100 {
				r.Pop()
			}
		}
		if allocs := testing.AllocsPerRun(10, func() {
			for i := range 10_000 {
				r.Push(i)
				r.Pop()
			}
		}); allocs != 0 {
			t.Fatalf("%v allocations per 10000 Push+Pop", allocs)
		}
	})
	t.Run("a recurring backlog stops allocating", func(t *testing.T) {
		r := New[int](16)
		wave := func() {
			for i := range 20_000 {
				r.Push(i)
			}
			for range 20_000 {
				r.Pop()
			}
		}
		wave()
		wave()
		wave()
		if allocs := testing.AllocsPerRun(5, wave); allocs != 0 {
			t.Fatalf("%v allocations per wave once the backlog has recurred", allocs)
		}
		if c := r.Cap(); c < 20_000 {
			t.Fatalf("Cap() = %d, want the recurring backlog's 20000 kept", c)
		}
		r.Reset()
		if r.Cap() != 0 {
			t.Fatalf("Cap() = %d after Reset", r.Cap())
		}
	})
	t.Run("one long backlog is not kept once drained", func(t *testing.T) {
		// A consumer at half the producer's pace, as a handler behind an initial list: the
		// backlog grows to 20000 while chunks are drained at its head and added at its tail.
		r := New[int](16)
		for i := range 40_000 {
			r.Push(i)
			if i%2 == 1 {
				r.Pop()
			}
		}
		for r.Len() > 0 {
			r.Pop()
		}
		if c := r.Cap(); c > 2*chunk {
			t.Fatalf("Cap() = %d after the backlog drained, want at most %d", c, 2*chunk)
		}
	})
	t.Run("a burst that does not recur is not kept", func(t *testing.T) {
		r := New[int](16)
		for i := range 20_000 {
			r.Push(i)
		}
		for range 20_000 {
			r.Pop()
		}
		for i := range 100_000 { // a long trickle: at most one element waits
			r.Push(i)
			r.Pop()
		}
		if c := r.Cap(); c > 2*chunk {
			t.Fatalf("Cap() = %d, want at most %d", c, 2*chunk)
		}
	})
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
func TestRingAllStopsEarly(t *testing.T) {
	r := New[int](2)
	for i := range 10 {
		r.Push(i)
	}
	r.Pop()
	var got []int
	for v := range r.All() {
		if v == 5 {
			break
		}
		got = append(got, v)
	}
	if want := []int{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("All() up to 5 = %v, want %v", got, want)
	}
	if r.Len() != 9 {
		t.Fatalf("All() changed the Ring: Len() = %d", r.Len())
	}
}

func TestRingClearsPoppedSlots(t *testing.T) {
	r := New[*int](4)
	for i := 0; i < 3; i++ {
		v := i
		r.Push(&v)
	}
	r.Pop()
	if r.chunks[0][0] != nil {
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
			if i%97 == 0 {
				if all := slices.Collect(r.All()); !slices.Equal(all, model) {
					t.Fatalf("seed %d op %d: All() = %v, want %v", seed, i, all, model)
				}
			}
			// Beyond what it keeps, a Ring holds its elements, the unused parts of its first
			// and last chunks, and one spare chunk.
			if c, most := r.Cap(), max(r.keep(), r.Len())+3*maxChunkLen[int](); c < r.Len() || c > most {
				t.Fatalf("seed %d op %d: capacity %d for %d elements, want at most %d", seed, i, c, r.Len(), most)
			}
		}
	}
}
