package sharding

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The model test of the zero-write protocol runs the real NextEpoch, Ring and rangeMember in a
// simulated cluster: a server holding the sharder's published epoch and the members' Leases
// with their acknowledgements; members whose views of those Leases lag independently; a
// sharder with a lagging view whose publications land late (and only if the epoch they were
// computed from is still current, as the conditional update of its Lease ensures). Seeded
// random steps pass time, renew, partition, crash, leave, join, fail the sharder over and
// start and end reconciles. After every step it checks that no key is reconciled by two
// members at once; at the end it heals the cluster and checks that the published epoch holds
// exactly the live members and every member reconciles every segment it owns.
//
// Removing the drain before an acknowledgement (ackDue's busy check), the confirmation before
// a member leaves the epoch (NextEpoch) or the stop of lost segments on adoption each makes it
// fail. Counting an acknowledgement of a later epoch for an earlier one does not: with
// rendezvous assignment, a segment can return to a member that skipped an epoch only after its
// owner in that epoch was confirmed gone. The exact match keeps the argument independent of how
// segments are assigned.

type hashLease struct {
	holder string
	renew  int
	ack    uint64
}

type hashMember struct {
	name        string
	alive       bool
	partitioned bool
	lastRenew   time.Time
	fence       *fence
	rm          *rangeMember
	viewEpoch   Epoch
	viewAcks    map[string]uint64
	inflight    map[string][]func()
}

type publishOp struct {
	expect uint64
	next   Epoch
}

type hashSim struct {
	t         *testing.T
	rng       *rand.Rand
	now       time.Time
	keys      []string
	epoch     Epoch // on the sharder's Lease
	leases    map[string]*hashLease
	members   []*hashMember
	ring      *Ring
	confirmed map[string]bool
	ops       []publishOp
	joined    int
	trace     []string
}

func (s *hashSim) logf(format string, args ...any) {
	s.trace = append(s.trace, s.now.Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	if len(s.trace) > 80 {
		s.trace = s.trace[1:]
	}
}

func newHashSim(t *testing.T, seed uint64, nKeys, nMembers int) *hashSim {
	s := &hashSim{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x51ed27)),
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), leases: map[string]*hashLease{}, confirmed: map[string]bool{}}
	s.ring = NewRing(s.now, simLease)
	for i := range nKeys {
		s.keys = append(s.keys, fmt.Sprintf("ns/o%d", i))
	}
	for range nMembers {
		s.join()
	}
	return s
}

func (s *hashSim) join() {
	name := "m" + strconv.Itoa(s.joined)
	s.joined++
	m := &hashMember{name: name, alive: true, lastRenew: s.now, fence: newFence(),
		viewAcks: map[string]uint64{}, inflight: map[string][]func(){}}
	m.fence.open()
	m.rm = newRangeMember(name, m.fence)
	s.leases[name] = &hashLease{holder: name, renew: 1}
	s.members = append(s.members, m)
	s.logf("%s: joined", name)
}

func (s *hashSim) pick(n int) int { return s.rng.IntN(n) }

func (s *hashSim) randomMember() *hashMember { return s.members[s.pick(len(s.members))] }

// runningMember is a random member whose process runs, mostly (crashed ones stay in the list).
func (s *hashSim) runningMember() *hashMember {
	for range 4 {
		if m := s.randomMember(); m.alive {
			return m
		}
	}
	return s.randomMember()
}

func (s *hashSim) record(name string) (LeaseRecord, bool) {
	l := s.leases[name]
	if l == nil {
		return LeaseRecord{}, false
	}
	return LeaseRecord{Name: name, Holder: l.holder, Version: strconv.Itoa(l.renew), Duration: simLease}, true
}

func (s *hashSim) stopReconciles(m *hashMember) {
	for k, dones := range m.inflight {
		for _, d := range dones {
			d()
		}
		delete(m.inflight, k)
	}
}

func (s *hashSim) fenceIfDue() {
	for _, m := range s.members {
		if !m.fence.isClosed() && !s.now.Before(m.lastRenew.Add(simLease-simMargin)) {
			s.logf("%s: fenced", m.name)
			m.fence.close()
			s.stopReconciles(m)
		}
	}
}

