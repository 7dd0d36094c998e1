package sharding

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// ownerOfHash returns the members whose ranges contain h.
func ownersOfHash(h uint64, ranges map[string][]HashRange) []string {
	var out []string
	for m, rs := range ranges {
		if InRanges(h, rs) {
			out = append(out, m)
		}
	}
	return out
}

func TestHashRangesCoverOnce(t *testing.T) {
	if got := HashRanges(nil); len(got) != 0 {
		t.Fatalf("HashRanges(nil) = %v", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 7; n++ {
		ms := members(n)
		ranges := HashRanges(ms)
		shuffled := slices.Clone(ms)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if fmt.Sprint(HashRanges(shuffled)) != fmt.Sprint(ranges) {
			t.Fatalf("%d members: the ranges depend on the members' order", n)
		}
		// Every segment boundary, both ends of the space and random hashes have one owner.
		probes := []uint64{0, ^uint64(0)}
		for i := range uint64(hashSegments) {
			probes = append(probes, i*segmentWidth, i*segmentWidth-1)
		}
		for range 1000 {
			probes = append(probes, rng.Uint64())
		}
		for _, h := range probes {
			if owners := ownersOfHash(h, ranges); len(owners) != 1 {
				t.Fatalf("%d members: hash %#x owned by %v", n, h, owners)
			}
		}
		for m, rs := range ranges {
			for i, r := range rs {
				if r.End != 0 && r.End <= r.Start || i > 0 && rs[i-1].End >= r.Start && rs[i-1].End != 0 {
					t.Fatalf("%s: ranges not sorted, disjoint and merged: %v", m, rs)
				}
			}
		}
	}
}

// TestHashRangesMovement: a join moves hashes only to the new member; a leave moves only the
// leaver's hashes.
func TestHashRangesMovement(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	before := HashRanges(members(3))
	after := HashRanges(members(4))
	joined := members(4)[3]
	moved := 0
	const probes = 20000
	for range probes {
		h := rng.Uint64()
		was, is := ownersOfHash(h, before)[0], ownersOfHash(h, after)[0]
		if was != is {
			moved++
			if is != joined {
				t.Fatalf("hash %#x moved from %s to %s, not to the joining member", h, was, is)
			}
		}
	}
	if share := float64(moved) / probes; share < 0.15 || share > 0.35 {
		t.Fatalf("a 4th member took %.1f%% of the hashes, want about 25%%", 100*share)
	}
	// The leave is the join backwards.
}

// TestHashRangesBalance: with three members each owns a third of the space, within the
// spread that 128 segments allow.
func TestHashRangesBalance(t *testing.T) {
	for n := 2; n <= 5; n++ {
		ranges := HashRanges(members(n))
		for m, rs := range ranges {
			var width float64
			for _, r := range rs {
				width += float64(r.End - r.Start) // End 0 wraps: the subtraction still gives the width
			}
			share := width / (1 << 64)
			if want := 1 / float64(n); share < want*0.7 || share > want*1.3 {
				t.Errorf("%d members: %s owns %.1f%% of the space, want %.1f%% ± 30%%", n, m, 100*share, 100*want)
			}
		}
	}
}

func TestHashKeyIsTheServersHash(t *testing.T) {
	for _, v := range []string{"", "ns", "0b7c7e5c-1f0e-4c7e-9a56-0d5b1d7b3e11"} {
		if got, want := fmt.Sprintf("%016x", HashKey(v)), apisharding.HashField(v); got != want {
			t.Fatalf("HashKey(%q) = %s, the server's hash is %s", v, got, want)
		}
	}
}

func TestShardSelector(t *testing.T) {
	sel, err := ShardSelector(FieldUID, []HashRange{{Start: 0, End: 1 << 63}, {Start: 0xc000000000000000, End: 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || " +
		"shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"
	if sel != want {
		t.Fatalf("ShardSelector = %q, want %q", sel, want)
	}
	if sel, err := ShardSelector(FieldNamespace, nil); err != nil || sel != "" {
		t.Fatalf("no ranges: %q, %v", sel, err)
	}
	if _, err := ShardSelector("object.metadata.name", nil); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("an unsupported field: %v, want ErrInvalidOptions", err)
	}
}

// TestShardSelectorMatchesRanges checks the selector against apimachinery's own matcher (the
// one a server runs): an object matches a member's selector exactly when its UID's hash lies
// in the member's ranges.
func TestShardSelectorMatchesRanges(t *testing.T) {
	ranges := HashRanges(members(3))
	matchers := map[string]apisharding.Selector{}
	for m, rs := range ranges {
		var reqs []apisharding.ShardRangeRequirement
		for _, r := range rs {
			end := fmt.Sprintf("0x%016x", r.End)
			if r.End == 0 {
				end = "0x10000000000000000"
			}
			reqs = append(reqs, apisharding.ShardRangeRequirement{Key: FieldUID, Start: fmt.Sprintf("0x%016x", r.Start), End: end})
		}
		matchers[m] = apisharding.NewSelector(reqs...)
	}
	for i := range 300 {
		uid := types.UID(fmt.Sprintf("uid-%d", i))
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: uid}}
		var matched []string
		for m, sel := range matchers {
			ok, err := sel.Matches(obj)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				matched = append(matched, m)
			}
		}
		if want := ownersOfHash(HashKey(string(uid)), ranges); fmt.Sprint(matched) != fmt.Sprint(want) {
			t.Fatalf("uid %s: the server's matcher selects it for %v, the ranges for %v", uid, matched, want)
		}
	}
}
