package cache_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cache "github.com/kcache/cache"
)

// TestTypedInformerDeliversTypedObjects: a typed handler gets the informer's objects as T for
// the initial list, adds, updates and real deletes, for namespaced and cluster-scoped types.
func TestTypedInformerDeliversTypedObjects(t *testing.T) {
	t.Run("namespaced", func(t *testing.T) {
		src := typedTestSource(func() runtime.Object { return &v1.PodList{} }, typedTestPod("ns", "a"))
		inf := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
		rec := newTypedRecorder[*v1.Pod]()
		reg, err := inf.AddTypedEventHandler(rec)
		if err != nil {
			t.Fatal(err)
		}
		typedTestRun(t, inf)
		typedTestWaitSynced(t, inf, reg)

		changed := typedTestPod("ns", "a")
		changed.Labels = map[string]string{"app": "web"}
		src.Modify(changed)
		src.Add(typedTestPod("ns", "b"))
		src.Delete(typedTestPod("ns", "b"))

		add := rec.next(t)
		if add.kind != "add" || !add.initial || add.obj.Name != "a" {
			t.Fatalf("first event %v, want the initial add of a", add)
		}
		update := rec.next(t)
		if update.kind != "update" || update.old.Labels != nil || update.obj.Labels["app"] != "web" {
			t.Fatalf("second event %v (old labels %v, new labels %v), want the label update", update, update.old.Labels, update.obj.Labels)
		}
		if got := rec.nextStrings(t, 2); fmt.Sprint(got) != "[add ns/b delete ns/b]" {
			t.Fatalf("then %v", got)
		}
	})
	t.Run("cluster-scoped", func(t *testing.T) {
		src := typedTestSource(func() runtime.Object { return &v1.NodeList{} }, typedTestNode("n1"))
		inf := cache.NewTypedSharedIndexInformer[*v1.Node](cache.NewSharedIndexInformer(src, &v1.Node{}, 0, cache.Indexers{}))
		rec := newTypedRecorder[*v1.Node]()
		reg, _ := inf.AddTypedEventHandler(rec)
		typedTestRun(t, inf)
		typedTestWaitSynced(t, inf, reg)
		src.Delete(typedTestNode("n1"))
		if got := rec.nextStrings(t, 2); fmt.Sprint(got) != "[add n1 initial delete n1]" {
			t.Fatalf("events %v", got)
		}
	})
}

// deleteSummary is what a test reads from a DeletedObject.
type deleteSummary struct {
	key, namespace, name, objectName string
	tombstone, hasObject             bool
}

func summarize[T cache.Object](d cache.DeletedObject[T]) deleteSummary {
	var zero T
	return deleteSummary{
		key: d.GetKey(), namespace: d.GetNamespace(), name: d.GetName(), objectName: d.GetObjectName().String(),
		tombstone: d.FinalStateUnknown != nil, hasObject: d.OptionalObj != zero,
	}
}

// typedTestDelete runs a typed informer of T over a source holding obj, deletes obj (on the
// watch, or while the watch is down so that the relist finds it gone) and returns what the
// handler's OnDelete got.
func typedTestDelete[T cache.Object](t *testing.T, newList func() runtime.Object, example, obj runtime.Object, relist bool) deleteSummary {
	src := typedTestSource(newList, obj)
	inf := cache.NewTypedSharedIndexInformer[T](cache.NewSharedIndexInformer(src, example, 0, cache.Indexers{}))
	rec := newTypedRecorder[T]()
	reg, err := inf.AddTypedEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	typedTestRun(t, inf)
	typedTestWaitSynced(t, inf, reg)
	if add := rec.next(t); add.kind != "add" {
		t.Fatalf("first event %v, want the initial add", add)
	}
	if relist {
		src.DeleteDropWatch(obj)
		// The watch breaks and cannot resume: the history it would resume from is gone.
		src.Compact(src.ResourceVersion())
		src.CloseWatches()
	} else {
		src.Delete(obj)
	}
	e := rec.next(t)
	if e.kind != "delete" {
		t.Fatalf("event %v, want a delete", e)
	}
	return summarize(e.deleted)
}

