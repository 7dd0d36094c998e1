package integration

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
)

// TestWatchExpiry drops a Reflector's watch, changes objects and compacts etcd while the
// Reflector cannot reconnect, then lets it re-watch from its old resource version. Served from
// etcd (pod templates, see apiServerArgs), that version is gone: the server answers 410 and the
// Reflector must relist. Served from the watch cache (ConfigMaps), the server still has the
// events and replays them without a relist. Either way the cache must end up equal to the
// server's state.
func TestWatchExpiry(t *testing.T) {
	if cluster == nil {
		t.Skip("needs the cluster's etcd; not available in a child process")
	}
	ctx := context.Background()
	cs := typedClient(t, conn)
	dc := dynamicClient(t, conn)

	cases := []struct {
		name        string
		gvr         schema.GroupVersionResource
		noWatchList bool
		wantExpired bool
	}{
		{name: "pod templates from etcd, watch-list relist", gvr: podTemplatesGVR, wantExpired: true},
		{name: "pod templates from etcd, LIST relist", gvr: podTemplatesGVR, noWatchList: true, wantExpired: true},
		{name: "config maps from the watch cache", gvr: configMapsGVR},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(ctx, t, cs)
			ri := dc.Resource(tc.gvr).Namespace(ns)
			for i := range 5 {
				if _, err := ri.Create(ctx, newUnstructured(tc.gvr, fmt.Sprintf("obj-%d", i), nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			rec := dynamicRecorder(dc, tc.gvr, ns)
			var lw cache.ListerWatcher = rec.ListWatch()
			if tc.noWatchList {
				lw = cache.ToListWatcherWithWatchListSemantics(rec.ListWatch(), noWatchListSemantics{})
			}
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			r := cache.NewReflectorWithOptions(lw, expectedType(tc.gvr), store, cache.ReflectorOptions{Name: t.Name()})
			runReflector(t, r)
			serverList := func(ctx context.Context) (runtime.Object, error) { return ri.List(ctx, metav1.ListOptions{}) }
			waitForMatch(ctx, t, store.List, serverList)

			// One event on the open watch, so that closing it is an ordinary end of a watch.
			if err := touch(ctx, ri, "obj-0"); err != nil {
				t.Fatal(err)
			}
			waitForMatch(ctx, t, store.List, serverList)
			relists, expired := rec.Relists(), rec.Expired()

			rec.HoldWatches()
			if n := rec.DropWatches(); n != 1 {
				t.Fatalf("dropped %d open watches, want 1", n)
			}
			for i := 5; i < 7; i++ {
				if _, err := ri.Create(ctx, newUnstructured(tc.gvr, fmt.Sprintf("obj-%d", i), nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"obj-1", "obj-2"} {
				if err := touch(ctx, ri, name); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range []string{"obj-3", "obj-4"} {
				if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			rev, err := cluster.Etcd.Compact(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if last := parseRV(t, r.LastSyncResourceVersion()); uint64(rev) <= last {
				t.Fatalf("compacted at revision %d, not past the Reflector's %d", rev, last)
			}
			rec.ReleaseWatches()

			waitForMatch(ctx, t, store.List, serverList)
			gotExpired, gotRelists := rec.Expired()-expired, rec.Relists()-relists
			if tc.wantExpired && (gotExpired == 0 || gotRelists == 0) {
				t.Errorf("after compaction: %d 410 answers and %d relists, want at least one of each", gotExpired, gotRelists)
			}
			if !tc.wantExpired && (gotExpired != 0 || gotRelists != 0) {
				t.Errorf("after compaction: %d 410 answers and %d relists, want none (the watch cache still has the events)", gotExpired, gotRelists)
			}
		})
	}
}
