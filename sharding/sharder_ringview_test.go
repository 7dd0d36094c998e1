package sharding

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcache/cache"
)

func lease(name, holder, rv string, seconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds},
	}
}

func signalled(v *ringView) bool {
	select {
	case <-v.changed:
		return true
	default:
		return false
	}
}

func TestRingView(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	v := newRingView(clk, 10*time.Second)
	defer v.stop()
	h := v.handler()

	h.OnAdd(lease("a", "a", "1", 10), true)
	h.OnAdd(lease("b", "b", "1", 10), true)
	if !signalled(v) || !slices.Equal(v.snapshot().Members(), []string{"a", "b"}) {
		t.Fatalf("members %v after two leases", v.snapshot().Members())
	}
	// A renewal changes nothing the sharder acts on: no signal.
	clk.Step(5 * time.Second)
	h.OnUpdate(lease("a", "a", "1", 10), lease("a", "a", "2", 10))
	if signalled(v) {
		t.Fatal("a renewal signalled a change")
	}
	// b expires at 10s: the timer wakes the view's owner, which re-evaluates it; a stays
	// (renewed at 5s).
	clk.Step(5 * time.Second)
	select {
	case <-v.wake:
	default:
		t.Fatal("no wake-up when b's lease could expire")
	}
	v.tick()
	if !signalled(v) {
		t.Fatal("no signal when b expired")
	}
	snap := v.snapshot()
	if !slices.Equal(snap.Members(), []string{"a"}) || !snap.Gone("b") {
		t.Fatalf("after b expired: members %v, b gone %v", snap.Members(), snap.Gone("b"))
	}
	// a releases its lease: gone at once.
	h.OnUpdate(lease("a", "a", "2", 10), lease("a", "", "3", 10))
	if !signalled(v) || len(v.snapshot().Members()) != 0 || !v.snapshot().Gone("a") {
		t.Fatal("a released lease did not make a gone at once")
	}
	// A deleted lease that was live counts as not renewed since the deletion.
	h.OnAdd(lease("c", "c", "1", 10), false)
	h.OnDelete(cache.DeletedObject[*coordinationv1.Lease]{OptionalObj: lease("c", "c", "1", 10)})
	if v.snapshot().Gone("c") {
		t.Fatal("a deleted lease counted as gone before its duration")
	}
	// The sharder's confirmation makes it gone for good.
	v.confirm("c")
	if !v.snapshot().Gone("c") {
		t.Fatal("a confirmed member is not gone")
	}
	if rec, ok := v.record("c"); ok {
		t.Fatalf("record of a deleted lease: %+v", rec)
	}
}
