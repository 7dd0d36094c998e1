package sharding

import (
	"slices"
	"time"
)

// LeaseRecord is what the ring reads from a member Lease.
type LeaseRecord struct {
	// Name is the Lease's name, which is the member's name.
	Name string
	// Holder is spec.holderIdentity. The lease makes Name a member only while Holder == Name;
	// "" means the member released it on a clean shutdown.
	Holder string
	// Version is the Lease's resourceVersion; it changes with every renewal. Only its changes
	// matter: the ring never reads a time the holder wrote. The sharder conditions the deletion
	// that confirms a member gone on it.
	Version string
	// Duration is spec.leaseDurationSeconds.
	Duration time.Duration
}

// Ring is one observer's view of a ring's members, built from the Leases it sees, with time
// passed in by the caller. It has no clock, lock or goroutine of its own; RingView wraps it.
//
// Expiry is measured on the observer's clock from the moment it observed the last renewal
// (as client-go's leader election does), never from the renewTime the holder wrote, so clock
// offsets between machines do not matter; only their rates do (SHARDING.md). A member is:
//
//   - live while its lease is held by itself and now < observed + duration;
//   - gone once it released the lease (holder ""), or now ≥ observed + duration, or the
//     lease is held by someone else and that long has passed, or the name was never seen and
//     the view has been watching for Grace;
//   - otherwise neither (a deleted lease counts as not renewed since the deletion was seen).
//
// A view can lag behind the server (a stalled watch), so a member that looks gone may have
// renewed since. Before acting on Gone — reassigning a member's objects without its
// acknowledgement — the sharder confirms it on the server: it deletes the lease on the
// condition that its resourceVersion is still the observed Version (a released lease or one
// already deleted needs no condition), then records the confirmation with Confirm. A member
// never recreates a lease it held once (see Member), so a confirmed member stays gone.
//
// The zero value is not usable; build one with NewRing.
type Ring struct {
	start   time.Time
	grace   time.Duration
	members map[string]*observation
}

// observation is the last renewal of one lease the ring saw.
type observation struct {
	record   LeaseRecord
	observed time.Time
	deleted  bool
	// confirmed is set by Confirm: the server agreed that the member is gone.
	confirmed bool
}

// NewRing returns an empty view that starts watching at start. Grace is how long a member name
// that never appeared must be unseen before it counts as gone; it must be at least the lease
// duration members use (a live member renews well within it).
func NewRing(start time.Time, grace time.Duration) *Ring {
	return &Ring{start: start, grace: grace, members: map[string]*observation{}}
}

// Observe records lease as seen at now. A lease whose holder or renewal did not change since
// the last observation keeps its first observation time, so a relist or resync never extends
// a lease.
func (r *Ring) Observe(lease LeaseRecord, now time.Time) {
	o, ok := r.members[lease.Name]
	if ok && !o.deleted && o.record == lease {
		return
	}
	if ok && o.confirmed {
		// A lease of a confirmed-gone member was recreated (a new process reusing the name,
		// which Member never does): it is a member again, with its own lease.
		o.confirmed = false
	}
	r.members[lease.Name] = &observation{record: lease, observed: now}
}

// Record returns the last observed lease of member, and whether the view holds one that has
// not been deleted.
func (r *Ring) Record(member string) (LeaseRecord, bool) {
	o, ok := r.members[member]
	if !ok || o.deleted {
		return LeaseRecord{}, false
	}
	return o.record, true
}

// Confirm records that the server confirmed member gone (see Ring): it stays gone until a new
// lease of that name is observed.
func (r *Ring) Confirm(member string, now time.Time) {
	o, ok := r.members[member]
	if !ok {
		o = &observation{record: LeaseRecord{Name: member}, observed: now, deleted: true}
		r.members[member] = o
	}
	o.confirmed = true
}

// Delete records that the lease named name was deleted, as seen at now: the member is treated
// as not having renewed since now, so it is gone one lease duration later unless it recreates
// its lease. Deleting an unknown name does nothing.
func (r *Ring) Delete(name string, now time.Time) {
	o, ok := r.members[name]
	if !ok || o.deleted {
		return
	}
	o.deleted = true
	o.observed = now
}

