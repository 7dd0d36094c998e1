package informers_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache/informers"
	fcache "github.com/kcache/cache/testing"
)

// ExampleNewReadYourWrites records an update made through a typed client and reads the object
// back from the informer's cache: the read waits until the cache reflects the update. The fake
// source's client stands in for clientset.CoreV1().ConfigMaps.
func ExampleNewReadYourWrites() {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"color": "red"}})
	factory := informers.NewSharedInformerFactory(0)
	configMaps := informers.For[*v1.ConfigMap](factory, fcache.NewClient[*v1.ConfigMapList](src).Namespace)
	ryw := informers.NewReadYourWrites(configMaps, informers.ReadYourWritesOptions{})

	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	factory.WaitForCacheSyncWithContext(ctx)

	// The update, as a typed client's Update would return it: the object at its new version.
	updated := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"color": "blue"}}
	src.Modify(updated)
	if _, err := ryw.Record(updated, nil); err != nil {
		fmt.Println(err)
		return
	}

	cm, err := ryw.Get(ctx, "shop", "settings")
	fmt.Println(cm.Data["color"], err, ryw.TimedOut())
	// Output:
	// blue <nil> 0
}
