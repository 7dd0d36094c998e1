package sharding

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gateFixture is a gate of member "me" over a map cache, with a recording acknowledger.
type gateFixture struct {
	labels Labels
	fence  *fence
	gate   *Gate
	// mu guards cache, rv, acks and ackErr.
	mu    sync.Mutex
	cache map[string]interface{}
	// rv is the resourceVersion of the last copy put in the cache.
	rv     int
	acks   []string
	ackErr error
}

func newGateFixture(t *testing.T) *gateFixture {
	l, err := NewLabels("ring")
	if err != nil {
		t.Fatal(err)
	}
	fx := &gateFixture{labels: l, fence: newFence(), cache: map[string]interface{}{}}
	fx.fence.open()
	t.Cleanup(func() { fx.fence.close() })
	lookup := func(key string) (interface{}, bool, error) {
		fx.mu.Lock()
		defer fx.mu.Unlock()
		if key == "ns/broken" {
			return nil, false, errors.New("indexer failed")
		}
		o, ok := fx.cache[key]
		return o, ok, nil
	}
	ack := func(_ context.Context, ns, name, member, rv string) error {
		fx.mu.Lock()
		defer fx.mu.Unlock()
		fx.acks = append(fx.acks, ns+"/"+name+"@"+member+" rv "+rv)
		return fx.ackErr
	}
	fx.gate = newGate(l, "me", lookup, ack, fx.fence)
	return fx
}

func (fx *gateFixture) put(key, shard string, draining bool) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	lbls := map[string]string{}
	if shard != "" {
		lbls[fx.labels.Shard()] = shard
	}
	if draining {
		lbls[fx.labels.Drain()] = drainValue
	}
	ns, name := splitKey(key)
	fx.rv++
	fx.cache[key] = &metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls, ResourceVersion: strconv.Itoa(fx.rv)}
}

func (fx *gateFixture) remove(key string) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	delete(fx.cache, key)
}

func (fx *gateFixture) ackCount() int {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return len(fx.acks)
}

func (fx *gateFixture) ackLog() []string {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]string(nil), fx.acks...)
}

func (fx *gateFixture) setAckErr(err error) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.ackErr = err
}

// do runs the gate for key with a reconcile that records whether it ran.
func (fx *gateFixture) do(key string) (ran bool, err error) {
	err = fx.gate.Do(context.Background(), key, func(context.Context) error {
		ran = true
		return nil
	})
	return ran, err
}

func TestGateDecisions(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(fx *gateFixture)
		key      string
		wantRan  bool
		wantErr  error
		wantAcks int
	}{
		{"assigned here runs", func(fx *gateFixture) { fx.put("ns/a", "me", false) }, "ns/a", true, nil, 0},
		{"not cached is not ours", func(fx *gateFixture) {}, "ns/a", false, ErrNotAssigned, 0},
		{"cached for another member is not ours", func(fx *gateFixture) { fx.put("ns/a", "other", false) }, "ns/a", false, ErrNotAssigned, 0},
		{"draining is acknowledged", func(fx *gateFixture) { fx.put("ns/a", "me", true) }, "ns/a", false, ErrHandedOver, 1},
		{"an acknowledgement whose condition failed is retried", func(fx *gateFixture) {
			fx.put("ns/a", "me", true)
			fx.ackErr = fmt.Errorf("test op failed: %w", errStateChanged)
		}, "ns/a", false, errStateChanged, 1},
		{"a fenced member reconciles nothing", func(fx *gateFixture) {
			fx.put("ns/a", "me", false)
			fx.fence.close()
		}, "ns/a", false, ErrFenced, 0},
		{"a fenced member acknowledges nothing", func(fx *gateFixture) {
			fx.put("ns/a", "me", true)
			fx.fence.close()
		}, "ns/a", false, ErrFenced, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newGateFixture(t)
			tc.setup(fx)
			ran, err := fx.do(tc.key)
			if ran != tc.wantRan || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Do ran %v with %v; want ran %v with %v", ran, err, tc.wantRan, tc.wantErr)
			}
			if Skipped(err) != Skipped(tc.wantErr) {
				t.Fatalf("Skipped(%v) = %v, want %v", err, Skipped(err), Skipped(tc.wantErr))
			}
			if got := fx.ackCount(); got != tc.wantAcks {
				t.Fatalf("%d acknowledgements, want %d", got, tc.wantAcks)
			}
		})
	}
}