// confirmGone is the sharder's confirmation on the server (see sim.confirmGone).
func (s *hashSim) confirmGone(member string) bool {
	if s.confirmed[member] {
		return true
	}
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
	s.confirmed[member] = true
	return true
}

// decide is the sharder computing the next epoch from its view, confirming departing
// members first; the publication lands later.
func (s *hashSim) decide() {
	live := s.ring.Members(s.now)
	for _, m := range departing(s.epoch, live) {
		s.confirmGone(m)
	}
	if next, changed := NextEpoch(s.epoch, live, func(m string) bool { return s.confirmed[m] }); changed {
		s.ops = append(s.ops, publishOp{expect: s.epoch.Number, next: next})
	}
}

func (s *hashSim) land(op publishOp) {
	if s.epoch.Number != op.expect {
		return
	}
	s.epoch = op.next
	s.logf("sharder: published %s", encodeEpoch(op.next))
}

// process is a member's lease watcher handling its view: adopt, activate, acknowledge.
func (s *hashSim) process(m *hashMember) {
	if !m.alive {
		return
	}
	m.rm.observe(m.viewEpoch, func(p string) (uint64, bool) { n, ok := m.viewAcks[p]; return n, ok })
	n, due := m.rm.ackDue()
	l := s.leases[m.name]
	if !due || m.partitioned || l == nil || l.holder != m.name || !m.fence.enter() {
		return
	}
	defer m.fence.exit()
	l.ack = n
	l.renew++
	m.rm.acknowledged(n)
	s.logf("%s: acknowledged %d", m.name, n)
}

func (s *hashSim) deliver(m *hashMember) {
	if s.pick(3) == 0 {
		m.viewEpoch = s.epoch
		s.logf("%s: sees epoch %d", m.name, s.epoch.Number)
		return
	}
	p := s.randomMember().name
	if ms := m.viewEpoch.Members; len(ms) > 0 && s.pick(4) > 0 {
		p = ms[s.pick(len(ms))] // mostly the leases its epoch waits for
	}
	if l := s.leases[p]; l != nil {
		m.viewAcks[p] = l.ack
	} else {
		delete(m.viewAcks, p)
	}
}

func (s *hashSim) step() {
	r := s.pick(1000)
	if r >= 985 && s.pick(3) > 0 {
		// Faults and membership changes a third as often as the steps make them, so that
		// hand-overs complete between them as often as they are cut short.
		r = s.pick(985)
	}
	switch {
	case r < 60:
		s.now = s.now.Add(time.Duration(s.rng.Int64N(int64(simLease / 8))))
	case r < 180:
		m := s.runningMember()
		if l := s.leases[m.name]; l != nil && m.alive && !m.partitioned && !m.fence.isClosed() {
			l.renew++
			m.lastRenew = s.now
		}
	case r < 260:
		m := s.randomMember()
		if rec, ok := s.record(m.name); ok {
			s.ring.Observe(rec, s.now)
		}
	case r < 300:
		s.decide()
	case r < 340:
		if len(s.ops) > 0 {
			i := s.pick(len(s.ops))
			op := s.ops[i]
			s.ops = append(s.ops[:i], s.ops[i+1:]...)
			s.land(op)
		}
	case r < 600:
		s.deliver(s.runningMember())
	case r < 750:
		s.process(s.runningMember())
	case r < 870:
		m := s.runningMember()
		if m.alive {
			k := s.keys[s.pick(len(s.keys))]
			done, err := m.rm.begin(HashKey(k))
			s.logf("%s: begin %s: %v", m.name, k, err)
			if err == nil {
				m.inflight[k] = append(m.inflight[k], done)
			}
		}
	case r < 985:
		m := s.randomMember()
		for k, dones := range m.inflight {
			s.logf("%s: end %s", m.name, k)
			dones[0]()
			if m.inflight[k] = dones[1:]; len(m.inflight[k]) == 0 {
				delete(m.inflight, k)
			}
			break
		}
	case r < 987:
		m := s.randomMember()
		m.partitioned = true
		s.logf("%s: partitioned", m.name)
	case r < 989:
		m := s.randomMember()
		m.alive = false
		s.logf("%s: crashed", m.name)
		s.stopReconciles(m)
	case r < 992:
		m := s.randomMember()
		if m.alive && !m.partitioned {
			drained := m.fence.close()
			s.stopReconciles(m)
			<-drained
			if l := s.leases[m.name]; l != nil {
				l.holder = ""
				l.renew++
			}
			m.alive = false
			s.logf("%s: left", m.name)
		}
	case r < 999:
		s.join()
	default:
		s.ring = NewRing(s.now, simLease)
		s.confirmed = map[string]bool{}
		s.ops = nil
		s.logf("sharder: failed over")
	}
	s.fenceIfDue()
	s.check()
}

