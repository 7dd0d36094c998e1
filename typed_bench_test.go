package cache

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// BenchmarkTypedHandlerDispatch measures what the typed adapter adds to a notification: the
// same add, update and delete delivered to ResourceEventHandlerFuncs directly and to
// TypedResourceEventHandlerFuncs through the adapter.
func BenchmarkTypedHandlerDispatch(b *testing.B) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	var sink int
	untyped := ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { sink += len(obj.(*v1.Pod).Name) },
		UpdateFunc: func(_, obj interface{}) { sink += len(obj.(*v1.Pod).Name) },
		DeleteFunc: func(obj interface{}) { sink++ },
	}
	typed := &typedResourceEventHandler[*v1.Pod]{logger: klog.Background(), handler: TypedResourceEventHandlerFuncs[*v1.Pod]{
		AddFunc:    func(p *v1.Pod) { sink += len(p.Name) },
		UpdateFunc: func(_, p *v1.Pod) { sink += len(p.Name) },
		DeleteFunc: func(d DeletedObject[*v1.Pod]) { sink++ },
	}}
	for _, h := range []struct {
		name    string
		handler ResourceEventHandler
	}{{"untyped", untyped}, {"typed", typed}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.handler.OnAdd(pod, false)
				h.handler.OnUpdate(pod, pod)
				h.handler.OnDelete(pod)
			}
		})
	}
	_ = sink
}