func TestGateLookupErrors(t *testing.T) {
	fx := newGateFixture(t)
	if _, err := fx.do("ns/broken"); err == nil || errors.Is(err, ErrNotAssigned) {
		t.Fatalf("lookup failure gave %v, want the lookup's error", err)
	}
	fx.mu.Lock()
	fx.cache["ns/odd"] = "not an object"
	fx.mu.Unlock()
	if ran, err := fx.do("ns/odd"); ran || err == nil {
		t.Fatalf("a cached non-object gave ran=%v err=%v, want an error", ran, err)
	}
}

// TestGateHandOverSequence follows one key through a drain that arrives during a reconcile.
func TestGateHandOverSequence(t *testing.T) {
	fx := newGateFixture(t)
	fx.put("ns/a", "me", false)
	ctx, done, err := fx.gate.Begin(context.Background(), "ns/a")
	if err != nil {
		t.Fatal(err)
	}
	// The drain mark arrives while the reconcile runs: no acknowledgement yet.
	fx.put("ns/a", "me", true)
	if _, err := fx.do("ns/a"); !errors.Is(err, ErrBusy) {
		t.Fatalf("drain during a reconcile gave %v, want ErrBusy", err)
	}
	if fx.ackCount() != 0 {
		t.Fatal("acknowledged while a reconcile was in flight")
	}
	if ctx.Err() != nil {
		t.Fatal("the running reconcile was cancelled by a drain")
	}
	done()
	if ctx.Err() == nil {
		t.Fatal("done did not release the reconcile's context")
	}
	// After it ends, the next processing acknowledges; the stale draining copy never runs.
	if _, err := fx.do("ns/a"); !errors.Is(err, ErrHandedOver) {
		t.Fatalf("after the reconcile: %v, want ErrHandedOver", err)
	}
	if ran, err := fx.do("ns/a"); ran || !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("stale draining copy: ran=%v err=%v, want ErrNotAssigned", ran, err)
	}
	if fx.ackCount() != 1 {
		t.Fatalf("%d acknowledgements, want 1", fx.ackCount())
	}
	// The informer drops it, then it is assigned here again: it runs.
	fx.remove("ns/a")
	if _, err := fx.do("ns/a"); !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("removed: %v, want ErrNotAssigned", err)
	}
	fx.put("ns/a", "me", false)
	if ran, err := fx.do("ns/a"); !ran || err != nil {
		t.Fatalf("reassigned here: ran=%v err=%v", ran, err)
	}
}

// TestGateAcknowledgesEachDrain: the object is drained, acknowledged, assigned here again and
// drained again, and the cache — like a workqueue coalescing the key's events — shows the gate
// only the first and the last draining copies. The second drain is acknowledged too, or the
// sharder would wait for it forever.
func TestGateAcknowledgesEachDrain(t *testing.T) {
	fx := newGateFixture(t)
	fx.put("ns/a", "me", true) // rv 1
	if _, err := fx.do("ns/a"); !errors.Is(err, ErrHandedOver) {
		t.Fatalf("first drain: %v, want ErrHandedOver", err)
	}
	// The first drain's copy again (the acknowledgement's event has not arrived): skipped.
	if ran, err := fx.do("ns/a"); ran || !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("acknowledged copy: ran=%v err=%v, want ErrNotAssigned", ran, err)
	}
	// Server: labels cleared (rv 2), assigned here (rv 3), drained (rv 4); the cache goes from
	// rv 1 to rv 4 before the gate is asked about the key.
	fx.mu.Lock()
	fx.rv = 3
	fx.mu.Unlock()
	fx.put("ns/a", "me", true) // rv 4
	if ran, err := fx.do("ns/a"); ran || !errors.Is(err, ErrHandedOver) {
		t.Fatalf("second drain: ran=%v err=%v, want ErrHandedOver", ran, err)
	}
	want := []string{"ns/a@me rv 1", "ns/a@me rv 4"}
	if got := fx.ackLog(); !reflect.DeepEqual(got, want) {
		t.Fatalf("acknowledgements %q, want %q", got, want)
	}
	if ran, err := fx.do("ns/a"); ran || !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("second acknowledged copy: ran=%v err=%v, want ErrNotAssigned", ran, err)
	}
}

