package cache_test

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
)

// examplePod returns a Pod in namespace ns, scheduled on node, with an app label.
func examplePod(ns, name, node, app, rv string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// ExampleNewIndexer walks through an Indexer: a store keyed by "namespace/name" that also
// keeps secondary indices, here by namespace and by node.
func ExampleNewIndexer() {
	byNode := func(obj interface{}) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("not a pod: %T", obj)
		}
		return []string{pod.Spec.NodeName}, nil
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"node":               byNode,
	})

	// Add and Update both store the object under its key.
	_ = indexer.Add(examplePod("shop", "web-1", "node-a", "web", "10"))
	_ = indexer.Add(examplePod("shop", "web-2", "node-b", "web", "11"))
	_ = indexer.Add(examplePod("shop", "db-1", "node-a", "db", "12"))
	_ = indexer.Add(examplePod("blog", "web-1", "node-b", "web", "13"))
	keys := indexer.ListKeys()
	sort.Strings(keys)
	fmt.Println("keys:", keys)

	// Look an object up by key.
	obj, exists, _ := indexer.GetByKey("shop/db-1")
	fmt.Println("shop/db-1 exists:", exists, "on", obj.(*corev1.Pod).Spec.NodeName)

	// Secondary indices: IndexKeys returns sorted keys.
	onA, _ := indexer.IndexKeys("node", "node-a")
	fmt.Println("on node-a:", onA)
	inShop, _ := indexer.IndexKeys(cache.NamespaceIndex, "shop")
	fmt.Println("in shop:", inShop)

	// An update moves the object between index values; a delete removes it everywhere.
	_ = indexer.Update(examplePod("shop", "web-1", "node-b", "web", "14"))
	_ = indexer.Delete(examplePod("shop", "db-1", "", "", "15"))
	onA, _ = indexer.IndexKeys("node", "node-a")
	onB, _ := indexer.IndexKeys("node", "node-b")
	fmt.Println("after update and delete: node-a:", onA, "node-b:", onB)

	// Listers filter one namespace by labels, through the namespace index.
	var names []string
	_ = cache.ListAllByNamespace(indexer, "shop", labels.SelectorFromSet(labels.Set{"app": "web"}), func(o interface{}) {
		names = append(names, o.(*corev1.Pod).Name)
	})
	sort.Strings(names)
	fmt.Println("web pods in shop:", names)
	lister := cache.NewGenericLister(indexer, schema.GroupResource{Resource: "pods"})
	if _, err := lister.ByNamespace("shop").Get("db-1"); err != nil {
		fmt.Println("lister:", err)
	}

	// The store remembers the newest resource version it has seen.
	fmt.Println("resource version:", indexer.LastStoreSyncResourceVersion())

	// Bad input gets an error, and the store is unchanged.
	fmt.Println("no metadata:", indexer.Add("just a string") != nil)
	_, err := indexer.ByIndex("zone", "z1")
	fmt.Println("unknown index:", err)
	fmt.Println("still", len(indexer.List()), "objects")

	// Output:
	// keys: [blog/web-1 shop/db-1 shop/web-1 shop/web-2]
	// shop/db-1 exists: true on node-a
	// on node-a: [shop/db-1 shop/web-1]
	// in shop: [shop/db-1 shop/web-1 shop/web-2]
	// after update and delete: node-a: [] node-b: [blog/web-1 shop/web-1 shop/web-2]
	// web pods in shop: [web-1 web-2]
	// lister: pods "db-1" not found
	// resource version: 15
	// no metadata: true
	// unknown index: Index with name zone does not exist
	// still 3 objects
}

// ExampleNewStore shows a plain Store with a transformer that drops fields the program never
// reads before the object is kept.
func ExampleNewStore() {
	dropManagedFields := func(obj interface{}) (interface{}, error) {
		if pod, ok := obj.(*corev1.Pod); ok {
			pod = pod.DeepCopy()
			pod.ManagedFields = nil
			return pod, nil
		}
		return obj, nil
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc, cache.WithTransformer(dropManagedFields))

	pod := examplePod("shop", "web-1", "node-a", "web", "1")
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	_ = store.Add(pod)
	_ = store.Replace([]interface{}{pod, examplePod("shop", "web-2", "node-a", "web", "2")}, "2")

	stored, _, _ := store.GetByKey("shop/web-1")
	fmt.Println("objects:", len(store.List()))
	fmt.Println("managed fields kept:", len(stored.(*corev1.Pod).ManagedFields))
	// Output:
	// objects: 2
	// managed fields kept: 0
}

// ExampleWithCompactStorage keeps an Indexer's objects encoded (protobuf for built-in types)
// and decodes them on read: reads return equal objects, not the stored ones, and index
// lookups by key decode nothing.
func ExampleWithCompactStorage() {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		cache.WithCompactStorage(cache.CompactOptions{Compress: true, DecodedCacheSize: -1}))
	pod := examplePod("shop", "web-1", "node-a", "web", "10")
	_ = indexer.Add(pod)

	keys, _ := indexer.IndexKeys(cache.NamespaceIndex, "shop") // no decode
	fmt.Println("in shop:", keys)
	obj, _, _ := indexer.GetByKey("shop/web-1") // decoded
	read := obj.(*corev1.Pod)
	fmt.Println("read:", read.Name, "on", read.Spec.NodeName, "same pointer:", read == pod)
	// Output:
	// in shop: [shop/web-1]
	// read: web-1 on node-a same pointer: false
}
