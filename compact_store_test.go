package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kcache/cache/internal/features"
)

// compactTestPod is a pod with most kinds of field: quantities, times, int-or-strings, maps.
func compactTestPod(name, rv string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, ResourceVersion: rv, UID: "uid-" + "name",
			Labels:            map[string]string{"app": "web", "pod-template-hash": "abc"},
			Annotations:       map[string]string{"a": strings.Repeat("x", 100)},
			CreationTimestamp: metav1.Unix(1700000000, 0),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "u", Controller: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kcm", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}},
		},
		Spec: v1.PodSpec{
			NodeName: "node-1",
			Containers: []v1.Container{{
				Name: "app", Image: "nginx",
				Resources:      v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}},
				ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("http")}}},
			}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000100, 0)}}},
	}
}

// compactTestCR is an unstructured custom resource with nested maps, lists, integers, floats
// and booleans.
func compactTestCR(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]interface{}{
			"namespace": "ns", "name": name, "resourceVersion": rv,
			"labels": map[string]interface{}{"app": "web"},
		},
		"spec": map[string]interface{}{
			"replicas": int64(3), "ratio": 0.5, "enabled": true, "nothing": nil,
			"ports": []interface{}{map[string]interface{}{"port": int64(80), "name": "http"}},
		},
	}}
	return u
}

// compactTestTyped is a typed object without protobuf methods: kept as JSON.
type compactTestTyped struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]int `json:"spec,omitempty"`
}

func (o *compactTestTyped) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec = make(map[string]int, len(o.Spec))
	for k, v := range o.Spec {
		c.Spec[k] = v
	}
	return &c
}

// TestObjectCodecRoundTrip: every codec gives back an object equal to the one encoded, a new
// one, for the built-in types (protobuf), unstructured objects (CBOR) and other typed objects
// (JSON), with and without TypeMeta, compressed or not.
func TestObjectCodecRoundTrip(t *testing.T) {
	withKind := compactTestPod("b", "2")
	withKind.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	objs := []interface{}{
		compactTestPod("a", "1"),
		withKind,
		compactTestCR("w", "3"),
		&compactTestTyped{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Typed"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t"}, Spec: map[string]int{"x": 1}},
	}
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pb := protobuf.NewSerializer(scheme, scheme)
	proto := NewRuntimeCodec(pb, pb)
	cases := []struct {
		name  string
		codec ObjectCodec
		objs  []interface{}
	}{
		{"default", NewObjectCodec(), objs},
		{"default compressed", NewCompressedCodec(NewObjectCodec()), objs},
		{"runtime protobuf", proto, []interface{}{withKind}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, obj := range tc.objs {
				data, err := tc.codec.Encode(obj)
				if err != nil {
					t.Fatalf("Encode(%T): %v", obj, err)
				}
				got, err := tc.codec.Decode(data)
				if err != nil {
					t.Fatalf("Decode(%T): %v", obj, err)
				}
				if !reflect.DeepEqual(got, obj) {
					a, _ := json.Marshal(obj)
					b, _ := json.Marshal(got)
					t.Fatalf("round trip of %T changed it:\n%s\n%s", obj, a, b)
				}
				if sameObject(got, obj) {
					t.Fatalf("Decode returned the encoded object itself")
				}
			}
		})
	}
}

// TestObjectCodecErrors: what the default codec cannot encode or decode is an error.
func TestObjectCodecErrors(t *testing.T) {
	c := NewObjectCodec()
	for _, obj := range []interface{}{nil, "string", (*v1.Pod)(nil), &struct{ C chan int }{}} {
		if _, err := c.Encode(obj); err == nil {
			t.Errorf("Encode(%#v) did not fail", obj)
		}
	}
	for _, data := range [][]byte{nil, {'x'}, {formatProto, 7}, {formatUnstructured, 0xff}} {
		if _, err := c.Decode(data); err == nil {
			t.Errorf("Decode(%v) did not fail", data)
		}
	}
	if _, err := NewCompressedCodec(c).Decode([]byte{0xff}); err == nil {
		t.Errorf("compressed Decode of garbage did not fail")
	}
}

