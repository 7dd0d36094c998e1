package cache

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fcache "github.com/kcache/cache/testing"
)

// infTestView is a handler that rebuilds the source's state (key → resource version) from the
// notifications it gets, and lets a test wait until it has seen a given key.
type infTestView struct {
	mu      sync.Mutex // mu guards objects and waiters
	objects map[string]string
	waiters map[string][]chan struct{}
}

func newInfTestView() *infTestView {
	return &infTestView{objects: map[string]string{}, waiters: map[string][]chan struct{}{}}
}

func (v *infTestView) set(obj interface{}) {
	p := obj.(*v1.Pod)
	key := p.Namespace + "/" + p.Name
	v.mu.Lock()
	defer v.mu.Unlock()
	v.objects[key] = p.ResourceVersion
	for _, ch := range v.waiters[key] {
		close(ch)
	}
	delete(v.waiters, key)
}

// seen returns a channel that is closed once the view has had key.
func (v *infTestView) seen(key string) <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	ch := make(chan struct{})
	if _, ok := v.objects[key]; ok {
		close(ch)
		return ch
	}
	v.waiters[key] = append(v.waiters[key], ch)
	return ch
}

func (v *infTestView) OnAdd(obj interface{}, _ bool) { v.set(obj) }
func (v *infTestView) OnUpdate(_, obj interface{})   { v.set(obj) }
func (v *infTestView) OnDelete(obj interface{}) {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		panic(err)
	}
	v.mu.Lock()
	delete(v.objects, key)
	v.mu.Unlock()
}

func (v *infTestView) snapshot() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]string, len(v.objects))
	for k, rv := range v.objects {
		out[k] = rv
	}
	return out
}

// infTestSourceState lists the source and maps key → resource version.
func infTestSourceState(t *testing.T, src *fcache.FakeControllerSource) map[string]string {
	t.Helper()
	list, err := src.List(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.(*v1.PodList).Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}

func infTestStoreState(store Store) map[string]string {
	out := map[string]string{}
	for _, o := range store.List() {
		p := o.(*v1.Pod)
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}

func infTestDiff(a, b map[string]string) string {
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q vs %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing vs %q", k, v))
		}
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("... %d more", len(diffs)-5))
	}
	return fmt.Sprint(diffs)
}

// TestSharedInformerEndToEnd: 10k objects, three handlers (one added late), random adds,
// updates and deletes mixed with broken watches, error events, changes hidden from the watch
// and compactions that force relists. Afterwards every handler's rebuilt view and the indexer
// equal the source exactly.
//
// It runs in a synctest bubble: the reflector's backoff after each failure grows to tens of
// seconds, which the bubble's fake time skips.
func TestSharedInformerEndToEnd(t *testing.T) {
	synctest.Test(t, infTestEndToEnd)
}

