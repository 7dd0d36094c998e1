package sharding_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/sharding"
	"github.com/kcache/cache/workqueue"
)

// Rendezvous hashing: a member joining takes keys only for itself, about 1/N of them; the
// others keep theirs.
func ExampleAssign() {
	before := []string{"replica-1", "replica-2"}
	after := []string{"replica-1", "replica-2", "replica-3"}
	moved := map[string]int{}
	for i := range 3000 {
		key := fmt.Sprintf("ns/object-%d", i)
		b, _ := sharding.Assign(key, before)
		a, _ := sharding.Assign(key, after)
		if a != b {
			moved[b+" -> "+a]++
		}
	}
	fmt.Println(len(moved), "kinds of move")
	fmt.Println(moved["replica-1 -> replica-3"]+moved["replica-2 -> replica-3"] > 900)
	fmt.Println(moved["replica-1 -> replica-3"]+moved["replica-2 -> replica-3"] < 1100)
	// Output:
	// 2 kinds of move
	// true
	// true
}

// The hand-over as the sharder decides it, step by step.
func ExampleDecide() {
	ring := sharding.NewSnapshot([]string{"replica-1", "replica-2"}, []string{"replica-0"}, true)
	key := "ns/d"
	owner, _ := ring.Owner(key)
	other := "replica-1"
	if owner == other {
		other = "replica-2"
	}
	for _, s := range []sharding.State{
		{},                             // new object
		{Shard: owner},                 // where it belongs
		{Shard: other},                 // on a live member that no longer owns the key
		{Shard: other, Draining: true}, // waiting for that member's acknowledgement
		{Shard: "replica-0"},           // on a member that is gone
	} {
		a := sharding.Decide(key, s, ring)
		fmt.Printf("%-22v -> %v (to the owner: %v)\n", fmt.Sprintf("%+v", s), a.Kind, a.To == owner)
	}
	// Output:
	// {Shard: Draining:false} -> Assign (to the owner: true)
	// {Shard:replica-2 Draining:false} -> None (to the owner: false)
	// {Shard:replica-1 Draining:false} -> Drain (to the owner: true)
	// {Shard:replica-1 Draining:true} -> Wait (to the owner: false)
	// {Shard:replica-0 Draining:false} -> Reassign (to the owner: true)
}

// A replica's wiring: its member Lease, its informers restricted to its share, and its
// reconciles through the gate.
func ExampleShard() {
	var config *rest.Config // from the kubeconfig or in-cluster
	if config == nil {
		return // this example only shows the wiring
	}
	widgets := schema.GroupVersionResource{Group: "example.dev", Version: "v1", Resource: "widgets"}
	shard, err := sharding.New(config, sharding.Options{
		Ring:      "widget-controller",
		Namespace: "widget-system",
		Resources: []sharding.Resource{{Resource: widgets}},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	go func() { _ = shard.Run(ctx) }() // returns sharding.ErrLeaseLost if the lease is lost
	<-shard.Ready()

	dyn := dynamic.NewForConfigOrDie(config)
	factory := informers.NewSharedInformerFactoryWithOptions(0, shard.FactoryOption())
	informer := informers.ForResource(factory, widgets, dyn.Resource(widgets).Namespace).Informer()
	gate := shard.Gate(widgets, informer.GetIndexer().GetByKey)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	// ... an event handler on informer adds keys to queue (on every update, so drain marks
	// reach the gate), factory.StartWithContext(ctx), then in each worker:
	key, _ := queue.Get()
	err = gate.Do(ctx, key, func(ctx context.Context) error {
		return nil // reconcile key; ctx is cancelled if the member fences itself
	})
	switch {
	case err == nil, sharding.Skipped(err):
		queue.Forget(key)
	default:
		queue.AddRateLimited(key)
	}
	queue.Done(key)
}

// The zero-write mode: members own hash ranges of the shard key instead of labels, so nothing
// is ever written to a sharded object. Here widgets are keyed by namespace, which the server
// can select by (KEP-5866 shard selectors, where the ShardedListAndWatch feature is on), and
// the config maps they control follow them; SelectClient wraps the factory's client so the
// member's informers list and watch only its ranges, and change selection when they move.
func ExampleSelectClient() {
	var config *rest.Config // from the kubeconfig or in-cluster
	if config == nil {
		return // this example only shows the wiring
	}
	widgets := schema.GroupVersionResource{Group: "example.dev", Version: "v1", Resource: "widgets"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	shard, err := sharding.New(config, sharding.Options{
		Ring:      "widget-controller",
		Namespace: "widget-system",
		Selection: sharding.SelectByHash,
		Resources: []sharding.Resource{{
			Resource:   widgets,
			ShardField: sharding.FieldNamespace, // or none, and Key: client-side selection
			Kind:       "Widget",
			Controlled: []schema.GroupVersionResource{configMaps},
		}},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	go func() { _ = shard.Run(ctx) }()
	<-shard.Ready()
	if server, err := shard.ServerSelection(ctx, widgets); err == nil {
		fmt.Println("selected on the server:", server) // else every member receives every event
	}

	dyn := dynamic.NewForConfigOrDie(config)
	factory := informers.NewSharedInformerFactory(0)
	informer := informers.ForResource(factory, widgets, sharding.SelectClient(shard, widgets, dyn.Resource(widgets).Namespace)).Informer()
	_ = informers.ForResource(factory, configMaps, sharding.SelectClient(shard, configMaps, dyn.Resource(configMaps).Namespace))
	gate := shard.Gate(widgets, informer.GetIndexer().GetByKey) // the same Gate and workers as with labels
	_ = gate
}
