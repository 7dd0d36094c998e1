package cache

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// mcTestPod is a pod with a UID.
func mcTestPod(name, rv, uid string) *v1.Pod {
	p := infTestPod("ns", name, rv)
	p.UID = types.UID(uid)
	return p
}

// mcTestStep is one call on a MutationCache in TestMutationCacheTombstones.
type mcTestStep struct {
	mutation, added, deleted, storeAdd, storeDelete *v1.Pod
}

// TestMutationCacheTombstones: OnAddOrUpdate forgets what the store caught up with; OnDelete
// leaves a tombstone that blocks late mutations of the deleted object and is never returned.
func TestMutationCacheTombstones(t *testing.T) {
	cases := []struct {
		name        string
		includeAdds bool
		steps       []mcTestStep
		want        string // infTestRV of GetByKey("ns/a")
		wantEntry   string // "mutation", "tombstone" or "none": what is remembered for ns/a
	}{
		{name: "store caught up with the mutation",
			steps: []mcTestStep{{storeAdd: mcTestPod("a", "5", "u1")}, {mutation: mcTestPod("a", "7", "u1")},
				{storeAdd: mcTestPod("a", "7", "u1")}, {added: mcTestPod("a", "7", "u1")}},
			want: "7", wantEntry: "none"},
		{name: "store passed the mutation",
			steps: []mcTestStep{{mutation: mcTestPod("a", "7", "u1")}, {added: mcTestPod("a", "9", "u1")}},
			want:  "missing", wantEntry: "none"},
		{name: "store behind the mutation keeps it",
			steps: []mcTestStep{{storeAdd: mcTestPod("a", "5", "u1")}, {mutation: mcTestPod("a", "7", "u1")}, {added: mcTestPod("a", "6", "u1")}},
			want:  "7", wantEntry: "mutation"},
		{name: "delete replaces the mutation with a tombstone", includeAdds: true,
			steps: []mcTestStep{{mutation: mcTestPod("a", "7", "u1")}, {deleted: mcTestPod("a", "6", "u1")}},
			want:  "missing", wantEntry: "tombstone"},
		{name: "late mutation of the deleted object is ignored", includeAdds: true,
			steps: []mcTestStep{{deleted: mcTestPod("a", "8", "u1")}, {mutation: mcTestPod("a", "9", "u1")}},
			want:  "missing", wantEntry: "tombstone"},
		{name: "older mutation of another object is ignored", includeAdds: true,
			steps: []mcTestStep{{deleted: mcTestPod("a", "8", "u1")}, {mutation: mcTestPod("a", "7", "u2")}},
			want:  "missing", wantEntry: "tombstone"},
		{name: "mutation at the delete's version is ignored", includeAdds: true,
			steps: []mcTestStep{{deleted: mcTestPod("a", "8", "u1")}, {mutation: mcTestPod("a", "8", "u2")}},
			want:  "missing", wantEntry: "tombstone"},
		{name: "newer mutation of a re-created object is kept", includeAdds: true,
			steps: []mcTestStep{{deleted: mcTestPod("a", "8", "u1")}, {mutation: mcTestPod("a", "9", "u2")}},
			want:  "9", wantEntry: "mutation"},
		{name: "delete of an older object keeps the re-created one's mutation", includeAdds: true,
			steps: []mcTestStep{{mutation: mcTestPod("a", "9", "u2")}, {deleted: mcTestPod("a", "8", "u1")}},
			want:  "9", wantEntry: "mutation"},
		{name: "re-created object in the store replaces the tombstone",
			steps: []mcTestStep{{deleted: mcTestPod("a", "8", "u1")}, {storeAdd: mcTestPod("a", "9", "u2")}},
			want:  "9", wantEntry: "tombstone"}, // until the read finds the store newer
		{name: "stale store copy: tombstone kept, never returned",
			steps: []mcTestStep{{storeAdd: mcTestPod("a", "5", "u1")}, {deleted: mcTestPod("a", "8", "u1")}},
			want:  "5", wantEntry: "tombstone"},
		{name: "add after the delete clears the tombstone", includeAdds: true,
			steps: []mcTestStep{{deleted: mcTestPod("a", "8", "u1")}, {added: mcTestPod("a", "9", "u2")}, {mutation: mcTestPod("a", "10", "u1")}},
			want:  "10", wantEntry: "mutation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, indexer, _ := infTestMutationCache(t, tc.includeAdds)
			for _, s := range tc.steps {
				switch {
				case s.mutation != nil:
					c.Mutation(s.mutation)
				case s.added != nil:
					c.OnAddOrUpdate(s.added)
				case s.deleted != nil:
					c.OnDelete(s.deleted)
				case s.storeAdd != nil:
					if err := indexer.Add(s.storeAdd); err != nil {
						t.Fatal(err)
					}
				case s.storeDelete != nil:
					if err := indexer.Delete(s.storeDelete); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := mcTestEntry(c, "ns/a"); got != tc.wantEntry {
				t.Fatalf("remembered before the read: %s, want %s", got, tc.wantEntry)
			}
			obj, exists, err := c.GetByKey("ns/a")
			if err != nil {
				t.Fatal(err)
			}
			if got := infTestRV(obj, exists); got != tc.want {
				t.Fatalf("GetByKey = %s, want %s", got, tc.want)
			}
			objs, err := c.ByIndex(NamespaceIndex, "ns")
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if _, ok := o.(*v1.Pod); !ok {
					t.Fatalf("ByIndex returned %T", o)
				}
			}
		})
	}
}