// expiry returns when o stops counting as live.
func (o *observation) expiry() time.Time { return o.observed.Add(o.record.Duration) }

// Live reports whether member holds an unexpired lease at now.
func (r *Ring) Live(member string, now time.Time) bool {
	o, ok := r.members[member]
	return ok && !o.deleted && o.record.Holder == member && now.Before(o.expiry())
}

// Gone reports whether member can no longer reconcile anything at now (see Ring).
func (r *Ring) Gone(member string, now time.Time) bool {
	o, ok := r.members[member]
	if !ok {
		return !now.Before(r.start.Add(r.grace))
	}
	if o.confirmed || !o.deleted && o.record.Holder == "" {
		return true
	}
	return !now.Before(o.expiry())
}

// Members returns the live members at now, sorted.
func (r *Ring) Members(now time.Time) []string {
	var live []string
	for name := range r.members {
		if r.Live(name, now) {
			live = append(live, name)
		}
	}
	slices.Sort(live)
	return live
}

// NextChange returns the first instant after now at which Members or Gone can change without
// a new observation (a lease expiring, the grace for unseen names ending), and false if none
// can.
func (r *Ring) NextChange(now time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	consider := func(t time.Time) {
		if t.After(now) && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	consider(r.start.Add(r.grace))
	for _, o := range r.members {
		consider(o.expiry())
	}
	return next, found
}

// Prune forgets members that have been gone for at least keep (so the map does not grow with
// every member that ever lived) and returns their names. A forgotten name counts as never
// seen, which is gone once the grace has passed; so keep ≥ 0 is safe after the grace.
func (r *Ring) Prune(now time.Time, keep time.Duration) []string {
	var pruned []string
	for name, o := range r.members {
		if r.Gone(name, now) && !now.Before(o.expiry().Add(keep)) && !now.Before(r.start.Add(r.grace)) {
			delete(r.members, name)
			pruned = append(pruned, name)
		}
	}
	slices.Sort(pruned)
	return pruned
}

// Snapshot freezes the view at now for Decide: Owner assigns over the live members at now.
func (r *Ring) Snapshot(now time.Time) *Snapshot {
	s := &Snapshot{members: r.Members(now), gone: map[string]bool{}}
	for name := range r.members {
		s.gone[name] = r.Gone(name, now) // names known but not gone are recorded as false
	}
	s.unseenGone = !now.Before(r.start.Add(r.grace))
	return s
}

// Snapshot is a Ring at one instant; it implements Membership and is safe for concurrent
// reads.
type Snapshot struct {
	members    []string
	gone       map[string]bool
	unseenGone bool
}

// NewSnapshot returns a snapshot whose live members are members, whose gone members are gone,
// and in which names in neither list count as gone if unseenGone. Tests and tools use it;
// sharders take snapshots of their Ring.
func NewSnapshot(members, gone []string, unseenGone bool) *Snapshot {
	s := &Snapshot{members: slices.Sorted(slices.Values(members)), gone: map[string]bool{}, unseenGone: unseenGone}
	for _, m := range members {
		s.gone[m] = false
	}
	for _, g := range gone {
		s.gone[g] = true
	}
	return s
}

// Members returns the live members, sorted. The caller must not change the slice.
func (s *Snapshot) Members() []string { return s.members }

// Owner returns the live member that key belongs to.
func (s *Snapshot) Owner(key string) (string, bool) { return Assign(key, s.members) }

// Live reports whether member was live.
func (s *Snapshot) Live(member string) bool {
	_, ok := slices.BinarySearch(s.members, member)
	return ok
}

// Gone reports whether member was gone.
func (s *Snapshot) Gone(member string) bool {
	if s.gone[member] {
		return true
	}
	return s.unseenGone && !s.Live(member) && !s.known(member)
}

// known reports whether the snapshot's ring had seen member's lease.
func (s *Snapshot) known(member string) bool {
	_, ok := s.gone[member]
	return ok
}
