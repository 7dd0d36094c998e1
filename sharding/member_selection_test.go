package sharding

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestServerShardSelectionProbe: the probe asks for one object with a selector covering the whole
// hash space and reads the answer from the list's shardInfo. A server without the
// ShardedListAndWatch feature ignores the field (no shardInfo): false, so members select
// client-side; a failing list is an error, not a guess. (A server with the feature answering
// true is tested against a real kube-apiserver in test/integration: the fake dynamic client
// rebuilds lists and drops shardInfo.)
func TestServerShardSelectionProbe(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	listKinds := map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"}
	cm := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{"name": "a", "namespace": "ns"},
	}}
	newClient := func(answer func(opts metav1.ListOptions) (runtime.Object, error), seen *metav1.ListOptions) *dynamicfake.FakeDynamicClient {
		c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, cm.DeepCopy())
		if answer != nil {
			c.PrependReactor("list", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
				opts := a.(clienttesting.ListActionImpl).ListOptions
				*seen = opts
				obj, err := answer(opts)
				return true, obj, err
			})
		}
		return c
	}

	t.Run("server without the feature", func(t *testing.T) {
		var seen metav1.ListOptions
		client := newClient(func(metav1.ListOptions) (runtime.Object, error) {
			// What a server without the feature answers: the list, the selector ignored.
			return &unstructured.UnstructuredList{
				Object: map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMapList"},
				Items:  []unstructured.Unstructured{*cm.DeepCopy()},
			}, nil
		}, &seen)
		ok, err := ServerShardSelection(context.Background(), client, configMaps, "ns")
		if err != nil || ok {
			t.Fatalf("ServerShardSelection = %v, %v; want false, nil", ok, err)
		}
		want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
		if seen.ShardSelector != want || seen.Limit != 1 {
			t.Fatalf("probe listed with selector %q limit %d; want %q limit 1", seen.ShardSelector, seen.Limit, want)
		}
	})

	t.Run("failing list", func(t *testing.T) {
		var seen metav1.ListOptions
		forbidden := apierrors.NewForbidden(configMaps.GroupResource(), "", errors.New("no list"))
		client := newClient(func(metav1.ListOptions) (runtime.Object, error) { return nil, forbidden }, &seen)
		ok, err := ServerShardSelection(context.Background(), client, configMaps, "ns")
		if ok || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "probing shard selectors on") {
			t.Fatalf("ServerShardSelection = %v, %v; want false and the list's Forbidden error", ok, err)
		}
	})
}
