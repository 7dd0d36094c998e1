package sharding

import "fmt"

// The hand-over state machine. An object of a sharded resource is in one of four states,
// written in its labels:
//
//	unassigned    no shard label (new, or its owner acknowledged a drain)
//	assigned      shard=M: member M owns it; only M reconciles it
//	draining      shard=M, drain=true: M is asked to hand it over and still owns it
//	(acknowledged is unassigned again: M finished its in-flight reconcile, forgot the key,
//	 and removed both labels in one conditional patch)
//
// The sharder moves objects forward with Decide; the owner acknowledges (see Gate). The only
// transition that skips the owner is the reassignment of an object whose owner is gone — its
// lease was released, or expired by the sharder's clock, which is after the owner fenced itself
// by its own clock (see Ring and SHARDING.md) — so at no time may two members reconcile an
// object.

// ActionKind is what the sharder does to one object.
type ActionKind int

const (
	// None: the object is where it belongs, or nothing can be done now (no live member, or its
	// owner is neither live nor known to be gone).
	None ActionKind = iota
	// Wait: the object is draining; its owner has not acknowledged yet.
	Wait
	// AssignTo: set the shard label of an unassigned object to To.
	AssignTo
	// DrainFrom: ask the live owner From to hand the object over (set the drain label), because
	// it belongs to To now.
	DrainFrom
	// Reassign: the owner From is gone; set the shard label to To and clear the drain label
	// without asking anyone.
	Reassign
)

// String returns the action's name.
func (k ActionKind) String() string {
	switch k {
	case None:
		return "None"
	case Wait:
		return "Wait"
	case AssignTo:
		return "Assign"
	case DrainFrom:
		return "Drain"
	case Reassign:
		return "Reassign"
	}
	return fmt.Sprintf("ActionKind(%d)", int(k))
}

// Action is the sharder's next step for one object. From is the owner the step is conditioned
// on ("" for an unassigned object); the patch that carries it out fails if the object's labels
// have changed since they were read, so a stale decision never applies.
type Action struct {
	Kind     ActionKind
	From, To string
}

// State is an object's shard state as its labels say.
type State struct {
	// Shard is the value of the shard label, "" if unassigned.
	Shard string
	// Draining is whether the drain label is set.
	Draining bool
}

// Membership is what Decide needs to know about members at one instant.
type Membership interface {
	// Owner returns the live member that key belongs to, and false if no member is live.
	Owner(key string) (string, bool)
	// Live reports whether member holds an unexpired lease.
	Live(member string) bool
	// Gone reports whether member can no longer reconcile anything: it released its lease, or
	// the lease expired, or it has not been seen for a lease duration.
	Gone(member string) bool
}

// Decide returns the next step for an object of a reconciled resource with shard key key and
// state s. It has no side effects and reads no clock.
//
//	unassigned                   → AssignTo(owner)            (None if no live member)
//	owner gone                   → Reassign(owner)            (None if no live member)
//	draining, owner not gone     → Wait
//	owner live, is key's owner   → None
//	owner live, key belongs else → DrainFrom(owner) to the new owner
//	owner neither live nor gone  → None (decided again when it expires or renews)
//
// A draining object whose owner becomes the key's owner again still completes the hand-over:
// the owner may be acknowledging at this moment, and taking the mark back would race with it.
func Decide(key string, s State, m Membership) Action {
	target, ok := m.Owner(key)
	switch {
	case s.Shard == "":
		if !ok {
			return Action{Kind: None}
		}
		return Action{Kind: AssignTo, To: target}
	case m.Gone(s.Shard):
		if !ok {
			return Action{Kind: None, From: s.Shard}
		}
		return Action{Kind: Reassign, From: s.Shard, To: target}
	case s.Draining:
		return Action{Kind: Wait, From: s.Shard}
	case !m.Live(s.Shard), !ok, s.Shard == target:
		return Action{Kind: None, From: s.Shard}
	default:
		return Action{Kind: DrainFrom, From: s.Shard, To: target}
	}
}

// DecideControlled returns the next step for an object that follows its controlling owner
// (a controlled resource: cached by the owner's member, never reconciled as a key of its own).
// ownerShard is the member that should cache it — the owner's current shard when the owner is
// assigned and not draining, else the owner key's owner among live members — and ok is false
// when there is none yet. Controlled objects move in one step (AssignTo or Reassign), as no
// reconcile runs on them; the sharder moves them after their owner so the new member's cache
// has them by the time it reconciles the owner.
func DecideControlled(s State, ownerShard string, ok bool) Action {
	switch {
	case !ok || s.Shard == ownerShard && !s.Draining:
		return Action{Kind: None, From: s.Shard}
	case s.Shard == "":
		return Action{Kind: AssignTo, To: ownerShard}
	default:
		return Action{Kind: Reassign, From: s.Shard, To: ownerShard}
	}
}

// decideFollower returns the next step for a controlled object in state s whose owner's shard
// key is ownerKey. owner is the owner's state if the caller knows it (a pass, which has just
// read every owner), nil if not (the sharder labelling a new object as it appears). A known
// owner is followed once it is settled — assigned, not draining, its member live — and waited
// for while it moves; an unknown one is assumed to be where its key belongs.
func decideFollower(s State, owner *State, ownerKey string, m Membership) Action {
	if owner == nil {
		target, ok := m.Owner(ownerKey)
		return DecideControlled(s, target, ok)
	}
	if owner.Shard == "" || owner.Draining || !m.Live(owner.Shard) {
		return Action{Kind: Wait, From: s.Shard}
	}
	return DecideControlled(s, owner.Shard, true)
}