func compactTestIndexer(size int) *cache {
	return newCache(MetaNamespaceKeyFunc, Indexers{
		NamespaceIndex: MetaNamespaceIndexFunc,
		"node": func(obj interface{}) ([]string, error) {
			return []string{obj.(*v1.Pod).Spec.NodeName}, nil
		},
	}, []StoreOption{WithCompactStorage(CompactOptions{DecodedCacheSize: size})})
}

func podNames(objs []interface{}) []string {
	var names []string
	for _, o := range objs {
		names = append(names, o.(*v1.Pod).Name+"@"+o.(*v1.Pod).ResourceVersion)
	}
	slices.Sort(names)
	return names
}

// TestCompactIndexer: a compact Indexer answers every read as a plain one would, with equal
// objects that are not the ones stored, and keeps entries, not objects.
func TestCompactIndexer(t *testing.T) {
	c := compactTestIndexer(-1)
	a, b := compactTestPod("a", "1"), compactTestPod("b", "2")
	b.Spec.NodeName = "node-2"
	for _, p := range []*v1.Pod{a, b} {
		if err := c.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range c.storage.state.appendObjs(nil) {
		if _, ok := o.(*compactEntry); !ok {
			t.Fatalf("stored %T, want an entry", o)
		}
	}
	got, exists, err := c.GetByKey("ns/a")
	if err != nil || !exists || !reflect.DeepEqual(got, a) || sameObject(got, a) {
		t.Fatalf("GetByKey = %p %v %v, want a copy of %p", got, exists, err, a)
	}
	again, _, _ := c.Get(a)
	if sameObject(again, got) {
		t.Fatalf("two reads returned one object with the decoded cache off")
	}
	if names := podNames(c.List()); fmt.Sprint(names) != "[a@1 b@2]" {
		t.Fatalf("List = %v", names)
	}
	if objs, err := c.ByIndex("node", "node-2"); err != nil || fmt.Sprint(podNames(objs)) != "[b@2]" {
		t.Fatalf("ByIndex(node-2) = %v, %v", podNames(objs), err)
	}
	if objs, err := c.Index(NamespaceIndex, a); err != nil || len(objs) != 2 {
		t.Fatalf("Index(ns) = %d, %v", len(objs), err)
	}
	if keys, err := c.IndexKeys("node", "node-1"); err != nil || fmt.Sprint(keys) != "[ns/a]" {
		t.Fatalf("IndexKeys(node-1) = %v, %v", keys, err)
	}

	// An update moves the index entries; a delete removes them.
	a2 := compactTestPod("a", "3")
	a2.Spec.NodeName = "node-2"
	if err := c.Update(a2); err != nil {
		t.Fatal(err)
	}
	if keys, _ := c.IndexKeys("node", "node-2"); fmt.Sprint(keys) != "[ns/a ns/b]" {
		t.Fatalf("after update IndexKeys(node-2) = %v", keys)
	}
	if err := c.Delete(b); err != nil {
		t.Fatal(err)
	}
	if names := podNames(c.List()); fmt.Sprint(names) != "[a@3]" {
		t.Fatalf("after delete List = %v", names)
	}

	// Replace, then an index added later, computed from decoded objects.
	if err := c.Replace([]interface{}{compactTestPod("x", "5"), compactTestPod("y", "6")}, "6"); err != nil {
		t.Fatal(err)
	}
	if err := c.AddIndexers(Indexers{"name": func(obj interface{}) ([]string, error) {
		return []string{obj.(*v1.Pod).Name}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if objs, err := c.ByIndex("name", "y"); err != nil || fmt.Sprint(podNames(objs)) != "[y@6]" {
		t.Fatalf("ByIndex(name, y) = %v, %v", podNames(objs), err)
	}
	if rv := c.LastStoreSyncResourceVersion(); rv != "6" {
		t.Fatalf("resource version %q", rv)
	}
}

// TestCompactIndexerTransaction: an informer's batch (transact) stores entries and reports
// the decoded object each update replaced.
func TestCompactIndexerTransaction(t *testing.T) {
	c := compactTestIndexer(0)
	if err := c.Add(compactTestPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	prior := make([]priorObject, 3)
	if err := c.transact([]Transaction{
		{Type: TransactionTypeUpdate, Object: compactTestPod("a", "2")},
		{Type: TransactionTypeAdd, Object: compactTestPod("b", "3")},
		{Type: TransactionTypeDelete, Object: compactTestPod("a", "2")},
	}, prior); err != nil {
		t.Fatal(err)
	}
	if old, ok := prior[0].obj.(*v1.Pod); !ok || !prior[0].existed || old.ResourceVersion != "1" {
		t.Fatalf("prior of the update = %#v, want a@1 decoded", prior[0])
	}
	if prior[1].existed {
		t.Fatalf("prior of the add = %#v", prior[1])
	}
	if names := podNames(c.List()); fmt.Sprint(names) != "[b@3]" {
		t.Fatalf("List = %v", names)
	}
}

// TestCompactDecodedCache: recently written or read objects are served without decoding, at
// most DecodedCacheSize of them, and a rewritten key never returns its previous object.
func TestCompactDecodedCache(t *testing.T) {
	c := compactTestIndexer(2)
	a, b, x := compactTestPod("a", "1"), compactTestPod("b", "1"), compactTestPod("x", "1")
	for _, p := range []*v1.Pod{a, b, x} {
		if err := c.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	// b and x are the two most recent writes: served as written.
	if got, _, _ := c.GetByKey("ns/x"); !sameObject(got, x) {
		t.Fatalf("hot x was decoded again")
	}
	got, _, _ := c.GetByKey("ns/a")
	if sameObject(got, a) {
		t.Fatalf("a was evicted but returned as written")
	}
	if again, _, _ := c.GetByKey("ns/a"); !sameObject(again, got) {
		t.Fatalf("a read twice was decoded twice")
	}
	if n := c.compact.hot.order.Len(); n != 2 {
		t.Fatalf("decoded cache holds %d objects, want at most 2", n)
	}
	a2 := compactTestPod("a", "2")
	if err := c.Update(a2); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.GetByKey("ns/a"); got.(*v1.Pod).ResourceVersion != "2" {
		t.Fatalf("after an update Get returned %s", got.(*v1.Pod).ResourceVersion)
	}
}

// compactFailingCodec fails to encode pods named "bad".
type compactFailingCodec struct{ ObjectCodec }

func (c compactFailingCodec) Encode(obj interface{}) ([]byte, error) {
	if p, ok := obj.(*v1.Pod); ok && p.Name == "bad" {
		return nil, errors.New("cannot encode bad")
	}
	return c.ObjectCodec.Encode(obj)
}

// TestCompactEncodeErrors: an object the codec cannot encode fails its write as an IndexFunc
// error does: Add returns it and changes nothing; Replace and a relist keep the key's
// previous state and apply the rest.
func TestCompactEncodeErrors(t *testing.T) {
	c := newCache(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		[]StoreOption{WithCompactStorage(CompactOptions{Codec: compactFailingCodec{NewObjectCodec()}})})
	bad := compactTestPod("bad", "1")
	if err := c.Add(bad); err == nil || !strings.Contains(err.Error(), "cannot encode bad") {
		t.Fatalf("Add(bad) = %v", err)
	}
	if keys := c.ListKeys(); len(keys) != 0 {
		t.Fatalf("keys after a failed Add: %v", keys)
	}
	err := c.Replace([]interface{}{compactTestPod("a", "1"), bad, compactTestPod("b", "1")}, "1")
	if err == nil || !strings.Contains(err.Error(), "cannot encode bad") {
		t.Fatalf("Replace = %v", err)
	}
	if keys, _ := c.IndexKeys(NamespaceIndex, "ns"); fmt.Sprint(keys) != "[ns/a ns/b]" {
		t.Fatalf("IndexKeys after Replace = %v", keys)
	}
	if names := podNames(c.List()); fmt.Sprint(names) != "[a@1 b@1]" {
		t.Fatalf("List after Replace = %v", names)
	}
}

// TestCompactApplyRelist: a relist compares resource versions, so unchanged objects keep
// their entries (nothing is encoded again), and the changed and vanished ones are reported
// decoded.
func TestCompactApplyRelist(t *testing.T) {
	c := compactTestIndexer(-1)
	var list []interface{}
	for i := range 12 {
		list = append(list, compactTestPod(fmt.Sprintf("p%02d", i), "1"))
	}
	if err := c.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	entries := map[string]interface{}{}
	for slot := range c.storage.state.len() {
		entries[c.storage.state.key(slot)] = c.storage.state.obj(slot)
	}
	relist := []interface{}{compactTestPod("p00", "9"), compactTestPod("new", "9")}
	for i := 2; i < 12; i++ {
		relist = append(relist, compactTestPod(fmt.Sprintf("p%02d", i), "1")) // fresh copies
	}
	diff, ok, err := c.applyRelist(relist, "9")
	if err != nil || !ok {
		t.Fatalf("applyRelist = %v, %v", ok, err)
	}
	if len(diff.changes) != 2 || !diff.changes[0].existed || diff.changes[1].existed {
		t.Fatalf("changes %+v, want p00 changed and new added", diff.changes)
	}
	if old := diff.changes[0].old.(*v1.Pod); old.ResourceVersion != "1" {
		t.Fatalf("old of p00 at %s", old.ResourceVersion)
	}
	if len(diff.deletions) != 1 || diff.deletions[0].Obj.(*v1.Pod).Name != "p01" {
		t.Fatalf("deletions %+v, want p01 decoded", diff.deletions)
	}
	for slot := range c.storage.state.len() {
		key := c.storage.state.key(slot)
		if e, ok := entries[key]; ok && key != "ns/p00" && e != c.storage.state.obj(slot) {
			t.Errorf("%s was stored again", key)
		}
	}
	if got, _, _ := c.GetByKey("ns/p00"); got.(*v1.Pod).ResourceVersion != "9" {
		t.Fatalf("p00 not updated")
	}
}

// compactTestInformer is infTestNewInformer with a compact cache.
func compactTestInformer(src interface {
	ListerWatcher
}, maxPending *int) *sharedIndexInformer {
	return newSharedIndexInformer(src, &v1.Pod{}, SharedIndexInformerOptions{
		Indexers:                 Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		Compact:                  &CompactOptions{Compress: true},
		DefaultHandlerMaxPending: maxPending,
	}, clock.RealClock{})
}

// TestCompactInformer: an informer with a compact cache delivers the objects it decoded from
// the watch, old objects of updates decoded from the store, same-version updates after a
// relist, and tombstones; its cache answers reads.
func TestCompactInformer(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchList=%v", watchList), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := infTestSource("a", "b", "c")
				src.SetWatchListSupported(watchList)
				inf := compactTestInformer(src, nil)
				rec := newInfTestRecorder()
				reg, _ := inf.AddEventHandler(rec)
				infTestRun(t, inf)
				infTestWaitSynced(t, inf, reg)
				infTestNextN(t, rec, 3)

				changed := infTestPod("ns", "a", "")
				changed.Labels = map[string]string{"x": "y"}
				src.Modify(changed)
				if got := infTestNextN(t, rec, 1); fmt.Sprint(got) != "[update a@1->a@4]" {
					t.Fatalf("update %v", got)
				}

				src.DeleteDropWatch(infTestPod("ns", "b", ""))
				src.Compact(src.ResourceVersion())
				src.CloseWatches()
				got := infTestNextN(t, rec, 3)
				want := []string{"delete tombstone:b", "update a@4->a@4", "update c@3->c@3"}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("after relist %v, want %v", got, want)
				}
				obj, exists, err := inf.GetIndexer().GetByKey("ns/a")
				if err != nil || !exists || obj.(*v1.Pod).Labels["x"] != "y" {
					t.Fatalf("GetByKey(a) = %v %v %v", obj, exists, err)
				}
				if objs, _ := inf.GetIndexer().ByIndex(NamespaceIndex, "ns"); len(objs) != 2 {
					t.Fatalf("ByIndex = %d objects", len(objs))
				}
			})
		})
	}
}

