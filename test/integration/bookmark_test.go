package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"
)

// bookmarkTimeout bounds the wait for a periodic bookmark: kube-apiserver sends one to each
// watcher about once a minute.
const bookmarkTimeout = 150 * time.Second

// TestBookmarksAdvanceIdleWatch watches a namespace in which nothing happens while ConfigMaps
// change elsewhere. The server's periodic bookmarks must move the Reflector's
// LastSyncResourceVersion past those changes without any event for the watched namespace, so
// that a reconnect would not start from an old resource version.
func TestBookmarksAdvanceIdleWatch(t *testing.T) {
	ctx := context.Background()
	cs := typedClient(t, conn)
	elsewhere := newNamespace(ctx, t, cs)

	cases := []struct {
		name        string
		noWatchList bool
	}{
		{name: "after a streaming watch-list"},
		{name: "after a LIST", noWatchList: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Both cases wait for the same once-a-minute bookmark; run them side by side.
			t.Parallel()
			ns := newNamespace(ctx, t, cs)
			createConfigMaps(ctx, t, cs, ns, 3, 3)
			cms := cs.ConfigMaps(ns)
			rec := newRecorder(
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return cms.List(ctx, o) },
				func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return cms.Watch(ctx, o) },
			)
			var lw cache.ListerWatcher = rec.ListWatch()
			if tc.noWatchList {
				lw = cache.ToListWatcherWithWatchListSemantics(rec.ListWatch(), noWatchListSemantics{})
			}
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			r := cache.NewReflectorWithOptions(lw, &corev1.ConfigMap{}, store, cache.ReflectorOptions{Name: t.Name()})
			runReflector(t, r)
			serverList := func(ctx context.Context) (runtime.Object, error) { return cms.List(ctx, metav1.ListOptions{}) }
			waitForMatch(ctx, t, store.List, serverList)
			eventually(ctx, t, matchTimeout, "the initial sync to set LastSyncResourceVersion", func() bool {
				return r.LastSyncResourceVersion() != ""
			})

			synced := parseRV(t, r.LastSyncResourceVersion())
			bookmarks := rec.Bookmarks()
			events := rec.Events(watch.Added) + rec.Events(watch.Modified) + rec.Events(watch.Deleted)
			other, err := cs.ConfigMaps(elsewhere).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "bump-"},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			target := parseRV(t, other.ResourceVersion)
			if target <= synced {
				t.Fatalf("write elsewhere got resource version %d, not past the synced %d", target, synced)
			}
			eventually(ctx, t, bookmarkTimeout, "a bookmark to advance LastSyncResourceVersion", func() bool {
				return parseRV(t, r.LastSyncResourceVersion()) >= target
			})

			if rec.Bookmarks() == bookmarks {
				t.Errorf("LastSyncResourceVersion advanced without a bookmark")
			}
			if got := rec.Events(watch.Added) + rec.Events(watch.Modified) + rec.Events(watch.Deleted); got != events {
				t.Errorf("the idle watch delivered %d object events", got-events)
			}
			waitForMatch(ctx, t, store.List, serverList)
		})
	}
}
