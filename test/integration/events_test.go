package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kcache/cache"
)

// TestInformerEventsInOrder writes to many ConfigMaps at once while a SharedIndexInformer
// watches them, and checks that its handler sees, per key, exactly the server's sequence of
// writes: every create, update and delete, in order, with the resource versions the server
// returned, and old objects that chain from one update to the next. A second handler joins
// while the writes are under way: it must see a consistent history too, starting from the
// informer's state when it joined, and end with the server's state.
func TestInformerEventsInOrder(t *testing.T) {
	ctx := context.Background()
	cs := typedClient(t, conn)
	ns := newNamespace(ctx, t, cs)
	cms := cs.ConfigMaps(ns)

	const preexisting = 10
	createConfigMaps(ctx, t, cs, ns, preexisting, 4)
	before, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]notification{}
	for _, cm := range before.Items {
		key := ns + "/" + cm.Name
		want[key] = []notification{{Kind: "add", UID: string(cm.UID), RV: cm.ResourceVersion, Initial: true}}
	}

	rec := newRecorder(
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return cms.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return cms.Watch(ctx, o) },
	)
	inf := cache.NewSharedIndexInformer(rec.ListWatch(), &corev1.ConfigMap{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
	})
	log := newHandlerLog()
	reg, err := inf.AddEventHandler(log.Handler())
	if err != nil {
		t.Fatal(err)
	}
	runInformer(ctx, t, inf)
	eventually(ctx, t, matchTimeout, "the handler to sync", reg.HasSynced)

	// Each script runs in its own goroutine, all at once: writes to different keys interleave
	// on the server, writes to one key are ordered.
	type script struct {
		name string
		ops  []string
	}
	var scripts []script
	for i := range 40 {
		scripts = append(scripts, script{fmt.Sprintf("live-%02d", i), []string{
			"create", "update", "update", "update", "update", "update", "update", "delete",
			"create", "update", "update", "update",
		}})
	}
	for i := range 5 {
		scripts = append(scripts, script{fmt.Sprintf("cm-%05d", i), []string{"update", "delete"}})
	}
	var (
		mu      sync.Mutex
		errs    []error
		wg      sync.WaitGroup
		lateLog = newHandlerLog()
		lateReg cache.ResourceEventHandlerRegistration
	)
	for _, s := range scripts {
		key := ns + "/" + s.name
		mu.Lock()
		prior := want[key]
		mu.Unlock()
		wg.Go(func() {
			got, err := runScript(ctx, cs, ns, s.name, s.ops, prior)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			want[key] = got
		})
	}
	// Join while the scripts run.
	lateReg, err = inf.AddEventHandler(lateLog.Handler())
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, err := range errs {
		t.Fatal(err)
	}

	waitForMatch(ctx, t, inf.GetStore().List, func(ctx context.Context) (runtime.Object, error) {
		return cms.List(ctx, metav1.ListOptions{})
	})
	eventually(ctx, t, 30*time.Second, "every notification", func() bool {
		for key, w := range want {
			if len(log.For(key)) < len(w) {
				return false
			}
		}
		return true
	})
	if errs := log.Errs(); len(errs) > 0 {
		t.Errorf("handler got unusable objects: %v", errs)
	}
	if got := log.Keys(); got != len(want) {
		t.Errorf("handler got notifications for %d keys, want %d", got, len(want))
	}
	for key, w := range want {
		checkSequence(t, key, log.For(key), w)
	}
	eventually(ctx, t, matchTimeout, "the late handler to sync", lateReg.HasSynced)
	final, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkLateHistory(t, lateLog, want, final)
	indexed, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(indexed) != len(final.Items) {
		t.Errorf("namespace index holds %d objects, server %d", len(indexed), len(final.Items))
	}
	if n := rec.Relists(); n != 1 {
		t.Errorf("the informer fetched the full state %d times, want once (no relist while watching)", n)
	}
}

