package checksum

import (
	"context"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kcache/cache/informers"
	fcache "github.com/kcache/cache/testing"
	"github.com/kcache/cache/workqueue"
)

// TestHandOverSecretAfterOwner is a hand-over in which the new member's ConfigMap informer
// delivers the owner before its Secret informer delivers the Secret: the first reconcile finds
// no Secret in the cache, its create meets AlreadyExists, and only the Secret's Add — the
// Secret entering the member's label selection — can bring the owner back. The controller
// must converge: the Secret ends up with the checksum of the ConfigMap's current data.
func TestHandOverSecretAfterOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const selector = "shard=new"
		yes := true
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "a", UID: "u1", Labels: map[string]string{"shard": "new"}},
			Data:       map[string]string{"k": "v2"},
		}
		// The previous member wrote the checksum of the data before the last change.
		stale := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: SecretName("a"), Labels: map[string]string{"shard": "old"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: "u1", Controller: &yes}}},
			Data: map[string][]byte{"sha256": []byte(Of(map[string]string{"k": "v1"}))},
		}
		server := fake.NewClientset(stale.DeepCopy())

		cmSource := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }})
		secretSource := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &corev1.SecretList{} }})
		cmSource.Add(cm)
		secretSource.Add(stale.DeepCopy())

		factory := informers.NewSharedInformerFactoryWithOptions(0,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
		cms := informers.For[*corev1.ConfigMap](factory, fcache.NewClient[*corev1.ConfigMapList](cmSource).Namespace)
		secrets := informers.For[*corev1.Secret](factory, fcache.NewClient[*corev1.SecretList](secretSource).Namespace)
		queue := workqueue.NewTyped[string]()
		// Stop in order, also when an assertion fails: the informers' context first, then the
		// queue and the factory, then the sources.
		defer func() {
			cancel()
			queue.ShutDown()
			factory.Shutdown()
			cmSource.Shutdown()
			secretSource.Shutdown()
			synctest.Wait()
		}()
		if _, err := cms.Informer().AddEventHandler(EnqueueKey(queue.Add)); err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.Informer().AddEventHandler(EnqueueOwner(queue.Add)); err != nil {
			t.Fatal(err)
		}
		var reconciles int
		go func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				reconciles++
				if err := ReconcileKey(ctx, server.CoreV1(), cms.Lister(), secrets.Lister(), key); err != nil {
					t.Errorf("reconcile %s: %v", key, err)
				}
				queue.Done(key)
			}
		}()
		factory.StartWithContext(ctx)
		synctest.Wait()

		// The owner arrived alone: its reconcile could not see the Secret.
		if reconciles != 1 {
			t.Fatalf("%d reconciles before the Secret arrived, want 1", reconciles)
		}
		if got := checksumOn(t, server); got == Of(cm.Data) {
			t.Fatal("the Secret is already up to date: the hand-over did not happen in the order under test")
		}

		// The Secret moves to the new member after its owner.
		moved := stale.DeepCopy()
		moved.Labels["shard"] = "new"
		secretSource.Modify(moved)
		synctest.Wait()
		if got := checksumOn(t, server); got != Of(cm.Data) {
			t.Fatalf("after the Secret reached the new member it holds %q, want the checksum of the current data %q", got, Of(cm.Data))
		}
	})
}

// checksumOn returns the checksum the server's Secret holds.
func checksumOn(t *testing.T, server *fake.Clientset) string {
	t.Helper()
	s, err := server.CoreV1().Secrets("demo").Get(context.Background(), SecretName("a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.StringData["sha256"]; ok {
		return v
	}
	return string(s.Data["sha256"])
}
