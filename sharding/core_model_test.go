package sharding

import (
	"context"
	"errors"
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

// simEvent is a copy of an object on its way to a member's cache: its state and its
// resourceVersion.
type simEvent struct {
	key string
	st  State
	rv  int
}

// simMember is a member process with its informer's cache (the objects labelled for it), the
// events on their way to that cache, and its gate.
type simMember struct {
	simProc
	cache   map[string]simEvent
	pending []simEvent
	gate    *Gate
}

// simOp is a sharder decision waiting to land: it applies only if the object is still in the
// state the decision read.
type simOp struct {
	key    string
	expect State
	action Action
}

// sim is the simulated cluster of the label mode: the server also holds every object's State
// and resourceVersion.
type sim struct {
	simCluster[*simMember]
	labels   Labels
	objects  map[string]State
	versions map[string]int
	ops      []simOp
}

func newSim(t *testing.T, seed uint64, nObjects, nMembers int) *sim {
	l, err := NewLabels("model")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := &sim{simCluster: newSimCluster[*simMember](t, rng, nObjects, 60), labels: l, objects: map[string]State{}, versions: map[string]int{}}
	for _, k := range s.keys {
		s.objects[k] = State{}
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
	s.versions[key]++
	for _, m := range s.members {
		if m.alive {
			m.pending = append(m.pending, simEvent{key, st, s.versions[key]})
		}
	}
}

func (s *sim) join() {
	m := &simMember{simProc: s.newProc(), cache: map[string]simEvent{}}
	name := m.name
	lookup := func(key string) (interface{}, bool, error) {
		c, ok := m.cache[key]
		if !ok {
			return nil, false, nil
		}
		ns, n := splitKey(key)
		return &metav1.ObjectMeta{Namespace: ns, Name: n, Labels: labelsOf(s.labels, c.st), ResourceVersion: strconv.Itoa(c.rv)}, true, nil
	}
	ack := func(_ context.Context, ns, n, member, rv string) error {
		if m.partitioned || !m.alive {
			return errors.New("unreachable")
		}
		key := ns + "/" + n
		if s.objects[key] != (State{Shard: member, Draining: true}) || strconv.Itoa(s.versions[key]) != rv {
			return errStateChanged
		}
		s.write(key, State{})
		return nil
	}
	m.gate = newGate(s.labels, name, lookup, ack, m.fence)
	s.members = append(s.members, m)
}

// receive puts a copy into m's informer cache, which holds the objects labelled for m.
func (m *simMember) receive(ev simEvent) {
	if ev.st.Shard == m.name {
		m.cache[ev.key] = ev
	} else {
		delete(m.cache, ev.key)
	}
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

func (s *sim) step() {
	switch r := s.pick(1000); {
	case r < 80: // time passes
		s.now = s.now.Add(time.Duration(s.rng.Int64N(int64(simLease / 4))))
	case r < 230: // a member renews its lease
		s.renew(s.randomMember())
	case r < 330: // the sharder observes one lease
		if rec, ok := s.record(s.randomMember().name); ok {
			s.ring.Observe(rec, s.now)
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
			s.logf("%s: cache gets %s %+v rv %d", m.name, ev.key, ev.st, ev.rv)
			m.receive(ev)
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
			s.began(m, k, done, err)
		}
	case r < 980: // a reconcile ends
		s.endReconcile(s.randomMember())
	case r < 983: // a member is partitioned from the server (it keeps running)
		s.partition(s.randomMember())
	case r < 986: // a member crashes
		s.crash(s.randomMember())
	case r < 990: // a member leaves cleanly: fence, wait for reconciles, release
		s.leave(s.randomMember())
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

// check panics — through t.Fatalf — if two members reconcile one key.
func (s *sim) check() {
	if k, who := s.doubleReconcile(); who != nil {
		s.t.Fatalf("%s reconciled by %v at once (server state %+v); last steps:\n%s", k, who, s.objects[k], strings.Join(s.trace, "\n"))
	}
}

// heal stops all faults and runs the protocol to quiescence.
func (s *sim) heal() {
	s.endFaults(s.join)
	s.settle(func() {
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
				m.receive(ev)
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
	})
	snap := s.ring.Snapshot(s.now)
	for _, k := range s.keys {
		want, _ := snap.Owner(k)
		if got := s.objects[k]; got != (State{Shard: want}) {
			s.t.Fatalf("after healing, %s is %+v, want assigned to %s (live %v)", k, got, want, snap.Members())
		}
	}
}

// newLabelModel is the label mode's simulation of objects objects and three members.
func newLabelModel(t *testing.T, seed uint64, objects int) simModel {
	return newSim(t, seed, objects, 3)
}

func TestHandoverModel(t *testing.T) {
	// Few objects make the interesting interleavings (a drain racing a reconcile of the same
	// key) frequent; more objects exercise balancing.
	testModel(t, "objects", []int{3, 12}, 400, newLabelModel)
}

func FuzzHandoverModel(f *testing.F) { fuzzModel(f, 16, newLabelModel) }
