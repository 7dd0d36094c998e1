package cache

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fcache "github.com/kcache/cache/testing"
)

// infTestView is a handler that rebuilds the source's state (key → resource version) from the
// notifications it gets, and closes reached when it sees the sentinel object.
type infTestView struct {
	mu      sync.Mutex // mu guards objects
	objects map[string]string

	sentinel string
	reached  chan struct{}
	once     sync.Once
}

func newInfTestView(sentinel string) *infTestView {
	return &infTestView{objects: map[string]string{}, sentinel: sentinel, reached: make(chan struct{})}
}

func (v *infTestView) set(obj interface{}) {
	p := obj.(*v1.Pod)
	key := p.Namespace + "/" + p.Name
	v.mu.Lock()
	v.objects[key] = p.ResourceVersion
	v.mu.Unlock()
	if key == v.sentinel {
		v.once.Do(func() { close(v.reached) })
	}
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
func TestSharedInformerEndToEnd(t *testing.T) {
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
	const sentinel = "zzz/sentinel"
	inf := infTestNewInformer(src, 0)
	views := []*infTestView{newInfTestView(sentinel), newInfTestView(sentinel)}
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
	for i := 0; i < changes; i++ {
		if i == changes/2 {
			late := newInfTestView(sentinel)
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
		switch fault := rng.Intn(600); {
		case fault == 0: // the watch breaks; the reflector resumes from its resource version
			src.CloseWatches()
		case fault == 1: // the history is compacted away: the reflector must relist
			src.Compact(src.ResourceVersion())
			src.CloseWatches()
		case fault == 2: // the next watch fails
			src.FailWatches(1, fcache.InternalError())
			src.CloseWatches()
		}
	}
	// Force a final relist so that changes hidden from the watch are noticed, then add the
	// sentinel, which sorts after every other object.
	src.Compact(src.ResourceVersion())
	src.CloseWatches()
	src.Add(infTestPod("zzz", "sentinel", ""))

	want := infTestSourceState(t, src)
	for i, v := range views {
		infTestWaitClosed(t, v.reached, fmt.Sprintf("handler %d seeing the sentinel", i))
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