// TestTypedInformerDeletes: a deletion seen on the watch and one detected on a relist both
// reach OnDelete, with the key, name and namespace of the deleted object, for namespaced and
// cluster-scoped objects. A relist tombstone carries the last known object.
func TestTypedInformerDeletes(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T) deleteSummary
		want deleteSummary
	}{
		{"watched delete, namespaced", func(t *testing.T) deleteSummary {
			return typedTestDelete[*v1.Pod](t, podList, &v1.Pod{}, typedTestPod("ns", "a"), false)
		}, deleteSummary{key: "ns/a", namespace: "ns", name: "a", objectName: "ns/a", hasObject: true}},
		{"relist tombstone, namespaced", func(t *testing.T) deleteSummary {
			return typedTestDelete[*v1.Pod](t, podList, &v1.Pod{}, typedTestPod("ns", "a"), true)
		}, deleteSummary{key: "ns/a", namespace: "ns", name: "a", objectName: "ns/a", hasObject: true, tombstone: true}},
		{"watched delete, cluster-scoped", func(t *testing.T) deleteSummary {
			return typedTestDelete[*v1.Node](t, nodeList, &v1.Node{}, typedTestNode("n1"), false)
		}, deleteSummary{key: "n1", name: "n1", objectName: "n1", hasObject: true}},
		{"relist tombstone, cluster-scoped", func(t *testing.T) deleteSummary {
			return typedTestDelete[*v1.Node](t, nodeList, &v1.Node{}, typedTestNode("n1"), true)
		}, deleteSummary{key: "n1", name: "n1", objectName: "n1", hasObject: true, tombstone: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// In a synctest bubble: after the broken watch the reflector waits its backoff
			// before relisting, which fake time skips.
			synctest.Test(t, func(t *testing.T) {
				if got := tc.run(t); got != tc.want {
					t.Fatalf("OnDelete got %+v, want %+v", got, tc.want)
				}
			})
		})
	}
}

func podList() runtime.Object  { return &v1.PodList{} }
func nodeList() runtime.Object { return &v1.NodeList{} }

// TestAddTypedEventHandlerOptions: zero options and one option register the handler (one
// option's Logger is the handler's logger), two options are an error and register nothing.
func TestAddTypedEventHandlerOptions(t *testing.T) {
	errs := typedTestCaptureErrors(t, true)
	logger, lines := typedTestLogger()
	src := typedTestSource(podList, typedTestPod("ns", "a"))
	untyped := cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{})
	inf := cache.NewTypedSharedIndexInformer[*v1.Pod](untyped)
	// A second view of the same informer with the wrong type, to make its handlers log.
	wrong := cache.NewTypedSharedIndexInformer[*v1.ConfigMap](untyped)

	none := newTypedRecorder[*v1.Pod]()
	regNone, err := inf.AddTypedEventHandler(none)
	if err != nil || regNone == nil {
		t.Fatalf("no options: %v, %v", regNone, err)
	}
	one := newTypedRecorder[*v1.Pod]()
	regOne, err := inf.AddTypedEventHandler(one, cache.HandlerOptions{})
	if err != nil || regOne == nil {
		t.Fatalf("one option: %v, %v", regOne, err)
	}
	regLogged, err := wrong.AddTypedEventHandler(newTypedRecorder[*v1.ConfigMap](), cache.HandlerOptions{Logger: &logger})
	if err != nil {
		t.Fatalf("one option with a logger: %v", err)
	}
	two := newTypedRecorder[*v1.Pod]()
	regTwo, err := inf.AddTypedEventHandler(two, cache.HandlerOptions{}, cache.HandlerOptions{})
	if err == nil || regTwo != nil || !strings.Contains(err.Error(), "at most one HandlerOptions, got 2") {
		t.Fatalf("two options: %v, %v", regTwo, err)
	}
	if _, err := inf.AddTypedEventHandler(nil); err == nil {
		t.Fatal("nil handler accepted")
	}

	typedTestRun(t, inf)
	typedTestWaitSynced(t, inf, regNone, regOne, regLogged)
	for name, rec := range map[string]*typedRecorder[*v1.Pod]{"no options": none, "one option": one} {
		if got := rec.next(t).String(); got != "add ns/a initial" {
			t.Errorf("%s: got %q", name, got)
		}
	}
	nextError(t, errs)
	select {
	case line := <-lines:
		if !strings.Contains(line, "cache: skipping a notification of the wrong type") {
			t.Errorf("handler's logger got %q", line)
		}
	case <-time.After(typedTestTimeout):
		t.Error("nothing logged through the handler's logger")
	}
	// The handler of the rejected call was never registered: it saw nothing, while the
	// others saw the add.
	if len(two.events) != 0 {
		t.Errorf("handler of the rejected call got %v", <-two.events)
	}
}

