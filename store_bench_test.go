package cache_test

import (
	"fmt"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kcache/cache"
)

// The storage benchmarks use only the exported API, so that the same bodies run against
// client-go by swapping the import (bench/ holds the side-by-side comparison).

// storeBenchKeys is the number of distinct objects, spread over storeBenchNamespaces.
const (
	storeBenchKeys       = 100_000
	storeBenchNamespaces = 100
)

// storeBenchObj is a small API-like object.
type storeBenchObj struct {
	metav1.ObjectMeta
}

// storeBenchObjects returns n objects ns<i%100>/obj-<i> with an "app" label (10 values, evenly
// spread within each namespace) and a "node" label (50 values), at resource version rv.
func storeBenchObjects(n int, rv int) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = &storeBenchObj{metav1.ObjectMeta{
			Namespace:       "ns" + strconv.Itoa(i%storeBenchNamespaces),
			Name:            "obj-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(rv + i),
			Labels:          map[string]string{"app": "app" + strconv.Itoa(i/storeBenchNamespaces%10), "node": "node" + strconv.Itoa(i/7%50)},
		}}
	}
	return out
}

// storeBenchIndexers returns the namespace index plus, for n=3, an app and a node index.
func storeBenchIndexers(n int) cache.Indexers {
	idx := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	if n >= 3 {
		idx["app"] = func(obj interface{}) ([]string, error) {
			return []string{obj.(*storeBenchObj).Labels["app"]}, nil
		}
		idx["node"] = func(obj interface{}) ([]string, error) {
			return []string{obj.(*storeBenchObj).Labels["node"]}, nil
		}
	}
	return idx
}

// storeBenchFilled returns an indexer holding storeBenchKeys objects.
func storeBenchFilled(b *testing.B, indexes int) cache.Indexer {
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, storeBenchIndexers(indexes))
	if err := s.Replace(storeBenchObjects(storeBenchKeys, 1), "1"); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkIndexerAdd adds 100k distinct objects to an empty indexer, round after round (after
// the first round, every Add replaces an object with an equal one).
func BenchmarkIndexerAdd(b *testing.B) {
	for _, indexes := range []int{1, 3} {
		b.Run(fmt.Sprintf("indexes=%d", indexes), func(b *testing.B) {
			objs := storeBenchObjects(storeBenchKeys, 1)
			s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, storeBenchIndexers(indexes))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Add(objs[i%storeBenchKeys]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexerUpdate updates objects of a 100k indexer with new versions whose index
// values are unchanged (the common case), or, with moving=true, whose app and node change.
func BenchmarkIndexerUpdate(b *testing.B) {
	for _, indexes := range []int{1, 3} {
		for _, moving := range []bool{false, true} {
			b.Run(fmt.Sprintf("indexes=%d/moving=%v", indexes, moving), func(b *testing.B) {
				s := storeBenchFilled(b, indexes)
				next := storeBenchObjects(storeBenchKeys, 2)
				if moving {
					for i, o := range next {
						o.(*storeBenchObj).Labels = map[string]string{"app": "app" + strconv.Itoa(i%7), "node": "node" + strconv.Itoa(i%31)}
					}
				}
				prev := storeBenchObjects(storeBenchKeys, 1)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					objs := next
					if (i/storeBenchKeys)%2 == 1 {
						objs = prev
					}
					if err := s.Update(objs[i%storeBenchKeys]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkIndexerGetByKey looks objects of a 100k indexer up by key.
func BenchmarkIndexerGetByKey(b *testing.B) {
	s := storeBenchFilled(b, 1)
	keys := make([]string, storeBenchKeys)
	for i := range keys {
		keys[i] = "ns" + strconv.Itoa(i%storeBenchNamespaces) + "/obj-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := s.GetByKey(keys[i%storeBenchKeys]); !ok {
			b.Fatal("missing")
		}
	}
}

// BenchmarkIndexerByIndex returns the 1000 objects of one namespace out of 100k.
func BenchmarkIndexerByIndex(b *testing.B) {
	s := storeBenchFilled(b, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		objs, err := s.ByIndex(cache.NamespaceIndex, "ns"+strconv.Itoa(i%storeBenchNamespaces))
		if err != nil || len(objs) != storeBenchKeys/storeBenchNamespaces {
			b.Fatal(len(objs), err)
		}
	}
}

// BenchmarkIndexerList lists all 100k objects.
func BenchmarkIndexerList(b *testing.B) {
	s := storeBenchFilled(b, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := len(s.List()); n != storeBenchKeys {
			b.Fatal(n)
		}
	}
}

// BenchmarkIndexerReplace replaces the content of a 100k indexer with 100k new versions.
func BenchmarkIndexerReplace(b *testing.B) {
	for _, indexes := range []int{1, 3} {
		b.Run(fmt.Sprintf("indexes=%d", indexes), func(b *testing.B) {
			s := storeBenchFilled(b, indexes)
			lists := [2][]interface{}{storeBenchObjects(storeBenchKeys, 1), storeBenchObjects(storeBenchKeys, 2)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Replace takes ownership of the list; hand it a copy.
				list := append([]interface{}(nil), lists[i%2]...)
				if err := s.Replace(list, strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListAllByNamespace lists one namespace (1000 of 100k objects), with every object
// selected or with a label selector that keeps a tenth of them.
func BenchmarkListAllByNamespace(b *testing.B) {
	s := storeBenchFilled(b, 1)
	selectors := map[string]labels.Selector{
		"everything": labels.Everything(),
		"app":        labels.SelectorFromSet(labels.Set{"app": "app3"}),
	}
	for _, name := range []string{"everything", "app"} {
		b.Run(name, func(b *testing.B) {
			sel := selectors[name]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := 0
				err := cache.ListAllByNamespace(s, "ns"+strconv.Itoa(i%storeBenchNamespaces), sel, func(interface{}) { n++ })
				if err != nil || n == 0 {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkIndexerGetDuringReplace measures GetByKey while another goroutine keeps relisting
// 100k objects into the same indexer: a store that rebuilds its indices under the write lock
// stalls every reader for the length of the rebuild.
func BenchmarkIndexerGetDuringReplace(b *testing.B) {
	s := storeBenchFilled(b, 1)
	list := storeBenchObjects(storeBenchKeys, 2)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.Replace(append([]interface{}(nil), list...), "2"); err != nil {
				panic(err)
			}
		}
	}()
	keys := make([]string, storeBenchKeys)
	for i := range keys {
		keys[i] = "ns" + strconv.Itoa(i%storeBenchNamespaces) + "/obj-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := s.GetByKey(keys[i%storeBenchKeys]); !ok {
			b.Fatal("missing")
		}
	}
	b.StopTimer()
	close(stop)
	<-done
}