// TestGateStaleDrainCopy: after an acknowledgement, the cache may still bring an older copy of
// the same drain (the object was written to while draining). Its acknowledgement is
// conditioned on that copy's resourceVersion, so it fails on the server; the gate neither
// reconciles nor forgets the key, and a newer copy assigned here runs.
func TestGateStaleDrainCopy(t *testing.T) {
	fx := newGateFixture(t)
	fx.put("ns/a", "me", true) // rv 1
	if _, err := fx.do("ns/a"); !errors.Is(err, ErrHandedOver) {
		t.Fatalf("drain: %v, want ErrHandedOver", err)
	}
	fx.put("ns/a", "me", true) // rv 2: written before the acknowledgement landed
	fx.setAckErr(fmt.Errorf("test op failed: %w", errStateChanged))
	ran, err := fx.do("ns/a")
	if ran || !errors.Is(err, errStateChanged) || Skipped(err) {
		t.Fatalf("stale draining copy: ran=%v err=%v, want the acknowledgement's error to retry", ran, err)
	}
	if got, want := fx.ackLog(), []string{"ns/a@me rv 1", "ns/a@me rv 2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("acknowledgements %q, want %q", got, want)
	}
	fx.put("ns/a", "me", false) // assigned here anew
	if ran, err := fx.do("ns/a"); !ran || err != nil {
		t.Fatalf("assigned here anew: ran=%v err=%v", ran, err)
	}
}

func TestGateAcknowledgementFailureIsRetried(t *testing.T) {
	fx := newGateFixture(t)
	fx.put("ns/a", "me", true)
	fx.ackErr = errors.New("connection refused")
	if _, err := fx.do("ns/a"); err == nil || errors.Is(err, ErrHandedOver) {
		t.Fatalf("failed acknowledgement gave %v, want its error", err)
	}
	fx.mu.Lock()
	fx.ackErr = nil
	fx.mu.Unlock()
	if _, err := fx.do("ns/a"); !errors.Is(err, ErrHandedOver) {
		t.Fatalf("retry gave %v, want ErrHandedOver", err)
	}
	if fx.ackCount() != 2 {
		t.Fatalf("%d acknowledgement attempts, want 2", fx.ackCount())
	}
}

func TestGateFenceCancelsRunningReconciles(t *testing.T) {
	fx := newGateFixture(t)
	fx.put("ns/a", "me", false)
	ctx, done, err := fx.gate.Begin(context.Background(), "ns/a")
	if err != nil {
		t.Fatal(err)
	}
	drained := fx.fence.close()
	<-ctx.Done() // cancelled by the fence
	select {
	case <-drained:
		t.Fatal("fence drained while the reconcile had not returned")
	default:
	}
	done()
	<-drained
}

func TestSkipped(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrNotAssigned, true},
		{ErrHandedOver, true},
		{fmt.Errorf("wrapped: %w", ErrFenced), true},
		{ErrBusy, false},
		{errors.New("reconcile failed"), false},
	}
	for _, tc := range cases {
		if got := Skipped(tc.err); got != tc.want {
			t.Errorf("Skipped(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