// TestCompactInformerMaxPending: a slow handler's notifications are still coalesced past
// MaxPending with a compact cache, and it ends at the objects' last states.
func TestCompactInformerMaxPending(t *testing.T) {
	features.SetForTesting(t, features.InOrderInformersBatchProcess, true)
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := compactTestInformer(src, ptr.To(1))
		release := make(chan struct{})
		rec := newInfTestRecorder()
		first := true
		reg, _ := inf.AddEventHandler(ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) {
				rec.OnAdd(obj, false)
			},
			UpdateFunc: func(old, obj interface{}) {
				if first {
					first = false
					<-release
				}
				rec.OnUpdate(old, obj)
			},
		})
		infTestRun(t, inf)
		infTestWaitSynced(t, inf, reg)
		infTestNextN(t, rec, 1)
		for i := range 5 {
			p := infTestPod("ns", "a", "")
			p.Labels = map[string]string{"i": fmt.Sprint(i)}
			src.Modify(p)
		}
		synctest.Wait()
		close(release)
		synctest.Wait()
		var got []string
		for len(rec.events) > 0 {
			got = append(got, infTestNext(t, rec))
		}
		if len(got) >= 5 || !strings.HasSuffix(got[len(got)-1], "->a@6") {
			t.Fatalf("slow handler got %v: want fewer than 5 updates (coalesced), ending at a@6", got)
		}
	})
}

