package sharding

import (
	"slices"
	"testing"
	"time"
)

func TestRing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	lease := func(name, holder, renew string) LeaseRecord {
		return LeaseRecord{Name: name, Holder: holder, Version: renew, Duration: 10 * time.Second}
	}
	type step struct {
		at      float64
		observe *LeaseRecord
		delete  string
		// then, at the same instant:
		live []string
		gone []string // names that must be gone
		not  []string // names that must be neither live nor gone
	}
	rec := func(r LeaseRecord) *LeaseRecord { return &r }
	cases := []struct {
		name  string
		steps []step
	}{
		{"renewals keep a member live; expiry is from the last observed change", []step{
			{at: 0, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
			{at: 5, observe: rec(lease("a", "a", "r2")), live: []string{"a"}},
			{at: 14.9, live: []string{"a"}},
			{at: 15, live: nil, gone: []string{"a"}},
		}},
		{"a resync of an unchanged lease does not extend it", []step{
			{at: 0, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
			{at: 9, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
			{at: 10, live: nil, gone: []string{"a"}},
		}},
		{"a released lease is gone at once", []step{
			{at: 0, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
			{at: 1, observe: rec(lease("a", "", "r2")), live: nil, gone: []string{"a"}},
		}},
		{"a lease held by another identity is not a member, gone after a duration", []step{
			{at: 0, observe: rec(lease("a", "x", "r1")), live: nil, not: []string{"a"}},
			{at: 10, gone: []string{"a"}},
		}},
		{"a deleted lease is gone a duration after the deletion was seen", []step{
			{at: 0, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
			{at: 4, delete: "a", live: nil, not: []string{"a"}},
			{at: 13.9, not: []string{"a"}},
			{at: 14, gone: []string{"a"}},
		}},
		{"a recreated lease is live again", []step{
			{at: 0, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
			{at: 4, delete: "a"},
			{at: 5, observe: rec(lease("a", "a", "r1")), live: []string{"a"}},
		}},
		{"unseen names are gone only after the grace", []step{
			{at: 0, not: []string{"never"}},
			{at: 14.9, not: []string{"never"}},
			{at: 15, gone: []string{"never"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRing(t0, 15*time.Second)
			for i, s := range tc.steps {
				now := at(s.at)
				if s.observe != nil {
					r.Observe(*s.observe, now)
				}
				if s.delete != "" {
					r.Delete(s.delete, now)
				}
				snap := r.Snapshot(now)
				if got := r.Members(now); !slices.Equal(got, s.live) {
					t.Fatalf("step %d: members %v, want %v", i, got, s.live)
				}
				if !slices.Equal(snap.Members(), s.live) {
					t.Fatalf("step %d: snapshot members %v, want %v", i, snap.Members(), s.live)
				}
				for _, g := range s.gone {
					if !r.Gone(g, now) || !snap.Gone(g) {
						t.Fatalf("step %d: %s not gone", i, g)
					}
				}
				for _, n := range s.not {
					if r.Gone(n, now) || r.Live(n, now) || snap.Gone(n) || snap.Live(n) {
						t.Fatalf("step %d: %s live or gone, want neither", i, n)
					}
				}
			}
		})
	}
}

func TestRingNextChangeAndPrune(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewRing(t0, 15*time.Second)
	r.Observe(LeaseRecord{Name: "a", Holder: "a", Version: "1", Duration: 10 * time.Second}, t0)
	r.Observe(LeaseRecord{Name: "b", Holder: "b", Version: "1", Duration: 10 * time.Second}, t0.Add(3*time.Second))
	if next, ok := r.NextChange(t0); !ok || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("NextChange = %v, %v; want a's expiry", next, ok)
	}
	if next, ok := r.NextChange(t0.Add(10 * time.Second)); !ok || !next.Equal(t0.Add(13*time.Second)) {
		t.Fatalf("NextChange after a expired = %v, %v; want b's expiry", next, ok)
	}
	if next, ok := r.NextChange(t0.Add(13 * time.Second)); !ok || !next.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("NextChange = %v, %v; want the end of the grace", next, ok)
	}
	if _, ok := r.NextChange(t0.Add(15 * time.Second)); ok {
		t.Fatal("NextChange found a change with nothing left to expire")
	}
	if pruned := r.Prune(t0.Add(14*time.Second), 0); len(pruned) != 0 {
		t.Fatalf("pruned %v before the grace ended", pruned)
	}
	if pruned := r.Prune(t0.Add(20*time.Second), 8*time.Second); !slices.Equal(pruned, []string{"a"}) {
		t.Fatalf("pruned %v, want [a]", pruned)
	}
	if !r.Gone("a", t0.Add(20*time.Second)) {
		t.Fatal("a pruned member must stay gone")
	}
}