func (s *hashSim) check() {
	for _, k := range s.keys {
		var who []string
		for _, m := range s.members {
			if len(m.inflight[k]) > 0 {
				who = append(who, m.name)
			}
		}
		if len(who) > 1 {
			s.t.Fatalf("%s (segment %d) reconciled by %v at once (epoch %s); last steps:\n%s",
				k, segmentOf(HashKey(k)), who, encodeEpoch(s.epoch), strings.Join(s.trace, "\n"))
		}
	}
}

func (s *hashSim) heal() {
	for _, m := range s.members {
		if m.partitioned {
			m.alive = false
		}
		s.stopReconciles(m)
	}
	live := 0
	for _, m := range s.members {
		if m.alive && !m.fence.isClosed() {
			live++
		}
	}
	if live == 0 {
		s.join()
	}
	for name := range s.leases {
		rec, _ := s.record(name)
		s.ring.Observe(rec, s.now)
	}
	s.now = s.now.Add(simLease)
	for range 10 {
		for _, m := range s.members {
			if l := s.leases[m.name]; l != nil && m.alive && !m.fence.isClosed() {
				l.renew++
				m.lastRenew = s.now
			}
		}
		s.fenceIfDue()
		for name := range s.leases {
			rec, _ := s.record(name)
			s.ring.Observe(rec, s.now)
		}
		for _, op := range s.ops {
			s.land(op)
		}
		s.ops = nil
		s.decide()
		for _, op := range s.ops {
			s.land(op)
		}
		s.ops = nil
		for _, m := range s.members {
			m.viewEpoch = s.epoch
			for _, p := range s.members {
				if l := s.leases[p.name]; l != nil {
					m.viewAcks[p.name] = l.ack
				} else {
					delete(m.viewAcks, p.name)
				}
			}
			s.process(m)
		}
		s.now = s.now.Add(time.Second)
	}
	var want []string
	for _, m := range s.members {
		if m.alive && !m.fence.isClosed() {
			want = append(want, m.name)
		}
	}
	if got := strings.Join(s.epoch.Members, ","); got != strings.Join(want, ",") && !sameSet(s.epoch.Members, want) {
		s.t.Fatalf("after healing, epoch %s, want members %v", encodeEpoch(s.epoch), want)
	}
	total := 0
	for _, m := range s.members {
		if !m.alive || m.fence.isClosed() {
			continue
		}
		epoch, owned, active, acked := m.rm.status()
		if epoch != s.epoch.Number || owned != active || acked != epoch {
			s.t.Fatalf("after healing, %s: epoch %d of %d, %d segments owned, %d active, acknowledged %d",
				m.name, epoch, s.epoch.Number, owned, active, acked)
		}
		total += active
	}
	if total != hashSegments {
		s.t.Fatalf("after healing, %d of %d segments active", total, hashSegments)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}

func runHashModel(t *testing.T, seed uint64, steps, keys int) {
	s := newHashSim(t, seed, keys, 3)
	for range steps {
		s.step()
	}
	s.heal()
	for _, m := range s.members {
		m.fence.close()
		m.fence.cancel()
	}
}

func TestEpochModel(t *testing.T) {
	// Few keys make a hand-over racing a reconcile of the same key frequent; more keys cover
	// more segments.
	for _, keys := range []int{3, 64} {
		for seed := range uint64(200) {
			t.Run(fmt.Sprintf("%d keys/seed %d", keys, seed), func(t *testing.T) { runHashModel(t, seed, 2000, keys) })
		}
	}
}

func FuzzEpochModel(f *testing.F) {
	f.Add(uint64(1), uint16(500), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, keys uint8) {
		runHashModel(t, seed, int(steps), 1+int(keys%32))
	})
}
