package sharding

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// The two model tests (core_model_test.go for label mode, core_epochs_model_test.go for the
// zero-write mode) simulate one cluster: a server holding the members' Leases, member processes
// that renew, fence themselves, get partitioned, crash, leave and join, and a sharder whose view
// of the Leases lags. simCluster is that shared part; each test adds what its protocol keeps on
// the server and in its members, and its own mix of random steps.

const (
	simLease  = 10 * time.Second
	simMargin = 2 * time.Second
)

// simLeaseObj is a member's Lease on the server. ack is the epoch the member acknowledged (the
// zero-write mode only).
type simLeaseObj struct {
	holder string
	renew  int
	ack    uint64
}

// simProc is a simulated member process: its Lease renewals, its fence and the reconciles it
// has in flight. The model tests' members embed it.
type simProc struct {
	name        string
	alive       bool // the process runs
	partitioned bool // it cannot reach the server
	lastRenew   time.Time
	fence       *fence
	// inflight holds, per key, the done functions of the reconciles in flight.
	inflight map[string][]func()
}

func (p *simProc) proc() *simProc { return p }

// stopReconciles ends the process's reconciles: a crashed process's simply stop; a fenced
// member's are cancelled, and the model assumes they return within the skew margin.
func (p *simProc) stopReconciles() {
	for k, dones := range p.inflight {
		for _, d := range dones {
			d()
		}
		delete(p.inflight, k)
	}
}

// simMemberOf is a model test's member type: a simProc and what its protocol adds.
type simMemberOf interface{ proc() *simProc }

// simCluster is the part of a simulated cluster both model tests share.
type simCluster[M simMemberOf] struct {
	t       *testing.T
	rng     *rand.Rand
	now     time.Time
	keys    []string
	leases  map[string]*simLeaseObj
	members []M
	ring    *Ring
	joined  int
	// trace holds the last traceLen steps, printed when a check fails.
	trace    []string
	traceLen int
}

func newSimCluster[M simMemberOf](t *testing.T, rng *rand.Rand, nKeys, traceLen int) simCluster[M] {
	s := simCluster[M]{t: t, rng: rng, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		leases: map[string]*simLeaseObj{}, traceLen: traceLen}
	s.ring = NewRing(s.now, simLease)
	for i := range nKeys {
		s.keys = append(s.keys, fmt.Sprintf("ns/o%d", i))
	}
	return s
}