// runScript applies ops to ConfigMap name and returns the notifications a handler should see
// for them, appended to prior (what the key had before). Deletes carry no resource version: the
// server does not return one from DELETE.
func runScript(ctx context.Context, cs corev1client.CoreV1Interface, ns, name string, ops []string, prior []notification) ([]notification, error) {
	cms := cs.ConfigMaps(ns)
	want := append([]notification(nil), prior...)
	var cur *corev1.ConfigMap
	if len(prior) > 0 {
		last := prior[len(prior)-1]
		var err error
		if cur, err = cms.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("get %s: %w", name, err)
		}
		if cur.ResourceVersion != last.RV {
			return nil, fmt.Errorf("%s changed behind the test's back", name)
		}
	}
	for i, op := range ops {
		var err error
		switch op {
		case "create":
			if cur, err = cms.Create(ctx, configMap(name, nil, "0"), metav1.CreateOptions{}); err == nil {
				want = append(want, notification{Kind: "add", UID: string(cur.UID), RV: cur.ResourceVersion})
			}
		case "update":
			next := cur.DeepCopy()
			next.Data["value"] = fmt.Sprint(i)
			old := cur.ResourceVersion
			if cur, err = cms.Update(ctx, next, metav1.UpdateOptions{}); err == nil {
				want = append(want, notification{Kind: "update", UID: string(cur.UID), RV: cur.ResourceVersion, OldRV: old})
			}
		case "delete":
			if err = cms.Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
				want = append(want, notification{Kind: "delete", UID: string(cur.UID)})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", op, ns, name, err)
		}
	}
	return want, nil
}

// checkSequence compares what a handler got for key with what the server did. A delete's
// resource version is only known to be newer than the key's previous one.
func checkSequence(t *testing.T, key string, got, want []notification) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		g, w := got[i], want[i]
		switch {
		case g.Kind != w.Kind, g.UID != w.UID, g.Initial != w.Initial, g.Tombstone != w.Tombstone:
			ok = false
		case w.Kind == "delete":
			ok = i > 0 && parseRV(t, g.RV) > parseRV(t, got[i-1].RV)
		default:
			ok = g.RV == w.RV && g.OldRV == w.OldRV
		}
	}
	if !ok {
		t.Errorf("%s: handler got %s, server did %s", key, describe(got), describe(want))
	}
}

// checkLateHistory checks what a handler that joined mid-stream got: for every key, a suffix of
// the key's full history (want) that starts with an add (of the state when it joined) and ends
// in the server's final state (the last notification matches final, or is a delete for keys
// that are gone).
func checkLateHistory(t *testing.T, late *handlerLog, want map[string][]notification, final *corev1.ConfigMapList) {
	t.Helper()
	finalRV := map[string]string{}
	for _, cm := range final.Items {
		finalRV[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	for key, history := range want {
		got := late.For(key)
		if len(got) == 0 {
			if _, exists := finalRV[key]; exists {
				t.Errorf("%s: the late handler never heard of an object that exists", key)
			}
			continue
		}
		if got[0].Kind != "add" {
			t.Errorf("%s: the late handler's first notification is %v, want an add", key, got[0])
			continue
		}
		last := got[len(got)-1]
		if rv, exists := finalRV[key]; exists != (last.Kind != "delete") || (exists && last.RV != rv) {
			t.Errorf("%s: the late handler ended with %v; the server has resource version %q", key, last, rv)
		}
		// Every notification after the first must repeat the full history's next steps.
		start := -1
		for i, n := range history {
			if n.UID == got[0].UID && n.RV == got[0].RV {
				start = i
			}
		}
		if start < 0 {
			t.Errorf("%s: the late handler started from %v, which the server never wrote (history %s)", key, got[0], describe(history))
			continue
		}
		rest := got[1:]
		expect := history[start+1:]
		if len(rest) != len(expect) {
			t.Errorf("%s: after joining the late handler got %s, want %s", key, describe(rest), describe(expect))
			continue
		}
		for i := range rest {
			if rest[i].Kind != expect[i].Kind || rest[i].UID != expect[i].UID || (expect[i].RV != "" && rest[i].RV != expect[i].RV) {
				t.Errorf("%s: after joining the late handler got %s, want %s", key, describe(rest), describe(expect))
				break
			}
		}
	}
}
