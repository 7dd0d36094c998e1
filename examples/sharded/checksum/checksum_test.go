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
	// The SHA-256 of "x\x001\x00y\x002\x00": each key and value, in key order, followed by a
	// zero byte.
	if want := "8f942d5a870ba4ab759b1c623763d122f8c7a357cb80349e0c982a3d41b084ad"; a != want {
		t.Fatalf("checksum of x=1,y=2 = %s, want %s", a, want)
	}
	if got, want := Of(nil), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Fatalf("checksum of no data = %s, want %s (the SHA-256 of nothing)", got, want)
	}
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
