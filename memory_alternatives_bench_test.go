package cache

import (
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"
	"unique"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// internMeta shares the ObjectMeta strings of a pod that repeat across pods (label and
// annotation keys and values, owner references, managers, the namespace, generateName) through
// unique, and identical managedFields field sets through one shared FieldsV1 each: the
// cheapest invisible saving a cache could make by default. It is measured here, not offered:
// see BenchmarkInternObjectMeta.
type internMeta struct {
	mu     sync.Mutex
	fields map[string]*metav1.FieldsV1
}

func intern(s string) string { return unique.Make(s).Value() }

func internMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

func (in *internMeta) transform(obj interface{}) (interface{}, error) {
	p := obj.(*v1.Pod)
	m := &p.ObjectMeta
	m.Namespace, m.GenerateName = intern(m.Namespace), intern(m.GenerateName)
	m.Labels, m.Annotations = internMap(m.Labels), internMap(m.Annotations)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind, o.Name = intern(o.APIVersion), intern(o.Kind), intern(o.Name)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
		f.Manager, f.APIVersion, f.FieldsType, f.Subresource = intern(f.Manager), intern(f.APIVersion), intern(f.FieldsType), intern(f.Subresource)
		if f.FieldsV1 == nil {
			continue
		}
		raw := string(f.FieldsV1.Raw)
		if shared, ok := in.fields[raw]; ok {
			f.FieldsV1 = shared
		} else {
			in.fields[raw] = f.FieldsV1
		}
	}
	return p, nil
}

// BenchmarkInternObjectMeta measures what interning ObjectMeta (internMeta) saves on the
// realistic pods of BenchmarkCacheMemoryPerPod, and what it costs per pod: B/pod is the live
// heap of an Indexer of 2,000 pods decoded from JSON, transform-ns/pod the transform's time.
func BenchmarkInternObjectMeta(b *testing.B) {
	const pods = 2000
	wire := make([][]byte, pods)
	for i := range wire {
		wire[i], _ = json.Marshal(realisticPod(i))
	}
	for _, interned := range []bool{false, true} {
		name := "plain"
		if interned {
			name = "interned"
		}
		b.Run(name, func(b *testing.B) {
			var perPod, nsPerPod float64
			for b.Loop() {
				in := &internMeta{fields: map[string]*metav1.FieldsV1{}}
				before := heapInUse()
				indexer := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
				var spent time.Duration
				for _, data := range wire {
					obj, err := decodeAs[v1.Pod](data)
					if err != nil {
						b.Fatal(err)
					}
					if interned {
						start := time.Now()
						obj, _ = in.transform(obj)
						spent += time.Since(start)
					}
					if err := indexer.Add(obj); err != nil {
						b.Fatal(err)
					}
				}
				perPod = float64(heapInUse()-before) / pods
				nsPerPod = float64(spent.Nanoseconds()) / pods
				runtime.KeepAlive(indexer)
				runtime.KeepAlive(in)
			}
			b.ReportMetric(perPod, "B/pod")
			b.ReportMetric(nsPerPod, "transform-ns/pod")
		})
	}
}

// BenchmarkCacheMemoryPerUnstructured is BenchmarkCacheMemoryPerPod for a custom resource
// watched through a dynamic client: each object is the realistic pod's JSON under another
// kind, decoded into *unstructured.Unstructured. B/object is the live heap per object of a
// plain Indexer, and of compact ones (CBOR, and CBOR compressed).
func BenchmarkCacheMemoryPerUnstructured(b *testing.B) {
	const objects = 2000
	wire := make([][]byte, objects)
	for i := range wire {
		p := realisticPod(i)
		p.APIVersion, p.Kind = "example.com/v1", "Workload"
		wire[i], _ = json.Marshal(p)
	}
	cases := []struct {
		name string
		opts []StoreOption
	}{
		{name: "plain"},
		{name: "compact", opts: []StoreOption{WithCompactStorage(CompactOptions{DecodedCacheSize: -1})}},
		{name: "compact-compressed", opts: []StoreOption{WithCompactStorage(CompactOptions{Compress: true, DecodedCacheSize: -1})}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				before := heapInUse()
				indexer := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, tc.opts...)
				for _, data := range wire {
					u := &unstructured.Unstructured{}
					if err := u.UnmarshalJSON(data); err != nil {
						b.Fatal(err)
					}
					if err := indexer.Add(u); err != nil {
						b.Fatal(err)
					}
				}
				perObject = float64(heapInUse()-before) / objects
				runtime.KeepAlive(indexer)
			}
			b.ReportMetric(perObject, "B/object")
		})
	}
}