func infTestEndToEnd(t *testing.T) {
	const (
		initial = 10000
		changes = 6000
	)
	rng := rand.New(rand.NewSource(42))
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	names := make([]string, 0, initial)
	for i := 0; i < initial; i++ {
		name := fmt.Sprintf("pod-%05d", i)
		names = append(names, name)
		src.Add(infTestPod(fmt.Sprintf("ns-%d", i%7), name, ""))
	}
	nsOf := func(name string) string {
		var i int
		fmt.Sscanf(name, "pod-%05d", &i)
		return fmt.Sprintf("ns-%d", i%7)
	}
	inf := infTestNewInformer(src, 0)
	views := []*infTestView{newInfTestView(), newInfTestView()}
	for _, v := range views {
		if _, err := inf.AddEventHandler(v); err != nil {
			t.Fatal(err)
		}
	}
	infTestRun(t, inf)
	infTestWaitSynced(t, inf)

	live := map[string]bool{}
	for _, n := range names {
		live[n] = true
	}
	next := initial
	// waitAll waits until every view has seen key.
	// The timeout is in the bubble's fake time and covers the reflector's longest backoff.
	waitAll := func(key string) {
		for j, v := range views {
			select {
			case <-v.seen(key):
			case <-time.After(5 * time.Minute):
				t.Fatalf("handler %d did not see %s", j, key)
			}
		}
	}
	faults := 0
	for i := 0; i < changes; i++ {
		if i == changes/2 {
			late := newInfTestView()
			if _, err := inf.AddEventHandler(late); err != nil {
				t.Fatal(err)
			}
			views = append(views, late)
		}
		name := names[rng.Intn(len(names))]
		hidden := rng.Intn(20) == 0
		switch op := rng.Intn(10); {
		case op < 2: // add
			name = fmt.Sprintf("pod-%05d", next)
			next++
			names = append(names, name)
			live[name] = true
			src.Add(infTestPod(nsOf(name), name, ""))
		case op < 4 && live[name]: // delete
			live[name] = false
			if hidden {
				src.DeleteDropWatch(infTestPod(nsOf(name), name, ""))
			} else {
				src.Delete(infTestPod(nsOf(name), name, ""))
			}
		case live[name]: // update
			p := infTestPod(nsOf(name), name, "")
			p.Labels = map[string]string{"gen": fmt.Sprint(i)}
			if hidden {
				src.ModifyDropWatch(p)
			} else {
				src.Modify(p)
			}
		}
		if i%600 != 599 {
			continue
		}
		// Once the informer has caught up (its watch is open), inject a fault.
		marker := fmt.Sprintf("m%04d", i)
		src.Add(infTestPod("markers", marker, ""))
		waitAll("markers/" + marker)
		switch faults % 4 {
		case 0: // the watch breaks; the reflector resumes from its resource version
			src.CloseWatches()
		case 1: // the history is compacted away: the reflector must relist
			src.Compact(src.ResourceVersion())
			src.CloseWatches()
		case 2: // the server reports an error on the open watch
			src.InjectError(fcache.InternalError())
		case 3: // the watch breaks and the next one fails
			src.FailWatches(1, fcache.InternalError())
			src.CloseWatches()
		}
		faults++
	}
	// Force a final relist so that changes hidden from the watch are noticed, then add the
	// sentinel, which sorts after every other object.
	src.Compact(src.ResourceVersion())
	src.CloseWatches()
	src.Add(infTestPod("zzz", "sentinel", ""))

	want := infTestSourceState(t, src)
	waitAll("zzz/sentinel")
	// The faults must really have made the informer list again, not only resume watches.
	fullLists := 0
	for _, r := range src.Requests() {
		if r.Verb == fcache.VerbList || (r.Options.SendInitialEvents != nil && *r.Options.SendInitialEvents) {
			fullLists++
		}
	}
	if fullLists < 6 {
		t.Fatalf("only %d full lists; the faults did not force relists", fullLists)
	}
	t.Logf("%d full lists, %d requests in all", fullLists, len(src.Requests()))
	for i, v := range views {
		if got := v.snapshot(); infTestDiff(got, want) != "[]" {
			t.Errorf("handler %d view differs from the source: %s", i, infTestDiff(got, want))
		}
	}
	if got := infTestStoreState(inf.GetStore()); infTestDiff(got, want) != "[]" {
		t.Errorf("indexer differs from the source: %s", infTestDiff(got, want))
	}
	for ns := 0; ns < 7; ns++ {
		name := fmt.Sprintf("ns-%d", ns)
		objs, err := inf.GetIndexer().ByIndex(NamespaceIndex, name)
		if err != nil {
			t.Fatal(err)
		}
		wantN := 0
		for k := range want {
			if len(k) > len(name) && k[:len(name)+1] == name+"/" {
				wantN++
			}
		}
		if len(objs) != wantN {
			t.Errorf("namespace index %s: %d objects, want %d", name, len(objs), wantN)
		}
	}
}