// TestCompactMutationDetector: the detector watches the objects handlers receive, which a
// compact cache does not change.
func TestCompactMutationDetector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a")
		inf := compactTestInformer(src, nil)
		d := newCacheMutationDetector("pods", clock.RealClock{})
		failed := make(chan string, 1)
		d.failureFunc = func(msg string) { failed <- msg }
		inf.cacheMutationDetector = d
		var received *v1.Pod
		reg, _ := inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) { received = obj.(*v1.Pod) }})
		infTestRun(t, inf)
		infTestWaitSynced(t, inf, reg)
		synctest.Wait()
		d.CompareObjects()
		if len(failed) != 0 {
			t.Fatalf("unmodified objects reported: %s", <-failed)
		}
		received.Labels = map[string]string{"mutated": "yes"}
		d.CompareObjects()
		if len(failed) != 1 {
			t.Fatalf("a handler's mutation was not detected")
		}
	})
}

// compactTestHandler records the objects of the OnAdd calls it gets, by key.
type compactTestHandler struct {
	ResourceEventHandlerFuncs
	added map[string]interface{}
}

func newCompactTestHandler() *compactTestHandler {
	h := &compactTestHandler{added: map[string]interface{}{}}
	h.AddFunc = func(obj interface{}) {
		key, _ := MetaNamespaceKeyFunc(obj)
		h.added[key] = obj
	}
	return h
}

