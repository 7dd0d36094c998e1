package sharding

import (
	"math/rand/v2"
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

// hashMember is a member process with its rangeMember and its lagging view of the sharder's
// epoch and the members' acknowledgements.
type hashMember struct {
	simProc
	rm        *rangeMember
	viewEpoch Epoch
	viewAcks  map[string]uint64
}

type publishOp struct {
	expect uint64
	next   Epoch
}

// hashSim is the simulated cluster of the zero-write mode: the server also holds the epoch
// the sharder published.
type hashSim struct {
	simCluster[*hashMember]
	epoch Epoch // on the sharder's Lease
	// confirmed holds the members the current sharder confirmed gone.
	confirmed map[string]bool
	ops       []publishOp
}

func newHashSim(t *testing.T, seed uint64, nKeys, nMembers int) *hashSim {
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed27))
	s := &hashSim{simCluster: newSimCluster[*hashMember](t, rng, nKeys, 80), confirmed: map[string]bool{}}
	for range nMembers {
		s.join()
	}
	return s
}

func (s *hashSim) join() {
	m := &hashMember{simProc: s.newProc(), viewAcks: map[string]uint64{}}
	m.rm = newRangeMember(m.name, m.fence)
	s.members = append(s.members, m)
	s.logf("%s: joined", m.name)
}

// runningMember is a random member whose process runs, mostly (crashed ones stay in the list).
func (s *hashSim) runningMember() *hashMember {
	for range 4 {
		if m := s.randomMember(); m.alive {
			return m
		}
	}
	return s.randomMember()
}

// confirmGone is the sharder's confirmation on the server (see simCluster.confirmGone),
// remembered until the sharder fails over.
func (s *hashSim) confirmGone(member string) bool {
	if s.confirmed[member] {
		return true
	}
	if !s.simCluster.confirmGone(member) {
		return false
	}
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
		s.renew(s.runningMember())
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
			s.began(m, k, done, err)
		}
	case r < 985:
		s.endReconcile(s.randomMember())
	case r < 987:
		s.partition(s.randomMember())
	case r < 989:
		s.crash(s.randomMember())
	case r < 992:
		s.leave(s.randomMember())
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
	if k, who := s.doubleReconcile(); who != nil {
		s.t.Fatalf("%s (segment %d) reconciled by %v at once (epoch %s); last steps:\n%s",
			k, segmentOf(HashKey(k)), who, encodeEpoch(s.epoch), strings.Join(s.trace, "\n"))
	}
}

func (s *hashSim) heal() {
	s.endFaults(s.join)
	s.settle(func() {
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
	})
	want := s.live()
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

// newEpochModel is the zero-write mode's simulation of keys keys and three members.
func newEpochModel(t *testing.T, seed uint64, keys int) simModel { return newHashSim(t, seed, keys, 3) }

func TestEpochModel(t *testing.T) {
	// Few keys make a hand-over racing a reconcile of the same key frequent; more keys cover
	// more segments.
	testModel(t, "keys", []int{3, 64}, 200, newEpochModel)
}

func FuzzEpochModel(f *testing.F) { fuzzModel(f, 32, newEpochModel) }
