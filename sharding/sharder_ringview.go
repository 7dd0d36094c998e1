package sharding

import (
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"

	"github.com/kcache/cache"
)

// ringView is the concurrent shell around a Ring: a lease informer's handler feeds it, and
// changed receives a signal whenever the live members or the gone members change. Leases also
// expire without an event: a timer sends on wake when the next one can, and the owner of the
// view calls tick then (the timer function does nothing else, so no clock or lock is used
// from inside a clock's timer).
type ringView struct {
	clock clock.WithDelayedExecution
	// changed and wake have capacity 1: a pending signal absorbs later ones.
	changed chan struct{}
	wake    chan struct{}

	// mu guards ring, fingerprint and timer.
	mu          sync.Mutex
	ring        *Ring
	fingerprint string
	timer       clock.Timer
	next        time.Time
	stopped     bool
}

// newRingView returns a view started now; names never seen are gone after grace.
func newRingView(c clock.WithDelayedExecution, grace time.Duration) *ringView {
	return &ringView{clock: c, ring: NewRing(c.Now(), grace), changed: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
}

// recordOf reads the ring's view of a Lease.
func recordOf(l *coordinationv1.Lease) LeaseRecord {
	r := LeaseRecord{Name: l.Name, Version: l.ResourceVersion}
	if l.Spec.HolderIdentity != nil {
		r.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseDurationSeconds != nil {
		r.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return r
}

// handler returns the lease informer's event handler.
func (v *ringView) handler() cache.TypedResourceEventHandler[*coordinationv1.Lease] {
	return cache.TypedResourceEventHandlerFuncs[*coordinationv1.Lease]{
		AddFunc:    v.observe,
		UpdateFunc: func(_, l *coordinationv1.Lease) { v.observe(l) },
		DeleteFunc: func(d cache.DeletedObject[*coordinationv1.Lease]) { v.deleted(d.GetObjectName().Name) },
	}
}

// observe records a lease as seen now.
func (v *ringView) observe(l *coordinationv1.Lease) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ring.Observe(recordOf(l), v.clock.Now())
	v.updateLocked()
}

// deleted records a lease deletion as seen now.
func (v *ringView) deleted(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ring.Delete(name, v.clock.Now())
	v.updateLocked()
}

// confirm records that the server confirmed member gone.
func (v *ringView) confirm(member string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ring.Confirm(member, v.clock.Now())
	v.updateLocked()
}

// record returns the last observed lease of member.
func (v *ringView) record(member string) (LeaseRecord, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ring.Record(member)
}

// snapshot freezes the view now.
func (v *ringView) snapshot() *Snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ring.Snapshot(v.clock.Now())
}

// prune forgets members gone for at least keep.
func (v *ringView) prune(keep time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ring.Prune(v.clock.Now(), keep)
}

// stop stops the expiry timer; the view sends no more signals after it returns.
func (v *ringView) stop() {
	v.mu.Lock()
	v.stopped = true
	timer := v.timer
	v.timer = nil
	v.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
}

// signalWake is the timer's function.
func (v *ringView) signalWake() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// tick re-evaluates the view; call it when wake receives.
func (v *ringView) tick() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.updateLocked()
}

// updateLocked signals changed if the live or gone members differ from the last signal, and
// schedules the next evaluation.
func (v *ringView) updateLocked() {
	if v.stopped {
		return
	}
	now := v.clock.Now()
	snap := v.ring.Snapshot(now)
	fp := fingerprint(snap)
	if fp != v.fingerprint {
		v.fingerprint = fp
		select {
		case v.changed <- struct{}{}:
		default:
		}
	}
	if next, ok := v.ring.NextChange(now); ok && !next.Equal(v.next) {
		// Timers are rescheduled only when the next change moves (renewals do not move it
		// much, but each is a timer less); a stale timer's wake costs one re-evaluation.
		if v.timer != nil {
			v.timer.Stop()
		}
		v.next = next
		v.timer = v.clock.AfterFunc(next.Sub(now), v.signalWake)
	}
}

// fingerprint identifies the live and gone members of a snapshot.
func fingerprint(s *Snapshot) string {
	var gone []string
	for name, g := range s.gone {
		if g {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	out := "live:"
	for _, m := range s.members {
		out += m + ","
	}
	out += " gone:"
	for _, g := range gone {
		out += g + ","
	}
	if s.unseenGone {
		out += " unseen-gone"
	}
	return out
}
