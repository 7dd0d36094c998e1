// Package sharding scales one controller out across replicas, each reconciling and caching
// only its share of the objects, coordinated through the API server alone:
//
//   - Membership: each replica (a member) holds a coordination.k8s.io/v1 Lease labelled with
//     the ring's name and renews it through client-go's leader election. A member that cannot
//     renew in time fences itself: it stops reconciling before its lease could expire.
//   - Assignment: rendezvous hashing of an object's shard key (KeyByName by default) over the
//     live members. A shard label on each object names its member, so a member's informers
//     list and watch with a label selector (Shard.FactoryOption) and carry only its share.
//   - The sharder: one replica, elected through a Lease, labels new objects and, when members
//     come and go, moves objects with a two-step hand-over: it marks an object draining, the
//     owner acknowledges once no reconcile of it is in flight (Gate), and only then is the
//     object assigned to its new member. The objects of a member that is gone — its lease
//     released, or expired and confirmed on the server — move at once.
//
// A controller wires it in a few lines:
//
//	shard, err := sharding.New(restConfig, sharding.Options{Ring: "my-controller", Namespace: "ns",
//		Resources: []sharding.Resource{{Resource: widgetsGVR}}})
//	go shard.Run(ctx)
//	<-shard.Ready()
//	factory := informers.NewSharedInformerFactoryWithOptions(0, shard.FactoryOption())
//	widgets := informers.ForResource(factory, widgetsGVR, dynamicClient.Resource(widgetsGVR).Namespace)
//	gate := shard.Gate(widgetsGVR, widgets.Informer().GetIndexer().GetByKey)
//	// in each worker, for each key from the workqueue:
//	err = gate.Do(ctx, key, func(ctx context.Context) error { return reconcile(ctx, key) })
//
// The pure core — Assign, the key functions, Ring, Decide — has no goroutine or clock of its
// own. SHARDING.md describes the protocol, its guarantees and their assumptions.
package sharding