func (s *simCluster[M]) logf(format string, args ...any) {
	s.trace = append(s.trace, s.now.Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	if len(s.trace) > s.traceLen {
		s.trace = s.trace[1:]
	}
}

func (s *simCluster[M]) pick(n int) int { return s.rng.IntN(n) }

func (s *simCluster[M]) randomMember() M { return s.members[s.pick(len(s.members))] }

// newProc starts the process of the next member to join, holding a Lease of its own. The
// caller wraps it in its member type and appends that to s.members.
func (s *simCluster[M]) newProc() simProc {
	name := "m" + strconv.Itoa(s.joined)
	s.joined++
	p := simProc{name: name, alive: true, lastRenew: s.now, fence: newFence(), inflight: map[string][]func(){}}
	p.fence.open()
	s.leases[name] = &simLeaseObj{holder: name, renew: 1}
	return p
}

// record is member's Lease as the sharder reads it, if there is one.
func (s *simCluster[M]) record(member string) (LeaseRecord, bool) {
	l := s.leases[member]
	if l == nil {
		return LeaseRecord{}, false
	}
	return LeaseRecord{Name: member, Holder: l.holder, Version: strconv.Itoa(l.renew), Duration: simLease}, true
}

// observeAll lets the sharder see every Lease.
func (s *simCluster[M]) observeAll() {
	for name := range s.leases {
		rec, _ := s.record(name)
		s.ring.Observe(rec, s.now)
	}
}

// renew renews m's Lease if m can: it runs, reaches the server and is not fenced. A member
// never recreates a Lease it held: once the sharder deleted it, it cannot renew.
func (s *simCluster[M]) renew(m M) {
	p := m.proc()
	if l := s.leases[p.name]; l != nil && p.alive && !p.partitioned && !p.fence.isClosed() {
		l.renew++
		p.lastRenew = s.now
		s.logf("%s: renewed", p.name)
	}
}

// fenceIfDue closes the fence of every member whose lease could expire within the margin.
func (s *simCluster[M]) fenceIfDue() {
	for _, m := range s.members {
		p := m.proc()
		if !p.fence.isClosed() && !s.now.Before(p.lastRenew.Add(simLease-simMargin)) {
			s.logf("%s: fenced", p.name)
			p.fence.close()
			p.stopReconciles()
		}
	}
}

// began records a reconcile of k that m's gate was asked to begin: in flight if err is nil.
func (s *simCluster[M]) began(m M, k string, done func(), err error) {
	p := m.proc()
	s.logf("%s: begin %s: %v", p.name, k, err)
	if err == nil {
		p.inflight[k] = append(p.inflight[k], done)
	}
}

// endReconcile ends one of m's reconciles in flight, if it has any.
func (s *simCluster[M]) endReconcile(m M) {
	p := m.proc()
	for k, dones := range p.inflight {
		s.logf("%s: end %s", p.name, k)
		dones[0]()
		if p.inflight[k] = dones[1:]; len(p.inflight[k]) == 0 {
			delete(p.inflight, k)
		}
		break
	}
}

// partition cuts m off from the server; it keeps running.
func (s *simCluster[M]) partition(m M) {
	p := m.proc()
	p.partitioned = true
	s.logf("%s: partitioned", p.name)
}

// crash stops m's process.
func (s *simCluster[M]) crash(m M) {
	p := m.proc()
	p.alive = false
	s.logf("%s: crashed", p.name)
	p.stopReconciles()
}

// leave makes m leave cleanly, if it runs and reaches the server: it closes its fence, waits
// for its reconciles (its workers see their contexts cancelled and return) and releases its
// Lease.
func (s *simCluster[M]) leave(m M) {
	p := m.proc()
	if !p.alive || p.partitioned {
		return
	}
	drained := p.fence.close()
	p.stopReconciles()
	<-drained
	if l := s.leases[p.name]; l != nil {
		l.holder = ""
		l.renew++
	}
	p.alive = false
	s.logf("%s: left", p.name)
}

// confirmGone is the sharder's confirmation on the server that member is gone: the lease is
// absent, released, or still at the version the view saw expire (then it is deleted).
func (s *simCluster[M]) confirmGone(member string) bool {
	if !s.ring.Gone(member, s.now) {
		return false
	}
	l := s.leases[member]
	rec, seen := s.ring.Record(member)
	switch {
	case l == nil:
	case l.holder == "" || seen && rec.Version == strconv.Itoa(l.renew) && rec.Holder == l.holder:
		delete(s.leases, member)
		s.logf("sharder: deleted the lease of %s", member)
	default:
		cur, _ := s.record(member)
		s.ring.Observe(cur, s.now)
		return false
	}
	s.ring.Confirm(member, s.now)
	return true
}

// doubleReconcile returns a key that two or more members reconcile at once, and who.
func (s *simCluster[M]) doubleReconcile() (key string, who []string) {
	for _, k := range s.keys {
		who = nil
		for _, m := range s.members {
			if p := m.proc(); len(p.inflight[k]) > 0 {
				who = append(who, p.name)
			}
		}
		if len(who) > 1 {
			return k, who
		}
	}
	return "", nil
}

// live returns the names of the members that run and are not fenced.
func (s *simCluster[M]) live() []string {
	var out []string
	for _, m := range s.members {
		if p := m.proc(); p.alive && !p.fence.isClosed() {
			out = append(out, p.name)
		}
	}
	return out
}

// endFaults begins healing: partitioned members are taken for dead, every reconcile stops,
// and if no member is left, join adds one.
func (s *simCluster[M]) endFaults(join func()) {
	for _, m := range s.members {
		p := m.proc()
		if p.partitioned {
			p.alive = false
		}
		p.stopReconciles()
	}
	if len(s.live()) == 0 {
		join()
	}
}

// settle is the rest of healing, after endFaults: the sharder sees every lease, then a lease
// duration passes (every lost member is gone); then ten rounds a second apart, in each of which
// the members that run and are not fenced renew their Leases, fences close where due, the
// sharder sees every lease again and round takes the protocol's own steps.
func (s *simCluster[M]) settle(round func()) {
	s.observeAll()
	s.now = s.now.Add(simLease)
	for range 10 {
		for _, m := range s.members {
			p := m.proc()
			if l := s.leases[p.name]; l != nil && p.alive && !p.fence.isClosed() {
				l.renew++
				p.lastRenew = s.now
			}
		}
		s.fenceIfDue()
		s.observeAll()
		round()
		s.now = s.now.Add(time.Second)
	}
}

// simModel is one model test's simulation.
type simModel interface {
	step()
	heal()
	stop()
}

// stop closes every member's fence and cancels what it guards, so that nothing outlives the
// test.
func (s *simCluster[M]) stop() {
	for _, m := range s.members {
		p := m.proc()
		p.fence.close()
		p.fence.cancel()
	}
}

// runSim runs steps random steps of s, then heals the cluster (checking where it settles) and
// stops it.
func runSim(s simModel, steps int) {
	for range steps {
		s.step()
	}
	s.heal()
	s.stop()
}

// testModel runs newSim's simulation for 2000 steps at every size and seed in [0, seeds), as
// subtests named "<size> <unit>/seed <seed>".
func testModel(t *testing.T, unit string, sizes []int, seeds uint64, newSim func(t *testing.T, seed uint64, size int) simModel) {
	for _, size := range sizes {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%d %s/seed %d", size, unit, seed), func(t *testing.T) { runSim(newSim(t, seed, size), 2000) })
		}
	}
}

// fuzzModel fuzzes newSim's simulation over seeds, step counts and sizes from 1 to maxSize.
func fuzzModel(f *testing.F, maxSize int, newSim func(t *testing.T, seed uint64, size int) simModel) {
	f.Add(uint64(1), uint16(500), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, size uint8) {
		runSim(newSim(t, seed, 1+int(size)%maxSize), int(steps))
	})
}
