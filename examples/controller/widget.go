package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Widget is the example's resource: any type with Kubernetes object metadata works with the
// cache, so the example defines its own instead of importing k8s.io/api.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Size is the desired number of parts.
	Size int `json:"size"`
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	if w == nil {
		return nil
	}
	out := &Widget{TypeMeta: w.TypeMeta, Size: w.Size}
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

func newWidget(namespace, name string, size int) *Widget {
	return &Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "example.kcache.dev/v1", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Size:       size,
	}
}
