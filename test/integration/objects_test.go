package integration

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// kindOf names the kind served at each resource the dynamic tests use.
var kindOf = map[schema.GroupVersionResource]string{
	configMapsGVR:   "ConfigMap",
	podTemplatesGVR: "PodTemplate",
}

// newUnstructured returns a minimal valid object of resource gvr.
func newUnstructured(gvr schema.GroupVersionResource, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kindOf[gvr]))
	u.SetName(name)
	u.SetLabels(labels)
	switch gvr {
	case configMapsGVR:
		u.Object["data"] = map[string]any{"value": "0"}
	case podTemplatesGVR:
		u.Object["template"] = map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "registry.k8s.io/pause:3.10"}},
		}}
	}
	return u
}

// expectedType is the Reflector's expected type for gvr: an Unstructured carrying the GVK, so
// that the Reflector checks every event's kind.
func expectedType(gvr schema.GroupVersionResource) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kindOf[gvr]))
	return u
}

// dynamicRecorder records list and watch calls of resource gvr in ns.
func dynamicRecorder(dc dynamic.Interface, gvr schema.GroupVersionResource, ns string) *recorder {
	ri := dc.Resource(gvr).Namespace(ns)
	return newRecorder(
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return ri.Watch(ctx, o) },
	)
}

// touch changes an annotation of name so that the server gives it a new resource version.
func touch(ctx context.Context, ri dynamic.ResourceInterface, name string) error {
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	n, _ := strconv.Atoi(ann["kcache.test/touched"])
	ann["kcache.test/touched"] = strconv.Itoa(n + 1)
	u.SetAnnotations(ann)
	if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("touch %s: %w", name, err)
	}
	return nil
}
