package sharding

import (
	"testing"
)

// fixedMembership assigns every key to owner and knows live and gone members by name.
type fixedMembership struct {
	owner      string
	live, gone map[string]bool
}

func (f fixedMembership) Owner(string) (string, bool) { return f.owner, f.owner != "" }
func (f fixedMembership) Live(m string) bool          { return f.live[m] }
func (f fixedMembership) Gone(m string) bool          { return f.gone[m] }

func TestDecide(t *testing.T) {
	ring := fixedMembership{owner: "b", live: map[string]bool{"a": true, "b": true}, gone: map[string]bool{"dead": true}}
	empty := fixedMembership{gone: map[string]bool{"dead": true}}
	cases := []struct {
		name string
		s    State
		m    Membership
		want Action
	}{
		{"unassigned", State{}, ring, Action{Kind: AssignTo, To: "b"}},
		{"unassigned, no members", State{}, empty, Action{Kind: None}},
		{"at its owner", State{Shard: "b"}, ring, Action{Kind: None, From: "b"}},
		{"at a live member that is not its owner", State{Shard: "a"}, ring, Action{Kind: DrainFrom, From: "a", To: "b"}},
		{"draining at a live member", State{Shard: "a", Draining: true}, ring, Action{Kind: Wait, From: "a"}},
		{"draining back to its owner completes the hand-over", State{Shard: "b", Draining: true}, ring, Action{Kind: Wait, From: "b"}},
		{"owner gone", State{Shard: "dead"}, ring, Action{Kind: Reassign, From: "dead", To: "b"}},
		{"owner gone while draining", State{Shard: "dead", Draining: true}, ring, Action{Kind: Reassign, From: "dead", To: "b"}},
		{"owner gone, no members", State{Shard: "dead"}, empty, Action{Kind: None, From: "dead"}},
		{"owner neither live nor gone", State{Shard: "expiring"}, ring, Action{Kind: None, From: "expiring"}},
		{"draining at a member neither live nor gone", State{Shard: "expiring", Draining: true}, ring, Action{Kind: Wait, From: "expiring"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide("ns/x", tc.s, tc.m); got != tc.want {
				t.Fatalf("Decide(%+v) = %+v, want %+v", tc.s, got, tc.want)
			}
		})
	}
}

func TestDecideControlled(t *testing.T) {
	cases := []struct {
		name  string
		s     State
		owner string
		ok    bool
		want  Action
	}{
		{"unassigned", State{}, "b", true, Action{Kind: AssignTo, To: "b"}},
		{"unassigned, owner unknown", State{}, "", false, Action{Kind: None}},
		{"with its owner", State{Shard: "b"}, "b", true, Action{Kind: None, From: "b"}},
		{"elsewhere", State{Shard: "a"}, "b", true, Action{Kind: Reassign, From: "a", To: "b"}},
		{"draining by mistake", State{Shard: "b", Draining: true}, "b", true, Action{Kind: Reassign, From: "b", To: "b"}},
		{"elsewhere, owner unknown", State{Shard: "a"}, "", false, Action{Kind: None, From: "a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideControlled(tc.s, tc.owner, tc.ok); got != tc.want {
				t.Fatalf("DecideControlled(%+v, %q, %v) = %+v, want %+v", tc.s, tc.owner, tc.ok, got, tc.want)
			}
		})
	}
}

func TestDecideFollower(t *testing.T) {
	ring := fixedMembership{owner: "b", live: map[string]bool{"a": true, "b": true}, gone: map[string]bool{"dead": true}}
	empty := fixedMembership{}
	st := func(shard string, draining bool) *State { return &State{Shard: shard, Draining: draining} }
	cases := []struct {
		name  string
		s     State
		owner *State
		m     Membership
		want  Action
	}{
		{"new, owner unknown: its key's member", State{}, nil, ring, Action{Kind: AssignTo, To: "b"}},
		{"new, owner unknown, no members", State{}, nil, empty, Action{Kind: None}},
		{"owner settled elsewhere than its key's member: follow the owner", State{}, st("a", false), ring, Action{Kind: AssignTo, To: "a"}},
		{"with its settled owner", State{Shard: "a"}, st("a", false), ring, Action{Kind: None, From: "a"}},
		{"behind its settled owner", State{Shard: "dead"}, st("b", false), ring, Action{Kind: Reassign, From: "dead", To: "b"}},
		{"owner draining: wait", State{Shard: "a"}, st("a", true), ring, Action{Kind: Wait, From: "a"}},
		{"owner unassigned: wait", State{Shard: "a"}, st("", false), ring, Action{Kind: Wait, From: "a"}},
		{"owner on a gone member: wait", State{Shard: "dead"}, st("dead", false), ring, Action{Kind: Wait, From: "dead"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideFollower(tc.s, tc.owner, "ns/owner", tc.m); got != tc.want {
				t.Fatalf("decideFollower(%+v, %+v) = %+v, want %+v", tc.s, tc.owner, got, tc.want)
			}
		})
	}
}

func TestActionKindString(t *testing.T) {
	for k, want := range map[ActionKind]string{None: "None", Wait: "Wait", AssignTo: "Assign", DrainFrom: "Drain", Reassign: "Reassign", 9: "ActionKind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(k), got, want)
		}
	}
}
