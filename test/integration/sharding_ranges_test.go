package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kcache/cache/sharding"
)

// TestShardSelectorRanges checks sharding's hash ranges against a real kube-apiserver with
// ShardedListAndWatch: the server reports that it applies shard selectors, and the selectors
// of three members' ranges (HashRanges, ShardSelector) list and watch disjoint sets of config
// maps that together are all of them, each object with the member whose ranges hold the hash
// of its UID as sharding computes it (HashKey).
func TestShardSelectorRanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := conn.Config()
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(ctx, t, client.CoreV1())
	if ok, err := sharding.ServerShardSelection(ctx, dyn, configMapsResource, ns); err != nil || !ok {
		t.Fatalf("ServerShardSelection = %v, %v; the server runs with ShardedListAndWatch", ok, err)
	}
	members := []string{"member-a", "member-b", "member-c"}
	ranges := sharding.HashRanges(members)
	selectors := map[string]string{}
	for _, m := range members {
		if selectors[m], err = sharding.ShardSelector(sharding.FieldUID, ranges[m]); err != nil {
			t.Fatal(err)
		}
	}
	ownerOf := func(cm *corev1.ConfigMap) string {
		for _, m := range members {
			if sharding.InRanges(sharding.HashKey(string(cm.UID)), ranges[m]) {
				return m
			}
		}
		return ""
	}
	create := func(name string) *corev1.ConfigMap {
		cm, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	all := map[string]string{} // name → member
	for i := range 60 {
		cm := create(fmt.Sprintf("cm-%d", i))
		all[cm.Name] = ownerOf(cm)
	}

	// Each member's LIST holds exactly its objects.
	seen := map[string]string{}
	var rv string
	for _, m := range members {
		list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{ShardSelector: selectors[m]})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if list.ShardInfo == nil || list.ShardInfo.Selector == "" {
			t.Fatalf("%s: the list does not say it is a shard: %+v", m, list.ListMeta)
		}
		rv = list.ResourceVersion
		for _, cm := range list.Items {
			if prev, dup := seen[cm.Name]; dup {
				t.Fatalf("%s listed for %s and %s", cm.Name, prev, m)
			}
			seen[cm.Name] = m
			if want := all[cm.Name]; want != m {
				t.Fatalf("%s listed for %s; its UID's hash is in %s's ranges", cm.Name, m, want)
			}
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("the members' lists hold %d of %d config maps", len(seen), len(all))
	}

	// A member's WATCH delivers exactly the new objects in its ranges.
	w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ShardSelector: selectors["member-a"], ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var want []string
	for i := range 30 {
		cm := create(fmt.Sprintf("new-%d", i))
		if ownerOf(cm) == "member-a" {
			want = append(want, cm.Name)
		}
	}
	// A marker in member-a's ranges ends the watch's expected events.
	var marker string
	for i := 0; marker == ""; i++ {
		cm := create(fmt.Sprintf("marker-%d", i))
		if ownerOf(cm) == "member-a" {
			marker = cm.Name
		}
	}
	var got []string
	for done := false; !done; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch closed")
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if ev.Type != watch.Added || !isCM {
				t.Fatalf("unexpected event %s %T", ev.Type, ev.Object)
			}
			if ownerOf(cm) != "member-a" {
				t.Fatalf("member-a's watch delivered %s, whose hash is in %s's ranges", cm.Name, ownerOf(cm))
			}
			if cm.Name == marker {
				done = true
			} else if !slices.Contains(got, cm.Name) && len(cm.Name) > 4 && cm.Name[:4] == "new-" {
				got = append(got, cm.Name)
			}
		case <-ctx.Done():
			t.Fatalf("member-a's watch delivered %v of %v before the deadline", got, want)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("member-a's watch delivered %v, want %v", got, want)
	}
}
