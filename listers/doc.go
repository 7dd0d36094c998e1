// Package listers provides ResourceIndexer, a typed lister over a cache.Indexer: List by label
// selector and Get by name, for all namespaces or one. It mirrors the root package of
// k8s.io/client-go/listers (the helpers that generated listers are built on) and can be used
// directly with any indexer whose objects are all of one type, such as an informer's.
//
//	pods := listers.New[*v1.Pod](informer.GetIndexer(), v1.Resource("pods"))
//	inDefault, err := listers.NewNamespaced(pods, "default").List(labels.Everything())
//
// kcache difference: where client-go panics because a cached object is not a T, List and Get
// return an error naming the expected and the actual type.
package listers
