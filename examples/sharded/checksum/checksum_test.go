package checksum

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestOf(t *testing.T) {
	a := Of(map[string]string{"x": "1", "y": "2"})
	if a != Of(map[string]string{"y": "2", "x": "1"}) {
		t.Fatal("checksum depends on map order")
	}
	for _, other := range []map[string]string{{"x": "12"}, {"x": "1", "y": "3"}, {"x1": "", "y": "2"}} {
		if Of(other) == a {
			t.Fatalf("%v has the checksum of x=1,y=2", other)
		}
	}
}

func TestReconcile(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u1"}, Data: map[string]string{"k": "v"}}
	if err := Reconcile(ctx, client.CoreV1(), cm, nil); err != nil {
		t.Fatal(err)
	}
	s, err := client.CoreV1().Secrets("ns").Get(ctx, "a-checksum", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != "u1" {
		t.Fatalf("secret not controlled by the config map: %+v", s.OwnerReferences)
	}
	if s.StringData["sha256"] != Of(cm.Data) {
		t.Fatalf("secret holds %v", s.StringData)
	}
	// A second create for a cache that is behind is not an error.
	if err := Reconcile(ctx, client.CoreV1(), cm, nil); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "w"
	if err := Reconcile(ctx, client.CoreV1(), cm, s); err != nil {
		t.Fatal(err)
	}
	s, _ = client.CoreV1().Secrets("ns").Get(ctx, "a-checksum", metav1.GetOptions{})
	if s.StringData["sha256"] != Of(cm.Data) {
		t.Fatal("the secret was not updated to the new checksum")
	}
}
