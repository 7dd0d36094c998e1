package priorityqueue_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/workqueue/priorityqueue"
)

// A worker gets the highest priority first, FIFO within a priority.
func ExampleNew() {
	q := priorityqueue.New[string]("widgets")
	defer q.ShutDown()

	low, high := priorityqueue.LowPriority, 10
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, "resync-1", "resync-2")
	q.Add("change-1")
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &high}, "urgent")
	q.Add("change-2")

	for q.Len() > 0 {
		item, priority, _ := q.GetWithPriority()
		fmt.Println(item, priority)
		q.Done(item)
	}
	// Output:
	// urgent 10
	// change-1 0
	// change-2 0
	// resync-1 -100
	// resync-2 -100
}

// The event handler adapter puts an informer's initial list behind real changes.
func ExampleEventHandler() {
	q := priorityqueue.New[string]("pods")
	defer q.ShutDown()
	h := priorityqueue.NewEventHandler(q) // register with informer.AddEventHandler(h)

	pod := func(name, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
	}
	h.OnAdd(pod("old-1", "10"), true) // from the initial list
	h.OnAdd(pod("old-2", "11"), true)
	h.OnUpdate(pod("old-3", "12"), pod("old-3", "12")) // a resync: nothing changed
	h.OnUpdate(pod("web", "13"), pod("web", "14"))     // a real change
	h.OnAdd(pod("new", "15"), false)                   // a real add

	for q.Len() > 0 {
		key, priority, _ := q.GetWithPriority()
		fmt.Println(key, priority)
		q.Done(key)
	}
	// Output:
	// default/web 0
	// default/new 0
	// default/old-1 -100
	// default/old-2 -100
	// default/old-3 -100
}

// Aging keeps a low-priority item from waiting forever behind a steady stream of
// higher-priority ones: once it has been ready for Aging.After, it gets one of every
// Aging.Every handouts. (The fake clock makes the example deterministic.)
func ExampleAging() {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := priorityqueue.New("jobs",
		priorityqueue.WithClock[string](clk),
		priorityqueue.WithAging[string](priorityqueue.Aging{After: time.Minute, Every: 3}))
	defer q.ShutDown()

	low := priorityqueue.LowPriority
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, "backlog")
	clk.Step(time.Minute) // the backlog item is now aged
	for i := range 4 {
		q.Add(fmt.Sprint("change-", i))
	}
	for q.Len() > 0 {
		item, _ := q.Get()
		fmt.Println(item)
		q.Done(item)
	}
	// Output:
	// change-0
	// change-1
	// backlog
	// change-2
	// change-3
}
