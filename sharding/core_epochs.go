package sharding

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// The zero-write hand-over of hash ranges. Nothing is written to a sharded object; the
// members' Leases carry the whole protocol:
//
//   - the sharder publishes the ring's membership as an Epoch on its own Lease (one write per
//     membership change): a number that only grows and the sorted member names. Every member
//     computes the same segment owners from the names (segmentOwners);
//   - a member adopts the highest epoch it has seen, stops reconciling the segments it does
//     not own in it, waits until its reconciles of those segments have returned, and then
//     writes the epoch number on its own Lease: its acknowledgement;
//   - a member starts reconciling a segment it owns in epoch E only once every other member
//     of E has acknowledged exactly E, as its Lease shows. A segment it already reconciled and
//     still owns stays active across epochs.
//
// The sharder removes a member from the published membership only once the server confirmed
// it gone (its Lease was released, or deleted by the sharder on the condition that it had not
// been renewed, as in the label protocol), so every member that may still reconcile a segment
// is in the current epoch and must acknowledge it first. An acknowledgement of a later epoch
// does not count for an earlier one: a member that skipped from E−1 to E+1 may have kept a
// segment that E gave to someone else.

// Epoch is one published membership of a ring: Number grows by one with every change, and
// Members are the member names, sorted and unique. The zero Epoch is "nothing published".
type Epoch struct {
	Number  uint64
	Members []string
}

// Lease annotations of the zero-write protocol.
const (
	// EpochAnnotation is on the sharder's Lease: the ring's current Epoch, as the number, a
	// colon and the comma-separated member names ("7:a-x1b2c,b-9zz0q").
	EpochAnnotation = "sharding.kcache.dev/epoch"
	// AcknowledgedAnnotation is on each member's Lease: the number of the highest epoch the
	// member has acknowledged (stopped and drained every segment it does not own in it).
	AcknowledgedAnnotation = "sharding.kcache.dev/acknowledged"
)

// encodeEpoch returns e as the value of EpochAnnotation.
func encodeEpoch(e Epoch) string {
	return strconv.FormatUint(e.Number, 10) + ":" + strings.Join(e.Members, ",")
}

// parseEpoch reads a value of EpochAnnotation. A value that is not number:names (or names a
// member twice, or an empty name) is not an epoch: ok is false, and callers treat the Lease as
// publishing nothing.
func parseEpoch(s string) (Epoch, bool) {
	num, names, found := strings.Cut(s, ":")
	if !found {
		return Epoch{}, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 {
		return Epoch{}, false
	}
	e := Epoch{Number: n}
	if names != "" {
		e.Members = strings.Split(names, ",")
	}
	slices.Sort(e.Members)
	for i, m := range e.Members {
		if m == "" || i > 0 && e.Members[i-1] == m {
			return Epoch{}, false
		}
	}
	return e, true
}

// parseAcknowledged reads a value of AcknowledgedAnnotation; anything but a decimal number
// reads as no acknowledgement (0).
func parseAcknowledged(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// NextEpoch returns the epoch the sharder publishes after cur, given the members it sees live
// and whether a member of cur is confirmed gone: the live members plus every member of cur
// not confirmed gone (a member that only looks expired keeps its segments until the server
// confirms it gone). It returns cur and false when the membership did not change.
func NextEpoch(cur Epoch, live []string, confirmedGone func(member string) bool) (Epoch, bool) {
	members := slices.Clone(live)
	for _, m := range cur.Members {
		if !confirmedGone(m) {
			members = append(members, m)
		}
	}
	slices.Sort(members)
	members = slices.Compact(members)
	if slices.Equal(members, cur.Members) && (cur.Number > 0 || len(members) == 0) {
		return cur, false
	}
	return Epoch{Number: cur.Number + 1, Members: members}, true
}

// departing returns the members of cur that are not live: those the sharder must confirm
// gone before it can publish an epoch without them.
func departing(cur Epoch, live []string) []string {
	var out []string
	for _, m := range cur.Members {
		if !slices.Contains(live, m) {
			out = append(out, m)
		}
	}
	return out
}

// segmentOf returns the segment of the hash space that h lies in.
func segmentOf(h uint64) int { return int(h / segmentWidth) }

// segmentOwners returns the owner of every segment among members ("" for all if there are
// none): the rendezvous winner of the segment's name, as HashRanges computes.
func segmentOwners(members []string) [hashSegments]string {
	var owners [hashSegments]string
	for i := range owners {
		owners[i], _ = Assign("segment/"+strconv.Itoa(i), members)
	}
	return owners
}

// segments is a set of segments of the hash space.
type segments [hashSegments / 64]uint64

func (s *segments) add(i int)     { s[i/64] |= 1 << (i % 64) }
func (s segments) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s segments) and(o segments) (r segments) {
	for i := range s {
		r[i] = s[i] & o[i]
	}
	return r
}
func (s segments) without(o segments) (r segments) {
	for i := range s {
		r[i] = s[i] &^ o[i]
	}
	return r
}
func (s segments) empty() bool { return s == segments{} }
func (s segments) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// ranges returns s as sorted, merged hash ranges.
func (s segments) ranges() []HashRange {
	var out []HashRange
	for i := range hashSegments {
		if !s.has(i) {
			continue
		}
		r := HashRange{Start: uint64(i) * segmentWidth, End: uint64(i+1) * segmentWidth} // the last End wraps to 0
		if n := len(out); n > 0 && out[n-1].End == r.Start {
			out[n-1].End = r.End
			continue
		}
		out = append(out, r)
	}
	return out
}

// ownedSegments returns the segments member owns among members.
func ownedSegments(members []string, member string) segments {
	var s segments
	if !slices.Contains(members, member) {
		return s
	}
	for i, o := range segmentOwners(members) {
		if o == member {
			s.add(i)
		}
	}
	return s
}

// rangeState is one member's state in the zero-write protocol, without clock, lock or I/O:
// the highest epoch it adopted, the segments it owns in it, the segments it may reconcile
// (active, always a subset of owned) and the highest epoch it acknowledged.
type rangeState struct {
	member string
	epoch  Epoch
	owned  segments
	active segments
	acked  uint64
}

// advance adopts e if it is newer than the adopted epoch: the segments the member does not
// own in e stop being active at once. It reports whether e was adopted.
func (r *rangeState) advance(e Epoch) bool {
	if e.Number <= r.epoch.Number {
		return false
	}
	r.epoch = e
	r.owned = ownedSegments(e.Members, r.member)
	r.active = r.active.and(r.owned)
	return true
}

// activate makes every owned segment active if every other member of the adopted epoch has
// acknowledged exactly that epoch (acked returns a member's acknowledgement as its Lease
// shows it, false if the Lease is not seen). It reports whether the active segments changed.
func (r *rangeState) activate(acked func(member string) (uint64, bool)) bool {
	if r.active == r.owned {
		return false
	}
	for _, m := range r.epoch.Members {
		if m == r.member {
			continue
		}
		if n, ok := acked(m); !ok || n != r.epoch.Number {
			return false
		}
	}
	r.active = r.owned
	return true
}

// ackDue returns the epoch the member should acknowledge now, given the segments that have
// reconciles in flight: the adopted epoch, once it is newer than the last acknowledgement and
// no reconcile runs in a segment the member does not own in it.
func (r *rangeState) ackDue(busy segments) (uint64, bool) {
	if r.epoch.Number <= r.acked || !busy.without(r.owned).empty() {
		return 0, false
	}
	return r.epoch.Number, true
}

// acknowledged records that the acknowledgement of epoch n was written.
func (r *rangeState) acknowledged(n uint64) { r.acked = max(r.acked, n) }