// TestTypedFilteringHandlerInInformer runs the filtering handler behind a real informer: an
// object entering the filter is an add, leaving it is a delete, and nothing else passes.
func TestTypedFilteringHandlerInInformer(t *testing.T) {
	src := typedTestSource(podList, typedTestPod("ns", "in"), typedTestPod("ns", "out"))
	inf := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
	rec := newTypedRecorder[*v1.Pod]()
	reg, _ := inf.AddTypedEventHandler(cache.TypedFilteringResourceEventHandler[*v1.Pod]{
		FilterFunc: func(p *v1.Pod) bool { return p != nil && p.Labels["keep"] == "yes" || p != nil && p.Name == "in" },
		Handler:    rec,
	})
	typedTestRun(t, inf)
	typedTestWaitSynced(t, inf, reg)
	enter := typedTestPod("ns", "out")
	enter.Labels = map[string]string{"keep": "yes"}
	src.Modify(enter)
	src.Modify(typedTestPod("ns", "out")) // leaves again
	src.Add(typedTestPod("ns", "never"))
	src.Delete(typedTestPod("ns", "never"))
	src.Delete(typedTestPod("ns", "in"))
	want := "[add ns/in initial add ns/out delete ns/out delete ns/in]"
	if got := rec.nextStrings(t, 4); fmt.Sprint(got) != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}

// TestTypedHandlerName: the sync tracker (and so logs and traces) of a typed handler carry the
// user's handler name, not the adapter's.
func TestTypedHandlerName(t *testing.T) {
	inf := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(typedTestSource(podList), &v1.Pod{}, 0, cache.Indexers{}))
	reg, err := inf.AddTypedEventHandler(newTypedRecorder[*v1.Pod]())
	if err != nil {
		t.Fatal(err)
	}
	want := "SharedIndexInformer *v1.Pod + event handler github.com/kcache/cache_test.typedRecorder[*k8s.io/api/core/v1.Pod]"
	if got := reg.HasSyncedChecker().Name(); got != want {
		t.Fatalf("checker name %q, want %q", got, want)
	}
}

// byPhase indexes pods by their phase.
func byPhase(p *v1.Pod) ([]string, error) { return []string{string(p.Status.Phase)}, nil }

// byNode indexes pods by the node they run on.
func byNode(p *v1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }

// TestTypedIndexers: typed indexers added before the start (through the informer) and after it
// (through the informer and through the typed indexer) all index the cached objects, and the
// typed queries return typed objects.
func TestTypedIndexers(t *testing.T) {
	running := typedTestPod("ns", "a")
	running.Status.Phase, running.Spec.NodeName = v1.PodRunning, "n1"
	pending := typedTestPod("ns", "b")
	pending.Status.Phase, pending.Spec.NodeName = v1.PodPending, "n1"
	src := typedTestSource(podList, running, pending)
	inf := cache.NewTypedSharedIndexInformer[*v1.Pod](cache.NewSharedIndexInformer(src, &v1.Pod{}, 0, cache.Indexers{}))
	if err := inf.AddTypedIndexers(cache.TypedIndexers[*v1.Pod]{"phase": byPhase}); err != nil {
		t.Fatalf("before start: %v", err)
	}
	typedTestRun(t, inf)
	typedTestWaitSynced(t, inf)
	if err := inf.AddTypedIndexers(cache.TypedIndexers[*v1.Pod]{"node": byNode}); err != nil {
		t.Fatalf("after start: %v", err)
	}
	indexer := inf.GetTypedIndexer()
	if err := indexer.AddTypedIndexers(cache.TypedIndexers[*v1.Pod]{"name": func(p *v1.Pod) ([]string, error) {
		return []string{p.Name}, nil
	}}); err != nil {
		t.Fatalf("through the typed indexer: %v", err)
	}

	names := func(pods []*v1.Pod, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		out := make([]string, len(pods))
		for i, p := range pods {
			out[i] = p.Name
		}
		sort.Strings(out)
		return fmt.Sprint(out)
	}
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"ByTypedIndex, index from before the start", names(indexer.ByTypedIndex("phase", "Running")), "[a]"},
		{"ByTypedIndex, index from after the start", names(indexer.ByTypedIndex("node", "n1")), "[a b]"},
		{"ByTypedIndex, index of the typed indexer", names(indexer.ByTypedIndex("name", "b")), "[b]"},
		{"TypedIndex", names(indexer.TypedIndex("phase", pending)), "[b]"},
		{"no match", names(indexer.ByTypedIndex("phase", "Failed")), "[]"},
		{"unknown index", names(indexer.ByTypedIndex("nope", "x")), "error: Index with name nope does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %s, want %s", tc.got, tc.want)
			}
		})
	}

	// A later change is reflected in the typed index.
	moved := running.DeepCopy()
	moved.Status.Phase = v1.PodSucceeded
	rec := newTypedRecorder[*v1.Pod]()
	reg, _ := inf.AddTypedEventHandler(rec)
	typedTestWaitSynced(t, inf, reg)
	rec.nextStrings(t, 2)
	src.Modify(moved)
	rec.next(t)
	if got := names(indexer.ByTypedIndex("phase", "Succeeded")); got != "[a]" {
		t.Fatalf("after the update: %s", got)
	}
	// The untyped view sees the same indices.
	if keys, err := inf.GetIndexer().IndexKeys("node", "n1"); err != nil || len(keys) != 2 {
		t.Fatalf("untyped IndexKeys = %v, %v", keys, err)
	}
}

