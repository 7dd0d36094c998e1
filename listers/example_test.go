package listers_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
)

// ExampleNew lists and gets typed objects from an indexer, such as an informer's
// (informer.GetIndexer()), across namespaces and in one namespace.
func ExampleNew() {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-1", Labels: map[string]string{"app": "db"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "blog", Name: "web-1", Labels: map[string]string{"app": "web"}}},
	} {
		_ = indexer.Add(p)
	}

	pods := listers.New[*v1.Pod](indexer, v1.Resource("pods"))
	web, _ := pods.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	fmt.Println("web pods in all namespaces:", len(web))

	shop := listers.NewNamespaced(pods, "shop")
	all, _ := shop.List(labels.Everything())
	fmt.Println("pods in shop:", len(all))
	db, _ := shop.Get("db-1")
	fmt.Println("got", db.Namespace+"/"+db.Name, "with app", db.Labels["app"])
	_, err := shop.Get("db-2")
	fmt.Println(err, apierrors.IsNotFound(err))
	// Output:
	// web pods in all namespaces: 2
	// pods in shop: 2
	// got shop/db-1 with app db
	// pods "db-2" not found true
}
