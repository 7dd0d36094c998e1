package cache

import (
	"fmt"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

func infTestMutationCache(t *testing.T, includeAdds bool, backing ...*v1.Pod) (*mutationCache, Indexer, *clocktesting.FakeClock) {
	t.Helper()
	indexer := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	for _, p := range backing {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	c := newMutationCache(klog.Background(), indexer, MutationCacheOptions{Indexer: indexer, TTL: time.Minute, IncludeAdds: includeAdds, Clock: clk})
	return c, indexer, clk
}

func infTestRV(obj interface{}, exists bool) string {
	if !exists {
		return "missing"
	}
	return obj.(*v1.Pod).ResourceVersion
}

func TestMutationCacheGetByKey(t *testing.T) {
	cases := []struct {
		name        string
		backing     []*v1.Pod
		mutations   []*v1.Pod
		includeAdds bool
		advance     time.Duration
		key         string
		want        string
	}{
		{name: "backing only", backing: []*v1.Pod{infTestPod("ns", "a", "5")}, key: "ns/a", want: "5"},
		{name: "newer mutation wins", backing: []*v1.Pod{infTestPod("ns", "a", "5")}, mutations: []*v1.Pod{infTestPod("ns", "a", "7")}, key: "ns/a", want: "7"},
		{name: "older mutation loses", backing: []*v1.Pod{infTestPod("ns", "a", "9")}, mutations: []*v1.Pod{infTestPod("ns", "a", "7")}, key: "ns/a", want: "9"},
		{name: "older mutation does not replace a newer one", backing: []*v1.Pod{infTestPod("ns", "a", "1")},
			mutations: []*v1.Pod{infTestPod("ns", "a", "8"), infTestPod("ns", "a", "6")}, key: "ns/a", want: "8"},
		{name: "mutation expires", backing: []*v1.Pod{infTestPod("ns", "a", "5")}, mutations: []*v1.Pod{infTestPod("ns", "a", "7")},
			advance: 2 * time.Minute, key: "ns/a", want: "5"},
		{name: "missing from backing without includeAdds", mutations: []*v1.Pod{infTestPod("ns", "a", "7")}, key: "ns/a", want: "missing"},
		{name: "missing from backing with includeAdds", mutations: []*v1.Pod{infTestPod("ns", "a", "7")}, includeAdds: true, key: "ns/a", want: "7"},
		{name: "non-integer resource version: backing wins", backing: []*v1.Pod{infTestPod("ns", "a", "x1")},
			mutations: []*v1.Pod{infTestPod("ns", "a", "7")}, key: "ns/a", want: "x1"},
		{name: "unknown key", key: "ns/zzz", want: "missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, clk := infTestMutationCache(t, tc.includeAdds, tc.backing...)
			for _, m := range tc.mutations {
				c.Mutation(m)
			}
			clk.Step(tc.advance)
			obj, exists, err := c.GetByKey(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if got := infTestRV(obj, exists); got != tc.want {
				t.Fatalf("GetByKey(%q) = %s, want %s", tc.key, got, tc.want)
			}
		})
	}
}

// TestMutationCacheForgetsOnceCaughtUp: once the store holds a version at least as new, the
// mutation is dropped, so a later older backing version is not masked.
func TestMutationCacheForgetsOnceCaughtUp(t *testing.T) {
	c, indexer, _ := infTestMutationCache(t, false, infTestPod("ns", "a", "5"))
	c.Mutation(infTestPod("ns", "a", "7"))
	if err := indexer.Update(infTestPod("ns", "a", "7")); err != nil {
		t.Fatal(err)
	}
	if obj, ok, _ := c.GetByKey("ns/a"); infTestRV(obj, ok) != "7" {
		t.Fatalf("got %s", infTestRV(obj, ok))
	}
	if _, ok := c.mutations.Get("ns/a"); ok {
		t.Fatal("mutation kept after the store caught up")
	}
}

func TestMutationCacheMutationBadInput(t *testing.T) {
	c, _, _ := infTestMutationCache(t, true)
	c.Mutation("not an object") // reported, ignored
	c.Mutation(nil)
	if n := len(c.mutations.Keys()); n != 0 {
		t.Fatalf("%d mutations remembered from bad input", n)
	}
}

func TestMutationCacheByIndex(t *testing.T) {
	cases := []struct {
		name        string
		includeAdds bool
		noIndexer   bool
		index       string
		want        []string
		wantErr     bool
	}{
		{name: "newer versions of indexed objects", index: NamespaceIndex, want: []string{"a@7", "b@2"}},
		{name: "with adds", includeAdds: true, index: NamespaceIndex, want: []string{"a@7", "b@2", "c@1"}},
		{name: "unknown index", index: "nope", wantErr: true},
		{name: "no indexer", noIndexer: true, index: NamespaceIndex, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := infTestMutationCache(t, tc.includeAdds, infTestPod("ns", "a", "5"), infTestPod("ns", "b", "2"), infTestPod("other", "d", "1"))
			if tc.noIndexer {
				c.indexer = nil
			}
			c.Mutation(infTestPod("ns", "a", "7"))
			c.Mutation(infTestPod("ns", "c", "1"))
			c.Mutation(infTestPod("other", "e", "1"))
			objs, err := c.ByIndex(tc.index, "ns")
			if (err != nil) != tc.wantErr {
				t.Fatalf("ByIndex error = %v, wantErr %v", err, tc.wantErr)
			}
			var got []string
			for _, o := range objs {
				p := o.(*v1.Pod)
				got = append(got, fmt.Sprintf("%s@%s", p.Name, p.ResourceVersion))
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("ByIndex = %v, want %v", got, tc.want)
			}
		})
	}
}