// recordingInformer is a real informer that records the options of every
// AddEventHandlerWithOptions call and can fail AddIndexers.
type recordingInformer struct {
	cache.SharedIndexInformer
	options        []cache.HandlerOptions
	addIndexersErr error
}

func (r *recordingInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	r.options = append(r.options, o)
	return r.SharedIndexInformer.AddEventHandlerWithOptions(h, o)
}

func (r *recordingInformer) AddIndexers(indexers cache.Indexers) error {
	if r.addIndexersErr != nil {
		return r.addIndexersErr
	}
	return r.SharedIndexInformer.AddIndexers(indexers)
}

// TestTypedInformerBuiltOnTop: the typed view goes through the wrapped informer's
// AddEventHandlerWithOptions (with the options as given) and AddIndexers, so a wrapper around
// an informer sees typed registrations too.
func TestTypedInformerBuiltOnTop(t *testing.T) {
	period := time.Minute
	logger, _ := typedTestLogger()
	cases := []struct {
		name    string
		options []cache.HandlerOptions
		want    string // the recorded options, "" for no call
	}{
		{"no options", nil, fmt.Sprint([]cache.HandlerOptions{{}})},
		{"one option", []cache.HandlerOptions{{ResyncPeriod: &period, Logger: &logger}},
			fmt.Sprint([]cache.HandlerOptions{{ResyncPeriod: &period, Logger: &logger}})},
		{"two options", []cache.HandlerOptions{{}, {ResyncPeriod: &period}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingInformer{SharedIndexInformer: cache.NewSharedIndexInformer(typedTestSource(podList), &v1.Pod{}, 0, cache.Indexers{})}
			_, err := cache.NewTypedSharedIndexInformer[*v1.Pod](rec).AddTypedEventHandler(newTypedRecorder[*v1.Pod](), tc.options...)
			if (err != nil) != (tc.want == "") {
				t.Fatalf("error %v", err)
			}
			got := ""
			if len(rec.options) > 0 {
				got = fmt.Sprint(rec.options)
			}
			if got != tc.want {
				t.Fatalf("AddEventHandlerWithOptions got %s, want %s", got, tc.want)
			}
		})
	}

	rec := &recordingInformer{SharedIndexInformer: cache.NewSharedIndexInformer(typedTestSource(podList), &v1.Pod{}, 0, cache.Indexers{})}
	rec.addIndexersErr = fmt.Errorf("boom")
	if err := cache.NewTypedSharedIndexInformer[*v1.Pod](rec).AddTypedIndexers(cache.TypedIndexers[*v1.Pod]{"phase": byPhase}); err == nil || err.Error() != "boom" {
		t.Fatalf("AddTypedIndexers returned %v, want the wrapped informer's error", err)
	}
}
