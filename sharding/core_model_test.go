package sharding

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The model test runs the real Ring, Decide, Gate and fence inside a simulated cluster — a
// server holding object labels and leases, members with lagging caches, a sharder with a
// lagging view whose decisions land late — and drives it with seeded random steps: time passing,
// renewals, partitions, crashes, clean leaves, joins, sharder restarts, reconciles starting
// and ending. After every step it checks the guarantee: no object is being reconciled by two
// members at once. At the end it heals the cluster and checks that every object reaches the
// member Assign names, with no drain mark left.

const (
	simLease  = 10 * time.Second
	simMargin = 2 * time.Second
)

type simEvent struct {
	key string
	st  State
}

type simLeaseObj struct {
	holder string
	renew  int
}

type simMember struct {
	name        string
	alive       bool // the process runs
	partitioned bool // it cannot reach the server
	lastRenew   time.Time
	fence       *fence
	cache       map[string]State
	pending     []simEvent
	gate        *Gate
	inflight    map[string][]func()
}

// simOp is a sharder decision waiting to land: it applies only if the object is still in the
// state the decision read.
type simOp struct {
	key    string
	expect State
	action Action
}

type sim struct {
	t       *testing.T
	rng     *rand.Rand
	now     time.Time
	labels  Labels
	objects map[string]State
	keys    []string
	leases  map[string]*simLeaseObj
	members []*simMember
	ring    *Ring
	ops     []simOp
	joined  int
	// trace holds the last steps, printed when the check fails.
	trace []string
}

func (s *sim) logf(format string, args ...any) {
	s.trace = append(s.trace, s.now.Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	if len(s.trace) > 60 {
		s.trace = s.trace[1:]
	}
}

func newSim(t *testing.T, seed uint64, nObjects, nMembers int) *sim {
	l, err := NewLabels("model")
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), labels: l,
		objects: map[string]State{}, leases: map[string]*simLeaseObj{}}
	s.ring = NewRing(s.now, simLease)
	for i := range nObjects {
		k := fmt.Sprintf("ns/o%d", i)
		s.objects[k] = State{}
		s.keys = append(s.keys, k)
	}
	for range nMembers {
		s.join()
	}
	return s
}

// write changes an object on the server and queues the change for every member's informer.
func (s *sim) write(key string, st State) {
	s.logf("server: %s %+v -> %+v", key, s.objects[key], st)
	s.objects[key] = st
	for _, m := range s.members {
		if m.alive {
			m.pending = append(m.pending, simEvent{key, st})
		}
	}
}

func (s *sim) join() {
	name := "m" + strconv.Itoa(s.joined)
	s.joined++
	m := &simMember{name: name, alive: true, lastRenew: s.now, fence: newFence(),
		cache: map[string]State{}, inflight: map[string][]func(){}}
	m.fence.open()
	lookup := func(key string) (interface{}, bool, error) {
		st, ok := m.cache[key]
		if !ok {
			return nil, false, nil
		}
		ns, n := splitKey(key)
		return &metav1.ObjectMeta{Namespace: ns, Name: n, Labels: labelsOf(s.labels, st)}, true, nil
	}
	ack := func(_ context.Context, ns, n, member string) error {
		if m.partitioned || !m.alive {
			return errors.New("unreachable")
		}
		key := ns + "/" + n
		if s.objects[key] != (State{Shard: member, Draining: true}) {
			return errStateChanged
		}
		s.write(key, State{})
		return nil
	}
	m.gate = newGate(s.labels, name, lookup, ack, m.fence)
	s.leases[name] = &simLeaseObj{holder: name, renew: 1}
	s.members = append(s.members, m)
}

