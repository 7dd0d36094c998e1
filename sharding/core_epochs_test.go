package sharding

import (
	"fmt"
	"slices"
	"testing"
)

func TestParseEpoch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Epoch
		ok   bool
	}{
		{"1:a", Epoch{1, []string{"a"}}, true},
		{"7:b-2,a-1", Epoch{7, []string{"a-1", "b-2"}}, true},
		{"3:", Epoch{Number: 3}, true},
		{"", Epoch{}, false},
		{"7", Epoch{}, false},
		{"0:a", Epoch{}, false},
		{"-1:a", Epoch{}, false},
		{"x:a", Epoch{}, false},
		{"18446744073709551616:a", Epoch{}, false},
		{"2:a,,b", Epoch{}, false},
		{"2:a,a", Epoch{}, false},
	} {
		got, ok := parseEpoch(tc.in)
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseEpoch(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok {
			if back, _ := parseEpoch(encodeEpoch(got)); fmt.Sprint(back) != fmt.Sprint(got) {
				t.Errorf("%q does not survive encoding: %v", tc.in, back)
			}
		}
	}
	for in, want := range map[string]uint64{"4": 4, "": 0, "x": 0, "-2": 0, "1.5": 0} {
		if got := parseAcknowledged(in); got != want {
			t.Errorf("parseAcknowledged(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestNextEpoch(t *testing.T) {
	gone := func(names ...string) func(string) bool {
		return func(m string) bool { return slices.Contains(names, m) }
	}
	for _, tc := range []struct {
		name      string
		cur       Epoch
		live      []string
		confirmed func(string) bool
		want      Epoch
		changed   bool
	}{
		{"nothing yet", Epoch{}, nil, gone(), Epoch{}, false},
		{"first members", Epoch{}, []string{"b", "a"}, gone(), Epoch{1, []string{"a", "b"}}, true},
		{"unchanged", Epoch{4, []string{"a", "b"}}, []string{"b", "a"}, gone(), Epoch{4, []string{"a", "b"}}, false},
		{"join", Epoch{4, []string{"a", "b"}}, []string{"a", "b", "c"}, gone(), Epoch{5, []string{"a", "b", "c"}}, true},
		{"expired but not confirmed stays", Epoch{4, []string{"a", "b"}}, []string{"a"}, gone(), Epoch{4, []string{"a", "b"}}, false},
		{"confirmed gone leaves", Epoch{4, []string{"a", "b"}}, []string{"a"}, gone("b"), Epoch{5, []string{"a"}}, true},
		{"join while one departs unconfirmed", Epoch{4, []string{"a", "b"}}, []string{"a", "c"}, gone(), Epoch{5, []string{"a", "b", "c"}}, true},
		{"last member gone", Epoch{4, []string{"a"}}, nil, gone("a"), Epoch{Number: 5}, true},
	} {
		got, changed := NextEpoch(tc.cur, tc.live, tc.confirmed)
		if changed != tc.changed || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: NextEpoch = %v, %v; want %v, %v", tc.name, got, changed, tc.want, tc.changed)
		}
	}
	if got := departing(Epoch{4, []string{"a", "b", "c"}}, []string{"b", "d"}); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("departing = %v", got)
	}
}

func TestSegmentsAgreeWithHashRanges(t *testing.T) {
	ms := members(4)
	ranges := HashRanges(ms)
	for _, m := range ms {
		if got := ownedSegments(ms, m).ranges(); fmt.Sprint(got) != fmt.Sprint(ranges[m]) {
			t.Errorf("%s: segments %v, HashRanges %v", m, got, ranges[m])
		}
	}
	if !ownedSegments(ms, "not-a-member").empty() {
		t.Error("a non-member owns segments")
	}
	for _, h := range []uint64{0, segmentWidth - 1, segmentWidth, ^uint64(0)} {
		owner := segmentOwners(ms)[segmentOf(h)]
		if !InRanges(h, ranges[owner]) {
			t.Errorf("hash %#x: segment owner %s does not hold it in HashRanges", h, owner)
		}
	}
}

// firstSegments returns a segment member owns among members, and one it does not.
func firstSegments(members []string, member string) (owned, other int) {
	owned, other = -1, -1
	for i, o := range segmentOwners(members) {
		if o == member && owned < 0 {
			owned = i
		}
		if o != member && other < 0 {
			other = i
		}
	}
	return owned, other
}

func TestRangeStateHandOver(t *testing.T) {
	acks := map[string]uint64{}
	acked := func(m string) (uint64, bool) { n, ok := acks[m]; return n, ok }
	a := &rangeState{member: "a"}
	e1 := Epoch{1, []string{"a"}}
	if !a.advance(e1) || a.advance(e1) || a.advance(Epoch{}) {
		t.Fatal("advance adopts only newer epochs")
	}
	if a.active.count() != 0 {
		t.Fatal("segments active before activation")
	}
	if n, ok := a.ackDue(segments{}); !ok || n != 1 {
		t.Fatalf("ackDue = %d, %v; want 1", n, ok)
	}
	a.acknowledged(1)
	acks["a"] = 1
	if _, ok := a.ackDue(segments{}); ok {
		t.Fatal("an acknowledged epoch is due again")
	}
	if !a.activate(acked) || a.active.count() != hashSegments {
		t.Fatalf("a sole member activates every segment, got %d", a.active.count())
	}

	// b joins: a stops the segments it loses at once, acknowledges only once none of them is
	// busy; b activates only when a acknowledged epoch 2 exactly.
	e2 := Epoch{2, []string{"a", "b"}}
	b := &rangeState{member: "b"}
	b.advance(e2)
	a.advance(e2)
	kept, lost := firstSegments(e2.Members, "a")
	if a.active.has(lost) || !a.active.has(kept) {
		t.Fatal("advance must drop exactly the lost segments from the active ones")
	}
	var busy segments
	busy.add(lost)
	if _, ok := a.ackDue(busy); ok {
		t.Fatal("acknowledged with a reconcile running in a lost segment")
	}
	var busyKept segments
	busyKept.add(kept)
	if n, ok := a.ackDue(busyKept); !ok || n != 2 {
		t.Fatal("a reconcile in a kept segment must not hold the acknowledgement back")
	}
	if b.activate(acked) {
		t.Fatal("b activated before a acknowledged epoch 2")
	}
	acks["a"] = 3 // an acknowledgement of a later epoch does not count for 2
	if b.activate(acked) {
		t.Fatal("b activated on an acknowledgement of another epoch")
	}
	acks["a"] = 2
	if !b.activate(acked) || !b.active.has(lost) || b.active.has(kept) {
		t.Fatal("b must activate exactly its segments once a acknowledged 2")
	}

	// A member that skips an epoch keeps the segments it owns in the one it adopts.
	c := &rangeState{member: "a"}
	c.advance(e1)
	c.activate(acked)
	c.advance(Epoch{3, []string{"a"}})
	if c.active.count() != hashSegments {
		t.Fatal("a kept segment stopped on an epoch change")
	}
}
