package sharding

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// versionedLeases makes the fake clientset's Leases behave as on a server: every create and
// update sets a new resourceVersion (the ring tells renewals apart by it), and an update whose
// resourceVersion is not the stored one is a conflict.
func versionedLeases(client *fake.Clientset) {
	var mu sync.Mutex
	version := 0
	next := func() string {
		version++
		return strconv.Itoa(version)
	}
	client.PrependReactor("create", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		obj := action.(k8stesting.CreateAction).GetObject().(*leaseType).DeepCopy()
		obj.ResourceVersion = next()
		return true, obj, client.Tracker().Create(leaseGVR, obj, obj.Namespace)
	})
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		obj := action.(k8stesting.UpdateAction).GetObject().(*leaseType).DeepCopy()
		cur, err := client.Tracker().Get(leaseGVR, obj.Namespace, obj.Name)
		if err != nil {
			return true, nil, err
		}
		if cur.(*leaseType).ResourceVersion != obj.ResourceVersion {
			return true, nil, apierrors.NewConflict(leaseGVR.GroupResource(), obj.Name, errors.New("stale resourceVersion"))
		}
		obj.ResourceVersion = next()
		return true, obj, client.Tracker().Update(leaseGVR, obj, obj.Namespace)
	})
}

// runningShard is one member of a hash ring in TestHashRing.
type runningShard struct {
	s      *Shard
	cancel context.CancelFunc
	errc   chan error
}

func startHashShard(t *testing.T, client *fake.Clientset, name string) *runningShard {
	t.Helper()
	l, err := NewLabels("r")
	if err != nil {
		t.Fatal(err)
	}
	logger := klog.Background().V(10) // quiet
	opts := Options{Ring: "r", Namespace: "ns", Selection: SelectByHash, Resources: []Resource{{Resource: configMapsGVR}},
		Concurrency: 1, ResyncPeriod: time.Minute, FollowUpDelay: 500 * time.Millisecond, Clock: clock.RealClock{}, Logger: &logger}
	s := newShard(name, l, opts, testTiming, client, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningShard{s: s, cancel: cancel, errc: make(chan error, 1)}
	go func() { r.errc <- s.Run(ctx) }()
	<-s.Ready()
	return r
}

// settled reports whether the running members all reconcile every segment they own in the
// published epoch, whose members they are, and together all segments.
func settled(client *fake.Clientset, members ...*runningShard) bool {
	lease, err := client.Tracker().Get(leaseGVR, "ns", "r-sharder")
	if err != nil {
		return false
	}
	e, ok := parseEpoch(lease.(*leaseType).Annotations[EpochAnnotation])
	if !ok || len(e.Members) != len(members) {
		return false
	}
	total := 0
	for _, m := range members {
		epoch, owned, active, acked := m.s.ranges.status()
		if !slices.Contains(e.Members, m.s.name) || epoch != e.Number || owned != active || acked != e.Number {
			return false
		}
		total += active
	}
	return total == hashSegments
}

// checkDisjoint fails if two members may reconcile one segment (a fenced member reconciles
// nothing).
func checkDisjoint(t *testing.T, members ...*runningShard) {
	t.Helper()
	var seen segments
	for _, m := range members {
		if m.s.fence.isClosed() {
			continue
		}
		m.s.ranges.mu.Lock()
		active := m.s.ranges.state.active
		m.s.ranges.mu.Unlock()
		if !seen.and(active).empty() {
			t.Fatalf("%s reconciles a segment another member reconciles", m.s.name)
		}
		for i := range seen {
			seen[i] |= active[i]
		}
	}
}

// waitSettled polls in virtual time, checking disjointness at every poll.
func waitSettled(t *testing.T, client *fake.Clientset, what string, members []*runningShard, all ...*runningShard) {
	t.Helper()
	for range 600 {
		checkDisjoint(t, all...)
		if settled(client, members...) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	lease, _ := client.Tracker().Get(leaseGVR, "ns", "r-sharder")
	t.Logf("sharder lease: %v %v", *lease.(*leaseType).Spec.HolderIdentity, lease.(*leaseType).Annotations)
	for _, m := range all {
		e, o, a, k := m.s.ranges.status()
		t.Logf("%s: fenced %v epoch %d owned %d active %d acked %d", m.s.name, m.s.fence.isClosed(), e, o, a, k)
	}
	t.Fatalf("not settled after %s", what)
}

// TestHashRing runs three members with SelectByHash against a fake clientset: they settle on
// disjoint ranges covering the hash space, a fourth joins, one leaves cleanly, one is cut off
// from the server, and at every poll no segment is reconciled by two members. Only Leases are
// ever written.
func TestHashRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		versionedLeases(client)
		// Reactors are added before anything runs: the fake's reaction chain is not safe to
		// change while it is used.
		var cutOff atomic.Bool
		client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
			if cutOff.Load() && action.(k8stesting.UpdateAction).GetObject().(*leaseType).Name == "c" {
				return true, nil, errors.New("partitioned")
			}
			return false, nil, nil
		})
		a := startHashShard(t, client, "a")
		b := startHashShard(t, client, "b")
		c := startHashShard(t, client, "c")
		all := []*runningShard{a, b, c}
		defer func() {
			for _, m := range all {
				m.cancel()
				<-m.errc
			}
		}()
		waitSettled(t, client, "the start", []*runningShard{a, b, c}, a, b, c)

		d := startHashShard(t, client, "d")
		all = append(all, d)
		waitSettled(t, client, "a join", []*runningShard{a, b, c, d}, a, b, c, d)

		b.cancel()
		if err := <-b.errc; err != nil {
			t.Fatalf("b's Run = %v after a clean stop", err)
		}
		b.errc <- nil // for the deferred stop
		waitSettled(t, client, "a leave", []*runningShard{a, c, d}, a, c, d)

		// c is cut off from the server (as after a crash, its Lease is no longer renewed): it
		// fences itself, and only once the sharder confirmed it gone do a and d take its ranges.
		cutOff.Store(true)
		if err := <-c.errc; !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("c's Run = %v, want ErrLeaseLost", err)
		}
		c.errc <- nil
		waitSettled(t, client, "a crash", []*runningShard{a, d}, a, c, d)
		if _, err := client.Tracker().Get(leaseGVR, "ns", "c"); err == nil {
			t.Fatal("c's Lease was not deleted by the confirmation")
		}

		for _, action := range client.Actions() {
			if action.GetResource().Resource != "leases" {
				t.Fatalf("%s of %s: only leases may be touched", action.GetVerb(), action.GetResource())
			}
			if u, ok := action.(k8stesting.UpdateAction); ok && u.GetObject() == nil {
				t.Fatal("empty update")
			}
		}
	})
}
