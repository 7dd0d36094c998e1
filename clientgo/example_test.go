package clientgo_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache/clientgo"
	fcache "github.com/kcache/cache/testing"
)

// Code written against client-go's informer interface runs on a kcache informer: handlers,
// tombstones and the Indexer are client-go's types. In controller-runtime the same constructor
// goes into the manager's cache options:
//
//	ctrl.Options{Cache: cache.Options{NewInformer: clientgo.NewSharedIndexInformer}}
func Example() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	var informer toolscache.SharedIndexInformer = clientgo.NewSharedIndexInformer(src, &v1.ConfigMap{}, 0,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	deleted := make(chan struct{})
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { fmt.Println("add", obj.(*v1.ConfigMap).Name) },
		DeleteFunc: func(obj interface{}) {
			// A delete the watch missed arrives as client-go's tombstone.
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				fmt.Println("delete (missed by the watch)", tombstone.Key)
			}
			close(deleted)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced) // the handler has seen the initial list

	objs, _ := informer.GetIndexer().ByIndex(toolscache.NamespaceIndex, "default")
	fmt.Println("cached in default:", len(objs))
	_, isKcache := clientgo.Unwrap(informer)
	fmt.Println("kcache informer:", isKcache)

	src.DeleteDropWatch(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})
	src.ResetWatch() // the informer has to relist, and finds settings gone
	<-deleted
	cancel()
	<-done
	// Output:
	// add settings
	// cached in default: 1
	// kcache informer: true
	// delete (missed by the watch) default/settings
}
