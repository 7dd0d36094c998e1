package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
)

const (
	// initialSyncObjects is how many objects of each resource the initial-sync tests list.
	initialSyncObjects = 3000
	// initialSyncPageSize is the Reflector's WatchListPageSize in those tests.
	initialSyncPageSize = 250
	// seededNamespaceEnv passes the seeded namespace to a child process.
	seededNamespaceEnv = "KCACHE_INTEGRATION_SEEDED_NAMESPACE"
)

// noWatchListSemantics is a client that declares it cannot serve watch-list requests, as
// client-go's fake clientset does; ToListWatcherWithWatchListSemantics passes that on.
type noWatchListSemantics struct{}

func (noWatchListSemantics) IsWatchListSemanticsUnSupported() bool { return true }

// TestInitialSync fills a cache from a namespace holding a few thousand objects through each
// of the Reflector's ways to get the initial state: the streaming watch-list (the default), and
// a LIST of WatchListPageSize pages when the ListerWatcher cannot do watch-list or the
// WatchListClient gate is off. ConfigMaps are served from the watch cache, which answers the
// Reflector's first LIST (resourceVersion=0) in one piece whatever the limit; pod templates
// are served from etcd, which pages.
func TestInitialSync(t *testing.T) {
	ctx := context.Background()
	dc := dynamicClient(t, conn)
	ns := os.Getenv(seededNamespaceEnv)
	if ns == "" {
		ns = newNamespace(ctx, t, typedClient(t, conn))
		for _, gvr := range []schema.GroupVersionResource{configMapsGVR, podTemplatesGVR} {
			ri := dc.Resource(gvr).Namespace(ns)
			createMany(ctx, t, initialSyncObjects, 16, func(ctx context.Context, i int) error {
				_, err := ri.Create(ctx, newUnstructured(gvr, fmt.Sprintf("obj-%05d", i), nil), metav1.CreateOptions{})
				return err
			})
		}
	}
	etcdPages := (initialSyncObjects + initialSyncPageSize - 1) / initialSyncPageSize

	cases := []struct {
		name string
		gvr  schema.GroupVersionResource
		// env, if set, runs the case in a child process with these variables.
		env map[string]string
		// noWatchList wraps the ListWatch so that it reports no watch-list support.
		noWatchList bool
		// wantPages is the number of LIST calls; 0 means a watch-list and no LIST at all.
		wantPages int
	}{
		{name: "config maps, streaming watch-list", gvr: configMapsGVR},
		{name: "pod templates, streaming watch-list", gvr: podTemplatesGVR},
		{name: "config maps, LIST when the ListerWatcher has no watch-list semantics", gvr: configMapsGVR, noWatchList: true, wantPages: 1},
		{name: "pod templates, LIST when the ListerWatcher has no watch-list semantics", gvr: podTemplatesGVR, noWatchList: true, wantPages: etcdPages},
		{
			name:      "pod templates, LIST when KUBE_FEATURE_WatchListClient=false",
			gvr:       podTemplatesGVR,
			env:       map[string]string{"KUBE_FEATURE_WatchListClient": "false"},
			wantPages: etcdPages,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != nil && !inChild() {
				env := map[string]string{seededNamespaceEnv: ns}
				for k, v := range tc.env {
					env[k] = v
				}
				runInChild(t, env)
				return
			}
			rec := dynamicRecorder(dc, tc.gvr, ns)
			var lw cache.ListerWatcher = rec.ListWatch()
			if tc.noWatchList {
				lw = cache.ToListWatcherWithWatchListSemantics(rec.ListWatch(), noWatchListSemantics{})
			}
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			r := cache.NewReflectorWithOptions(lw, expectedType(tc.gvr), store, cache.ReflectorOptions{Name: t.Name()})
			r.WatchListPageSize = initialSyncPageSize
			runReflector(t, r)

			ri := dc.Resource(tc.gvr).Namespace(ns)
			waitForMatch(ctx, t, store.List, func(ctx context.Context) (runtime.Object, error) {
				return ri.List(ctx, metav1.ListOptions{})
			})
			if got := len(store.List()); got != initialSyncObjects {
				t.Fatalf("cache holds %d objects, want %d", got, initialSyncObjects)
			}
			eventually(ctx, t, matchTimeout, "LastSyncResourceVersion to be set", func() bool {
				return r.LastSyncResourceVersion() != ""
			})
			lists, watches := rec.Lists(), rec.Watches()
			if len(watches) == 0 {
				t.Fatalf("no watch was opened")
			}
			if tc.wantPages == 0 {
				if len(lists) != 0 {
					t.Errorf("the watch-list path issued %d LIST calls, want none", len(lists))
				}
				first := watches[0]
				if !isWatchList(first) || first.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !first.AllowWatchBookmarks {
					t.Errorf("first watch = %+v, want sendInitialEvents=true, resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true", first)
				}
				return
			}
			for _, w := range watches {
				if isWatchList(w) {
					t.Errorf("watch %+v asked for initial events; the LIST path must not", w)
				}
			}
			if len(lists) != tc.wantPages {
				t.Errorf("initial sync took %d LIST calls, want %d", len(lists), tc.wantPages)
			}
			for i, l := range lists {
				if l.Limit != initialSyncPageSize {
					t.Errorf("LIST %d has limit %d, want WatchListPageSize %d", i, l.Limit, initialSyncPageSize)
				}
				if (i == 0) != (l.Continue == "") {
					t.Errorf("LIST %d has continue token %q; every page but the first needs one", i, l.Continue)
				}
			}
			if len(lists) > 0 && lists[0].ResourceVersion != "0" {
				t.Errorf("first LIST asked for resourceVersion %q, want \"0\" (any recent state)", lists[0].ResourceVersion)
			}
			listRVs := rec.ListResourceVersions()
			if got, want := watches[0].ResourceVersion, listRVs[len(listRVs)-1]; got != want {
				t.Errorf("first watch started at resourceVersion %q, want the list's %q", got, want)
			}
			if got := r.LastSyncResourceVersion(); strings.TrimSpace(got) == "" {
				t.Errorf("LastSyncResourceVersion is empty")
			}
		})
	}
}