func splitKey(k string) (string, string) {
	for i := range len(k) {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

func labelsOf(l Labels, st State) map[string]string {
	out := map[string]string{}
	if st.Shard != "" {
		out[l.Shard()] = st.Shard
	}
	if st.Draining {
		out[l.Drain()] = drainValue
	}
	return out
}

// stop ends a member's reconciles: a crashed process's simply stop; a fenced member's are
// cancelled, and the model assumes they return within the skew margin.
func (s *sim) stopReconciles(m *simMember) {
	for k, dones := range m.inflight {
		for _, d := range dones {
			d()
		}
		delete(m.inflight, k)
	}
}

// fenceIfDue closes the fence of every member whose lease could expire within the margin.
func (s *sim) fenceIfDue() {
	for _, m := range s.members {
		if !m.fence.isClosed() && !s.now.Before(m.lastRenew.Add(simLease-simMargin)) {
			s.logf("%s: fenced", m.name)
			m.fence.close()
			s.stopReconciles(m)
		}
	}
}

func (s *sim) pick(n int) int { return s.rng.IntN(n) }

func (s *sim) randomMember() *simMember { return s.members[s.pick(len(s.members))] }

func (s *sim) step() {
	switch r := s.pick(1000); {
	case r < 80: // time passes
		s.now = s.now.Add(time.Duration(s.rng.Int64N(int64(simLease / 4))))
	case r < 230: // a member renews its lease
		m := s.randomMember()
		// A member never recreates a lease it held: once the sharder deleted it, it cannot renew.
		if l := s.leases[m.name]; l != nil && m.alive && !m.partitioned && !m.fence.isClosed() {
			l.renew++
			m.lastRenew = s.now
			s.logf("%s: renewed", m.name)
		}
	case r < 330: // the sharder observes one lease
		m := s.randomMember()
		if l := s.leases[m.name]; l != nil {
			s.ring.Observe(LeaseRecord{Name: m.name, Holder: l.holder, Version: strconv.Itoa(l.renew), Duration: simLease}, s.now)
		}
	case r < 450: // the sharder decides about one object
		k := s.keys[s.pick(len(s.keys))]
		a := Decide(k, s.objects[k], s.ring.Snapshot(s.now))
		if a.Kind == AssignTo || a.Kind == DrainFrom || a.Kind == Reassign {
			s.ops = append(s.ops, simOp{key: k, expect: s.objects[k], action: a})
		}
	case r < 570: // a sharder decision lands (or fails its condition)
		if len(s.ops) > 0 {
			i := s.pick(len(s.ops))
			op := s.ops[i]
			s.ops = append(s.ops[:i], s.ops[i+1:]...)
			s.apply(op)
		}
	case r < 770: // an informer delivers one event
		m := s.randomMember()
		if len(m.pending) > 0 {
			ev := m.pending[0]
			m.pending = m.pending[1:]
			s.logf("%s: cache gets %s %+v", m.name, ev.key, ev.st)
			if ev.st.Shard == m.name {
				m.cache[ev.key] = ev.st
			} else {
				delete(m.cache, ev.key)
			}
		}
	case r < 880: // a worker processes a key
		m := s.randomMember()
		if m.alive {
			// Like a workqueue fed by the member's informer, mostly keys in its cache.
			k := s.keys[s.pick(len(s.keys))]
			for ck := range m.cache {
				if s.pick(5) > 0 {
					k = ck
				}
				break
			}
			_, done, err := m.gate.Begin(context.Background(), k)
			s.logf("%s: begin %s: %v", m.name, k, err)
			if err == nil {
				m.inflight[k] = append(m.inflight[k], done)
			}
		}
	case r < 980: // a reconcile ends
		m := s.randomMember()
		for k, dones := range m.inflight {
			s.logf("%s: end %s", m.name, k)
			dones[0]()
			if m.inflight[k] = dones[1:]; len(m.inflight[k]) == 0 {
				delete(m.inflight, k)
			}
			break
		}
	case r < 983: // a member is partitioned from the server (it keeps running)
		m := s.randomMember()
		m.partitioned = true
		s.logf("%s: partitioned", m.name)
	case r < 986: // a member crashes
		m := s.randomMember()
		m.alive = false
		s.logf("%s: crashed", m.name)
		s.stopReconciles(m)
	case r < 990: // a member leaves cleanly: fence, wait for reconciles, release
		m := s.randomMember()
		if m.alive && !m.partitioned {
			drained := m.fence.close()
			s.stopReconciles(m) // its workers see their contexts cancelled and return
			<-drained
			if l := s.leases[m.name]; l != nil {
				l.holder = ""
				l.renew++
			}
			m.alive = false
		}
	case r < 998: // a member joins
		s.join()
	default: // the sharder fails over: the new one starts with a fresh view
		s.ring = NewRing(s.now, simLease)
	}
	s.fenceIfDue()
	s.check()
}

func (s *sim) apply(op simOp) {
	if s.objects[op.key] != op.expect {
		return
	}
	if op.action.Kind == Reassign && !s.confirmGone(op.action.From) {
		return
	}
	switch op.action.Kind {
	case AssignTo, Reassign:
		s.write(op.key, State{Shard: op.action.To})
	case DrainFrom:
		s.write(op.key, State{Shard: op.action.From, Draining: true})
	}
}

// confirmGone is the sharder's confirmation on the server that member is gone: the lease is
// absent, released, or still at the version the view saw expire (then it is deleted).
func (s *sim) confirmGone(member string) bool {
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
		s.ring.Observe(LeaseRecord{Name: member, Holder: l.holder, Version: strconv.Itoa(l.renew), Duration: simLease}, s.now)
		return false
	}
	s.ring.Confirm(member, s.now)
	return true
}

// check panics — through t.Fatalf — if two members reconcile one key.
func (s *sim) check() {
	for _, k := range s.keys {
		var who []string
		for _, m := range s.members {
			if len(m.inflight[k]) > 0 {
				who = append(who, m.name)
			}
		}
		if len(who) > 1 {
			s.t.Fatalf("%s reconciled by %v at once (server state %+v); last steps:\n%s", k, who, s.objects[k], strings.Join(s.trace, "\n"))
		}
	}
}

// heal stops all faults and runs the protocol to quiescence.
func (s *sim) heal() {
	for _, m := range s.members {
		if m.partitioned {
			m.alive = false
			s.stopReconciles(m)
		}
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
	for _, m := range s.members {
		s.stopReconciles(m)
	}
	// The sharder sees every lease, then a lease duration passes: every lost member is gone.
	for name, l := range s.leases {
		s.ring.Observe(LeaseRecord{Name: name, Holder: l.holder, Version: strconv.Itoa(l.renew), Duration: simLease}, s.now)
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
		for name, l := range s.leases {
			s.ring.Observe(LeaseRecord{Name: name, Holder: l.holder, Version: strconv.Itoa(l.renew), Duration: simLease}, s.now)
		}
		for _, op := range s.ops {
			s.apply(op)
		}
		s.ops = nil
		snap := s.ring.Snapshot(s.now)
		for _, k := range s.keys {
			s.apply(simOp{key: k, expect: s.objects[k], action: Decide(k, s.objects[k], snap)})
		}
		for _, m := range s.members {
			for _, ev := range m.pending {
				if ev.st.Shard == m.name {
					m.cache[ev.key] = ev.st
				} else {
					delete(m.cache, ev.key)
				}
			}
			m.pending = nil
			if m.alive {
				for _, k := range s.keys {
					if _, done, err := m.gate.Begin(context.Background(), k); err == nil {
						done()
					}
				}
			}
		}
		s.now = s.now.Add(time.Second)
	}
	snap := s.ring.Snapshot(s.now)
	for _, k := range s.keys {
		want, _ := snap.Owner(k)
		if got := s.objects[k]; got != (State{Shard: want}) {
			s.t.Fatalf("after healing, %s is %+v, want assigned to %s (live %v)", k, got, want, snap.Members())
		}
	}
}

func runModel(t *testing.T, seed uint64, steps, objects int) {
	s := newSim(t, seed, objects, 3)
	for range steps {
		s.step()
	}
	s.heal()
	for _, m := range s.members {
		m.fence.close()
		m.fence.cancel()
	}
}

func TestHandoverModel(t *testing.T) {
	// Few objects make the interesting interleavings (a drain racing a reconcile of the same
	// key) frequent; more objects exercise balancing.
	for _, objects := range []int{3, 12} {
		for seed := range uint64(400) {
			t.Run(fmt.Sprintf("%d objects/seed %d", objects, seed), func(t *testing.T) { runModel(t, seed, 2000, objects) })
		}
	}
}

func FuzzHandoverModel(f *testing.F) {
	f.Add(uint64(1), uint16(500), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, objects uint8) {
		runModel(t, seed, int(steps), 1+int(objects%16))
	})
}
