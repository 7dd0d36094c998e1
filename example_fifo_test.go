package cache_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cache "github.com/kcache/cache"
)

func exampleFIFOPod(name, phase string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Status:     v1.PodStatus{Phase: v1.PodPhase(phase)},
	}
}

// A RealFIFO in atomic mode, as informers use it: every change is delivered in order, and a
// relist arrives as one ReplacedAll delta holding the whole list.
func ExampleNewRealFIFOWithOptions() {
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true})

	_ = fifo.Replace([]interface{}{exampleFIFOPod("a", "Pending"), exampleFIFOPod("b", "Pending")}, "10")
	_ = fifo.Update(exampleFIFOPod("a", "Running"))
	_ = fifo.Delete(exampleFIFOPod("b", "Pending"))
	fifo.Close() // Pop drains what is queued, then reports ErrFIFOClosed

	for {
		_, err := fifo.Pop(func(obj interface{}, isInInitialList bool) error {
			d := obj.(cache.Deltas)[0]
			switch o := d.Object.(type) {
			case cache.ReplacedAllInfo:
				fmt.Printf("%s at resource version %s with %d objects (initial list: %v)\n", d.Type, o.ResourceVersion, len(o.Objects), isInInitialList)
			case *v1.Pod:
				fmt.Printf("%s %s/%s %s (initial list: %v)\n", d.Type, o.Namespace, o.Name, o.Status.Phase, isInInitialList)
			}
			return nil
		})
		if err != nil {
			fmt.Println(err, "- synced:", fifo.HasSynced())
			return
		}
	}
	// Output:
	// ReplacedAll at resource version 10 with 2 objects (initial list: true)
	// Updated default/a Running (initial list: false)
	// Deleted default/b Pending (initial list: false)
	// DeltaFIFO: manipulating with closed queue - synced: true
}

// A DeltaFIFO accumulates the changes of each object until it is popped; a relist turns
// objects the consumer knows but the list lacks into DeletedFinalStateUnknown tombstones.
func ExampleNewDeltaFIFOWithOptions() {
	known := cache.NewStore(cache.MetaNamespaceKeyFunc)
	_ = known.Add(exampleFIFOPod("gone", "Running"))

	fifo := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
	_ = fifo.Add(exampleFIFOPod("a", "Pending"))
	_ = fifo.Update(exampleFIFOPod("a", "Running"))
	_ = fifo.Replace([]interface{}{exampleFIFOPod("a", "Running")}, "20")
	fifo.Close()

	for {
		_, err := fifo.Pop(func(obj interface{}, _ bool) error {
			deltas := obj.(cache.Deltas)
			key, _ := fifo.KeyOf(deltas)
			fmt.Print(key, ":")
			for _, d := range deltas {
				if tombstone, ok := d.Object.(cache.DeletedFinalStateUnknown); ok {
					fmt.Printf(" %s(tombstone of %s)", d.Type, tombstone.Key)
					continue
				}
				fmt.Printf(" %s(%s)", d.Type, d.Object.(*v1.Pod).Status.Phase)
			}
			fmt.Println()
			return nil
		})
		if err != nil {
			return
		}
	}
	// Output:
	// default/a: Added(Pending) Updated(Running) Replaced(Running)
	// default/gone: Deleted(tombstone of default/gone)
}
