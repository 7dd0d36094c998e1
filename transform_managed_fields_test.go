package cache

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTransformStripManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	withFields := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "p", Namespace: "ns", ManagedFields: managed, Labels: map[string]string{"a": "b"}}
	}
	unstr := &unstructured.Unstructured{}
	unstr.SetName("u")
	unstr.SetManagedFields(managed)
	tombstone := DeletedFinalStateUnknown{Key: "ns/p", Obj: &v1.Pod{ObjectMeta: withFields()}}

	cases := []struct {
		name string
		in   interface{}
	}{
		{name: "typed object", in: &v1.Pod{ObjectMeta: withFields()}},
		{name: "metadata only", in: &metav1.PartialObjectMetadata{ObjectMeta: withFields()}},
		{name: "unstructured", in: unstr},
		{name: "no managedFields", in: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}},
		{name: "tombstone passes unchanged", in: tombstone},
		{name: "not an object", in: "a string"},
		{name: "nil", in: nil},
	}
	transform := TransformStripManagedFields()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := transform(tc.in)
			if err != nil {
				t.Fatalf("transform error: %v", err)
			}
			if tc.name == "tombstone passes unchanged" {
				if out.(DeletedFinalStateUnknown).Key != "ns/p" {
					t.Errorf("tombstone changed: %#v", out)
				}
				return
			}
			if out != tc.in {
				t.Fatalf("transform returned %#v, want the same object", out)
			}
			if m, ok := out.(metav1.Object); ok {
				if m.GetManagedFields() != nil {
					t.Errorf("managedFields kept: %v", m.GetManagedFields())
				}
				if tc.name == "typed object" && m.GetLabels()["a"] != "b" {
					t.Error("labels lost")
				}
			}
		})
	}
}
