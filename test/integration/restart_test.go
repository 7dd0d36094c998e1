package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcache/cache"

	"github.com/kcache/cache/test/integration/framework"
)

// TestAPIServerRestart takes the informer's kube-apiserver down (killed, or stopped
// gracefully), changes ConfigMaps through a second kube-apiserver on the same etcd meanwhile,
// and starts the first one again on the same port and data. The informer must reconnect by
// itself and catch up: objects created or updated while it was away show up as adds and
// updates, objects deleted meanwhile as DeletedFinalStateUnknown tombstones (the restarted
// server cannot replay the events it never saw, so the informer relists).
func TestAPIServerRestart(t *testing.T) {
	if cluster == nil {
		t.Skip("needs the cluster's servers; not available in a child process")
	}
	ctx := context.Background()
	writer, err := cluster.StartAPIServer(ctx, "kube-apiserver-writer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(writer.Stop)
	cs := typedClient(t, conn)
	wcs := typedClient(t, writer)

	cases := []struct {
		name string
		down func(*framework.APIServer)
	}{
		{name: "killed", down: (*framework.APIServer).Kill},
		{name: "stopped gracefully", down: (*framework.APIServer).Stop},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Whatever happens below, the next test gets a running server.
			t.Cleanup(func() {
				if err := cluster.APIServer.Start(ctx); err != nil {
					t.Errorf("restart kube-apiserver: %v", err)
				}
			})
			ns := newNamespace(ctx, t, cs)
			createConfigMaps(ctx, t, cs, ns, 10, 4)
			cms := cs.ConfigMaps(ns)
			rec := newRecorder(
				func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return cms.List(ctx, o) },
				func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return cms.Watch(ctx, o) },
			)
			inf := cache.NewSharedIndexInformer(rec.ListWatch(), &corev1.ConfigMap{}, 0, cache.Indexers{})
			log := newHandlerLog()
			reg, err := inf.AddEventHandler(log.Handler())
			if err != nil {
				t.Fatal(err)
			}
			runInformer(ctx, t, inf)
			eventually(ctx, t, matchTimeout, "the handler to sync", reg.HasSynced)

			tc.down(cluster.APIServer)

			// want is the last notification each changed key must get.
			want := map[string]notification{}
			wcms := wcs.ConfigMaps(ns)
			for i := range 3 {
				cm, err := wcms.Create(ctx, configMap(fmt.Sprintf("new-%d", i), nil, "new"), metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want[ns+"/"+cm.Name] = notification{Kind: "add", UID: string(cm.UID), RV: cm.ResourceVersion}
			}
			for i := range 3 {
				name := fmt.Sprintf("cm-%05d", i)
				cm, err := wcms.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				old := cm.ResourceVersion
				cm.Data["value"] = "changed while the informer's server was down"
				if cm, err = wcms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				want[ns+"/"+name] = notification{Kind: "update", UID: string(cm.UID), RV: cm.ResourceVersion, OldRV: old}
			}
			for i := 3; i < 6; i++ {
				name := fmt.Sprintf("cm-%05d", i)
				cm, err := wcms.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := wcms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				want[ns+"/"+name] = notification{Kind: "delete", UID: string(cm.UID), RV: cm.ResourceVersion, Tombstone: true}
			}
			relists := rec.Relists()

			if err := cluster.APIServer.Start(ctx); err != nil {
				t.Fatal(err)
			}
			waitForMatch(ctx, t, inf.GetStore().List, func(ctx context.Context) (runtime.Object, error) {
				return cms.List(ctx, metav1.ListOptions{})
			})
			eventually(ctx, t, matchTimeout, "the handler to see every change", func() bool {
				for key, w := range want {
					got := log.For(key)
					if len(got) == 0 || got[len(got)-1].RV != w.RV {
						return false
					}
				}
				return true
			})
			for key, w := range want {
				got := log.For(key)
				if last := got[len(got)-1]; last != w {
					t.Errorf("%s: last notification %v, want %v (all: %s)", key, last, w, describe(got))
				}
			}
			if rec.Relists() == relists {
				t.Errorf("the informer caught up without relisting; expected the restarted server to answer 410 for the old resource version")
			}
		})
	}
}
