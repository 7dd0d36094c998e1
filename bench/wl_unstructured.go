package main

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// crGVK is the kind of the custom resources the unstructured workloads serve.
var crGVK = schema.GroupVersionKind{Group: "workloads.example.com", Version: "v1", Kind: "Workload"}

func init() {
	for _, mode := range []string{watchList, paged} {
		register(workload{
			group: "cache",
			name:  "sync-unstructured/" + mode,
			doc: "cache/sync/" + mode + " over N realistic custom resources watched as unstructured objects, as a " +
				"dynamic informer caches them: each a " + crGVK.Kind + " with a realistic pod's content (labels, " +
				"annotations, managedFields, an owner reference, a spec of three containers and a status), made " +
				"afresh for every list as a client decoding the server's JSON does; heap-B/pod is per resource, and " +
				"ns/op includes making the objects",
			heavy: true,
			run: func(b *testing.B, impl *Impl) {
				n := scale(100_000)
				benchCacheSyncFrom(b, impl, func() *source { return newCRSource(mode, n) }, newCRExample(), n)
			},
		})
	}
}

// realisticCR returns custom resource i: realisticPod(i)'s content as an unstructured object
// of kind crGVK.
func realisticCR(i int) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(realisticPod(i, 100, "1"))
	if err != nil {
		panic("bench: " + err.Error())
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(crGVK)
	return u
}

// newCRExample returns the example object of an informer of crGVK.
func newCRExample() runtime.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crGVK)
	return u
}

// newCRSource serves n custom resources (realisticCR), made afresh for every list or stream,
// by LIST (pages as the reflector asks) or, for watchList, by a streaming watch-list.
func newCRSource(mode string, n int) *source {
	s := &source{watched: make(chan struct{}, 16)}
	s.list = func(options metav1.ListOptions) runtime.Object {
		i := 0
		if options.Continue != "" {
			i, _ = strconv.Atoi(options.Continue)
		}
		list := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
		list.SetGroupVersionKind(crGVK.GroupVersion().WithKind(crGVK.Kind + "List"))
		list.SetResourceVersion("1")
		for ; i < n && (mode != paged || options.Limit <= 0 || int64(len(list.Items)) < options.Limit); i++ {
			list.Items = append(list.Items, *realisticCR(i))
		}
		if i < n {
			list.SetContinue(strconv.Itoa(i))
		}
		return list
	}
	if mode == watchList {
		s.stream = func(w *watch.FakeWatcher) {
			for i := range n {
				if i > 0 && int64(i)%(max(1, s.sampleEvery.Load())*500) == 0 {
					s.sample()
				}
				w.Add(realisticCR(i))
			}
			bookmark := newCRExample().(*unstructured.Unstructured)
			bookmark.SetResourceVersion("1")
			bookmark.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			w.Action(watch.Bookmark, bookmark)
		}
	}
	return s
}