// mcTestEntry says what c remembers for key.
func mcTestEntry(c *mutationCache, key string) string {
	v, ok := c.mutations.Get(key)
	switch {
	case !ok:
		return "none"
	case v == nil:
		return "nil"
	}
	if _, tomb := v.(*mutationTombstone); tomb {
		return "tombstone"
	}
	return "mutation"
}

// TestMutationCacheOptions: TTL on the injected clock, the defaults, and the size bound.
func TestMutationCacheOptions(t *testing.T) {
	cases := []struct {
		name      string
		opts      MutationCacheOptions
		mutations int
		advance   time.Duration
		wantKept  int // how many of the mutations GetByKey still returns
	}{
		{name: "default TTL keeps for 5 minutes", mutations: 3, advance: 5*time.Minute - time.Second, wantKept: 3},
		{name: "default TTL expires after 5 minutes", mutations: 3, advance: 5*time.Minute + time.Second, wantKept: 0},
		{name: "own TTL", opts: MutationCacheOptions{TTL: time.Second}, mutations: 3, advance: 2 * time.Second, wantKept: 0},
		{name: "default size is 100", mutations: 150, wantKept: 100},
		{name: "own size", opts: MutationCacheOptions{MaxCacheSize: 7}, mutations: 20, wantKept: 7},
		{name: "negative size means the default", opts: MutationCacheOptions{MaxCacheSize: -1}, mutations: 150, wantKept: 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			tc.opts.Clock, tc.opts.IncludeAdds = clk, true
			c := NewIntegerResourceVersionMutationCacheWithOptions(klog.Background(), NewStore(MetaNamespaceKeyFunc), tc.opts)
			for i := range tc.mutations {
				c.Mutation(mcTestPod(infTestKeyName(i), "1", "u"))
			}
			clk.Step(tc.advance)
			kept := 0
			for i := range tc.mutations {
				if _, ok, _ := c.GetByKey("ns/" + infTestKeyName(i)); ok {
					kept++
					if i < tc.mutations-tc.wantKept {
						t.Fatalf("kept %s, which is among the least recently used", infTestKeyName(i))
					}
				}
			}
			if kept != tc.wantKept {
				t.Fatalf("kept %d mutations, want %d", kept, tc.wantKept)
			}
		})
	}
}

func infTestKeyName(i int) string { return fmt.Sprintf("p%03d", i) }

// TestMutationCacheTombstoneExpires: a tombstone lasts for the TTL only.
func TestMutationCacheTombstoneExpires(t *testing.T) {
	c, _, clk := infTestMutationCache(t, true)
	c.OnDelete(mcTestPod("a", "8", "u1"))
	c.Mutation(mcTestPod("a", "9", "u1"))
	if _, ok, _ := c.GetByKey("ns/a"); ok {
		t.Fatal("mutation of a deleted object returned")
	}
	clk.Step(time.Minute + time.Second)
	c.Mutation(mcTestPod("a", "9", "u1"))
	if obj, ok, _ := c.GetByKey("ns/a"); infTestRV(obj, ok) != "9" {
		t.Fatalf("after the tombstone expired: %s", infTestRV(obj, ok))
	}
}

// TestMutationCacheNotificationsBadInput: objects without metadata or key are ignored.
func TestMutationCacheNotificationsBadInput(t *testing.T) {
	c, _, _ := infTestMutationCache(t, true)
	c.Mutation(mcTestPod("a", "7", "u1"))
	for _, obj := range []runtime.Object{nil, &v1.PodList{}, &runtime.Unknown{}} {
		c.OnAddOrUpdate(obj)
		c.OnDelete(obj)
	}
	if got := mcTestEntry(c, "ns/a"); got != "mutation" {
		t.Fatalf("after bad input: %s", got)
	}
	var _ MutationCache = c
}
