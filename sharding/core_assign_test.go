package sharding

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d/obj-%d", i%37, i)
	}
	return out
}

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("replica-%d", i)
	}
	return out
}

// referenceAssign is the definition of rendezvous hashing written plainly: sort the members by
// score (descending), then by name, and take the first.
func referenceAssign(key string, ms []string) (string, bool) {
	if len(ms) == 0 {
		return "", false
	}
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b string) int {
		sa, sb := score(a, key), score(b, key)
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return cmpString(a, b)
	})
	return sorted[0], true
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestAssignEmpty(t *testing.T) {
	if m, ok := Assign("ns/a", nil); ok || m != "" {
		t.Fatalf("Assign over no members = %q, %v; want \"\", false", m, ok)
	}
}

func TestAssignIgnoresOrderAndDuplicates(t *testing.T) {
	ms := members(7)
	shuffled := slices.Clone(ms)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range keys(2000) {
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		want, _ := referenceAssign(k, ms)
		got, ok := Assign(k, append(slices.Clone(shuffled), shuffled[0]))
		if !ok || got != want {
			t.Fatalf("Assign(%q) = %q over shuffled members with a duplicate, want %q", k, got, want)
		}
	}
}

// TestAssignMovement checks the property the design relies on: when one member leaves, only
// its keys move; when one joins, only keys moving to it move, and about 1/N of them.
func TestAssignMovement(t *testing.T) {
	ks := keys(10000)
	for _, n := range []int{2, 3, 5, 10} {
		t.Run(fmt.Sprintf("%d members", n), func(t *testing.T) {
			before := members(n)
			joined := append(slices.Clone(before), "replica-new")
			left := before[1:]
			moved := 0
			for _, k := range ks {
				b, _ := Assign(k, before)
				j, _ := Assign(k, joined)
				if j != b {
					moved++
					if j != "replica-new" {
						t.Fatalf("join moved %q from %s to %s, not to the new member", k, b, j)
					}
				}
				l, _ := Assign(k, left)
				if l != b && b != before[0] {
					t.Fatalf("leave of %s moved %q from %s to %s", before[0], k, b, l)
				}
				if b == before[0] && l == b {
					t.Fatalf("leave of %s kept %q on it", b, k)
				}
			}
			frac := float64(moved) / float64(len(ks))
			want := 1 / float64(n+1)
			if frac > want+0.05 || frac < want-0.05 {
				t.Fatalf("join moved %.3f of the keys, want %.3f ± 0.05", frac, want)
			}
		})
	}
}

func TestAssignBalance(t *testing.T) {
	ks := keys(10000)
	ms := members(3)
	count := map[string]int{}
	for _, k := range ks {
		m, _ := Assign(k, ms)
		count[m]++
	}
	for _, m := range ms {
		if share := float64(count[m]) / float64(len(ks)); share > 1.0/3+0.03 || share < 1.0/3-0.03 {
			t.Errorf("%s owns %.3f of the keys, want 1/3 ± 0.03", m, share)
		}
	}
}

func FuzzAssign(f *testing.F) {
	f.Add("ns/a", "a,b,c", "d")
	f.Add("", "x", "y")
	f.Fuzz(func(t *testing.T, key, list, extra string) {
		var ms []string
		start := 0
		for i := 0; i <= len(list); i++ {
			if i == len(list) || list[i] == ',' {
				ms = append(ms, list[start:i])
				start = i + 1
			}
		}
		got, ok := Assign(key, ms)
		want, wantOK := referenceAssign(key, ms)
		if got != want || ok != wantOK {
			t.Fatalf("Assign(%q, %q) = %q, %v; reference %q, %v", key, ms, got, ok, want, wantOK)
		}
		// Adding a member either keeps the owner or makes the new member the owner.
		withExtra, _ := Assign(key, append(slices.Clone(ms), extra))
		if withExtra != got && withExtra != extra {
			t.Fatalf("adding %q moved %q from %q to %q", extra, key, got, withExtra)
		}
		// Removing a member that does not own the key changes nothing.
		for i, m := range ms {
			if m == got {
				continue
			}
			rest := slices.Delete(slices.Clone(ms), i, i+1)
			if r, _ := Assign(key, rest); r != got {
				t.Fatalf("removing %q moved %q from %q to %q", m, key, got, r)
			}
		}
	})
}