// TestCompactInitialListEncoded: the initial list of an informer with a compact cache, paged or
// streamed, reaches the queue as the encoded objects the store will keep (transformed once,
// before encoding), so it never holds the decoded objects; the store keeps those very
// entries, indexed, and the handler receives the objects decoded.
func TestCompactInitialListEncoded(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchList=%v", watchList), func(t *testing.T) {
			names := []string{"a", "b", "c", "d", "e"}
			src := infTestSource(names...)
			src.SetWatchListSupported(watchList)
			store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
				WithCompactStorage(CompactOptions{})).(*cache)
			transforms := 0
			fifo := NewRealFIFOWithOptions(RealFIFOOptions{
				KeyFunction:  MetaNamespaceKeyFunc,
				AtomicEvents: true,
				Transformer: func(obj interface{}) (interface{}, error) {
					transforms++
					p := obj.(*v1.Pod)
					p.Labels = map[string]string{"transformed": "yes"}
					return p, nil
				},
			})
			fifo.setRelistStore(store)
			r := NewReflectorWithOptions(src, &v1.Pod{}, fifo, ReflectorOptions{})
			r.WatchListPageSize = 2
			ctx := t.Context()
			if watchList {
				w, err := r.watchList(ctx)
				if err != nil || w == nil {
					t.Fatalf("watchList = %v, %v", w, err)
				}
				w.Stop()
			} else if err := r.list(ctx); err != nil {
				t.Fatal(err)
			}

			h := newCompactTestHandler()
			_, err := fifo.Pop(func(obj interface{}, initial bool) error {
				d := obj.(Deltas)
				info := d[0].Object.(ReplacedAllInfo)
				if len(d) != 1 || len(info.Objects) != len(names) {
					t.Fatalf("popped %v", d)
				}
				for _, item := range info.Objects {
					if _, ok := item.(*encodedItem); !ok {
						t.Fatalf("the list carries %T, want encoded objects", item)
					}
				}
				listed := slices.Clone(info.Objects)
				if err := processDeltas(klog.Background(), h, store, d, initial, DeletionHandlingMetaNamespaceKeyFunc); err != nil {
					return err
				}
				for _, item := range listed {
					e := item.(*encodedItem)
					if slot := store.storage.state.slots[e.key]; store.storage.state.obj(slot) != e.entry {
						t.Errorf("%s stored as %v, not as listed", e.key, store.storage.state.obj(slot))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if transforms != len(names) {
				t.Errorf("%d transforms, want one per object", transforms)
			}
			for _, n := range names {
				p, ok := h.added["ns/"+n].(*v1.Pod)
				if !ok || p.Name != n || p.Labels["transformed"] != "yes" {
					t.Errorf("handler got %#v for %s, want the transformed pod", h.added["ns/"+n], n)
				}
			}
			if objs, _ := store.ByIndex(NamespaceIndex, "ns"); len(objs) != len(names) {
				t.Errorf("ByIndex = %d objects, want %d", len(objs), len(names))
			}
		})
	}
}

