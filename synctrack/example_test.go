package synctrack_test

import (
	"fmt"

	"github.com/kcache/cache/synctrack"
)

// ExampleSingleFileTracker shows the three calls an in-order consumer makes.
func ExampleSingleFileTracker() {
	tracker := synctrack.NewSingleFileTracker("pods + event handler main.handler")

	// The informer hands out its initial list: Start for each item before it is processed.
	tracker.Start()
	tracker.Start()
	tracker.UpstreamHasSynced() // the informer has synced
	fmt.Println("after upstream sync:", tracker.HasSynced())

	tracker.Finished() // the handler processed the first item
	tracker.Finished() // ... and the second
	<-tracker.Done()
	fmt.Println("after processing:", tracker.HasSynced())
	// Output:
	// after upstream sync: false
	// after processing: true
}

// ExampleAsyncTracker tracks keys processed by parallel workers.
func ExampleAsyncTracker() {
	tracker := synctrack.NewAsyncTracker[string]("workers")
	tracker.Start("default/a")
	tracker.Start("default/b")
	tracker.UpstreamHasSynced()
	tracker.Finished("default/b")
	fmt.Println(tracker.HasSynced())
	tracker.Finished("default/a")
	fmt.Println(tracker.HasSynced())
	// Output:
	// false
	// true
}

// ExampleLazy caches a computed value until its inputs change.
func ExampleLazy() {
	inputs := []int{1, 2, 3}
	sum := synctrack.Lazy[int]{Evaluate: func() (int, error) {
		total := 0
		for _, v := range inputs {
			total += v
		}
		return total, nil
	}}
	v, _ := sum.Get()
	fmt.Println(v)
	inputs = append(inputs, 4)
	sum.Notify()
	v, _ = sum.Get()
	fmt.Println(v)
	// Output:
	// 6
	// 10
}
