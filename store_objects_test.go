package cache

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// storeTestObj is a minimal API object for the storage tests.
type storeTestObj struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// Value is free-form content that tests change to tell versions apart.
	Value string
}

func (o *storeTestObj) DeepCopyObject() runtime.Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// storeTestPod returns an object in namespace ns, named name, at resource version rv, with
// labels given as "k=v" pairs.
func storeTestPod(ns, name, rv string, labels ...string) *storeTestObj {
	o := &storeTestObj{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
	for _, kv := range labels {
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		k, v, _ := strings.Cut(kv, "=")
		o.Labels[k] = v
	}
	return o
}

// storeTestNoMeta is a value without object metadata.
type storeTestNoMeta struct{ Name string }

// errStoreTestIndex is the error of storeTestFailingIndexFunc.
var errStoreTestIndex = errors.New("storeTest: cannot index")

// storeTestLabelIndexFunc indexes an object by every value of its labels, sorted by key, so an
// object can have no value or several.
func storeTestLabelIndexFunc(obj interface{}) ([]string, error) {
	o, ok := obj.(*storeTestObj)
	if !ok {
		return nil, errors.New("storeTest: not a storeTestObj")
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		out = append(out, o.Labels[k])
	}
	return out, nil
}

// storeTestFailingIndexFunc fails for objects whose Value is "bad" and indexes the others by
// Value.
func storeTestFailingIndexFunc(obj interface{}) ([]string, error) {
	o, ok := obj.(*storeTestObj)
	if !ok || o.Value == "bad" {
		return nil, errStoreTestIndex
	}
	return []string{o.Value}, nil
}

// storeTestCaptureErrors replaces utilruntime's error handlers for the rest of the test and
// returns a function listing the errors reported so far.
func storeTestCaptureErrors(t *testing.T) func() []error {
	t.Helper()
	var mu sync.Mutex
	var errs []error
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(_ context.Context, err error, _ string, _ ...interface{}) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		},
	}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
}

// storeTestCheckState verifies a threadSafeMap's internal consistency: slots, keys, objects
// and cached index values line up, every cached value list is what the index functions compute
// now, and every index holds exactly the entries the cached values call for, with no empty set.
func storeTestCheckState(t testing.TB, c *threadSafeMap) {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := c.state
	set := c.indexers.Load()
	if s.len() != len(s.slots) {
		t.Fatalf("sizes differ: %d slots in use, %d keys", s.len(), len(s.slots))
	}
	for ci, c := range s.chunks {
		inUse := min(max(s.len()-ci*slotChunkSize, 0), slotChunkSize)
		if len(c.keys) != inUse || len(c.objs) != inUse || len(c.cells) != inUse*len(s.indices) {
			t.Fatalf("chunk %d of %d slots: %d keys, %d objs, %d cells, want %d slots", ci, s.len(), len(c.keys), len(c.objs), len(c.cells), inUse)
		}
		if cap(c.keys) > slotChunkSize || cap(c.cells) < cap(c.keys)*len(s.indices) {
			t.Fatalf("chunk %d: room for %d keys and %d cells", ci, cap(c.keys), cap(c.cells))
		}
		if inUse == 0 && ci != len(s.chunks)-1 {
			t.Fatalf("empty chunk %d is not the last of %d", ci, len(s.chunks))
		}
	}
	if spare := len(s.chunks) - (s.len()+slotChunkSize-1)/slotChunkSize; spare > 1 {
		t.Fatalf("%d empty chunks kept", spare)
	}
	if len(s.indices) != len(set.funcs) {
		t.Fatalf("%d indices for %d index functions", len(s.indices), len(set.funcs))
	}
	want := make([]map[string]map[string]bool, len(set.funcs))
	for i := range want {
		want[i] = map[string]map[string]bool{}
	}
	for slot := range s.len() {
		key := s.key(slot)
		if got, ok := s.slots[key]; !ok || got != slot {
			t.Fatalf("key %q is in slot %d but slots says %d, %v", key, slot, got, ok)
		}
		for i, f := range set.funcs {
			var now []string
			if s.obj(slot) != nil {
				var err error
				if now, err = f(s.obj(slot)); err != nil {
					t.Fatalf("stored object %q fails index %q: %v", key, set.names[i], err)
				}
			}
			cell := s.cellsAt(slot)[i]
			if cached := cellValues(cell); !sameValues(cached, now) {
				t.Fatalf("key %q index %q: cached values %q, index function says %q", key, set.names[i], cached, now)
			}
			if len(now) == 1 {
				if p := s.indices[i][now[0]]; p == nil || cell != &p.value {
					t.Fatalf("key %q index %q: single value %q is not cached as its posting's list", key, set.names[i], now[0])
				}
			}
			for _, v := range now {
				if want[i][v] == nil {
					want[i][v] = map[string]bool{}
				}
				want[i][v][key] = true
			}
		}
	}
	for i, idx := range s.indices {
		if len(idx) != len(want[i]) {
			t.Fatalf("index %q has %d values, want %d", set.names[i], len(idx), len(want[i]))
		}
		for v, p := range idx {
			if len(p.value) != 1 || p.value[0] != v {
				t.Fatalf("index %q: posting of %q holds %q", set.names[i], v, p.value)
			}
			slots := p.slots
			if len(slots) == 0 {
				t.Fatalf("index %q keeps an empty set for %q", set.names[i], v)
			}
			if len(slots) != len(want[i][v]) {
				t.Fatalf("index %q value %q has slots %v, want keys %v", set.names[i], v, slots, want[i][v])
			}
			for slot := range slots {
				if int(slot) >= s.len() || !want[i][v][s.key(int(slot))] {
					t.Fatalf("index %q value %q has stray slot %d", set.names[i], v, slot)
				}
			}
		}
	}
}

// storeTestGVR is the resource the storage tests register metrics for.
var storeTestGVR = schema.GroupVersionResource{Group: "storetest", Version: "v1", Resource: "objects"}