// TestCompactEncodedListIntoWrittenStore: a list encoded for an empty compact store that was
// written to before the list was applied is applied as any relist: the difference, with
// decoded objects in the notifications.
func TestCompactEncodedListIntoWrittenStore(t *testing.T) {
	c := compactTestIndexer(-1)
	var list []interface{}
	for _, n := range []string{"a", "b"} {
		item, ok := c.encodeListed(compactTestPod(n, "2"))
		if !ok {
			t.Fatalf("%s not encoded", n)
		}
		list = append(list, item)
	}
	if err := c.Add(compactTestPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	rec := newInfTestRecorder()
	if err := processReplacedAllInfo(klog.Background(), rec, ReplacedAllInfo{ResourceVersion: "2", Objects: list}, c, false, DeletionHandlingMetaNamespaceKeyFunc); err != nil {
		t.Fatal(err)
	}
	want := []string{"update a@1->a@2", "add b@2"}
	var got []string
	for range want {
		e := rec.next(t)
		s := e.kind + " "
		if e.old != nil {
			s += infTestName(e.old) + "->"
		}
		got = append(got, s+infTestName(e.obj))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("notified %v, want %v", got, want)
	}
	if keys := c.ListKeys(); len(keys) != 2 {
		t.Fatalf("keys %v", keys)
	}
}

// TestCompactListEncodeFailures: an object of an initial list that cannot be encoded, or whose
// transform fails, is carried as it is, and the list fails or keeps it as any list does.
func TestCompactListEncodeFailures(t *testing.T) {
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: func(obj interface{}) ([]string, error) {
		if obj.(*v1.Pod).Name == "bad-index" {
			return nil, errors.New("no index")
		}
		return []string{"x"}, nil
	}}, WithCompactStorage(CompactOptions{})).(*cache)
	fifo := NewRealFIFOWithOptions(RealFIFOOptions{
		KeyFunction:  MetaNamespaceKeyFunc,
		AtomicEvents: true,
		Transformer: func(obj interface{}) (interface{}, error) {
			if obj.(*v1.Pod).Name == "bad-transform" {
				return nil, errors.New("no transform")
			}
			return obj, nil
		},
	})
	fifo.setRelistStore(store)
	encode := fifo.listEncoder(true)
	if encode == nil {
		t.Fatal("no encoder for an empty compact store")
	}
	for _, tc := range []struct {
		name                 string
		encoded, transformed bool
	}{{"ok", true, true}, {"bad-index", false, true}, {"bad-transform", false, false}} {
		item, transformed := encode(compactTestPod(tc.name, "1"))
		if _, encoded := item.(*encodedItem); encoded != tc.encoded || transformed != tc.transformed {
			t.Errorf("%s: encoded %v transformed %v, want %v %v", tc.name, encoded, transformed, tc.encoded, tc.transformed)
		}
	}
	if NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: MetaNamespaceKeyFunc, AtomicEvents: true}).listEncoder(true) != nil {
		t.Error("a queue without a store encodes its lists")
	}
	if err := store.Add(compactTestPod("ok", "1")); err != nil {
		t.Fatal(err)
	}
	if fifo.listEncoder(true) != nil {
		t.Error("a queue whose store is not empty encodes its lists")
	}
}
