package sharding

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
)

var testTiming = LeaseTiming{LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond, SkewMargin: time.Second}

// TestHoldLease runs client-go's leader election against a fake clientset in a synctest
// bubble (virtual time): the member creates its labelled lease, renews it, and on
// cancellation releases it and returns nil.
func TestHoldLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		f := newFence()
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			errc <- holdLease(ctx, newLeaseLock(client.CoordinationV1(), "ns", "m1", "m1", map[string]string{RingLabel: "r"}),
				testTiming, clock.RealClock{}, f, func() { f.open(); close(started) })
		}()
		<-started
		leases := client.CoordinationV1().Leases("ns")
		first, err := leases.Get(ctx, "m1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if first.Labels[RingLabel] != "r" || *first.Spec.HolderIdentity != "m1" || *first.Spec.LeaseDurationSeconds != 4 {
			t.Fatalf("lease %+v", first)
		}
		time.Sleep(3 * testTiming.LeaseDuration) // virtual time: a dozen renewals
		renewed, err := leases.Get(ctx, "m1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !renewed.Spec.RenewTime.After(first.Spec.RenewTime.Time) || !f.enter() {
			t.Fatal("the lease was not renewed, or the member fenced itself while renewing")
		}
		f.exit()
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("holdLease after cancel = %v, want nil", err)
		}
		released, err := leases.Get(context.Background(), "m1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := released.Spec.HolderIdentity; h != nil && *h != "" {
			t.Fatalf("lease still held by %q after a clean stop", *h)
		}
		if !f.isClosed() {
			t.Fatal("fence open after holdLease returned")
		}
	})
}

// TestHoldLeaseFencesBeforeExpiry cuts the member off from the server (every lease update
// fails): its fence must close no later than its last successful renewal was sent plus lease
// duration minus skew margin, and holdLease must return ErrLeaseLost.
func TestHoldLeaseFencesBeforeExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		var mu sync.Mutex
		cut := false
		var lastOK time.Time
		client.PrependReactor("*", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			if cut {
				return true, nil, errors.New("partitioned")
			}
			if a.GetVerb() == "update" || a.GetVerb() == "create" {
				lastOK = time.Now()
			}
			return false, nil, nil
		})
		f := newFence()
		started := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			errc <- holdLease(context.Background(), newLeaseLock(client.CoordinationV1(), "ns", "m1", "m1", nil),
				testTiming, clock.RealClock{}, f, func() { f.open(); close(started) })
		}()
		<-started
		time.Sleep(2 * time.Second)
		mu.Lock()
		cut = true
		deadline := lastOK.Add(testTiming.LeaseDuration - testTiming.SkewMargin)
		mu.Unlock()
		<-f.ctx.Done()
		if time.Now().After(deadline) {
			t.Fatalf("fenced at %v, after the deadline %v", time.Now(), deadline)
		}
		if err := <-errc; !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("holdLease = %v, want ErrLeaseLost", err)
		}
	})
}
