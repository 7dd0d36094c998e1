package sharding

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// ServerShardSelection reports whether the API server applies shard selectors
// (ListOptions.ShardSelector, the ShardedListAndWatch feature gate, alpha and off by default
// in Kubernetes 1.36) to resource in namespace ("" for all): it lists at most one object with
// a selector covering the whole hash space, and a server that applied the selector says so in
// the list's shardInfo. A server without the feature ignores the field and returns a plain
// list: false. An error is the list's error.
//
// The probe lists full objects: kube-apiserver v1.36 applies shard selectors to metadata-only
// lists too but leaves shardInfo out of them, so a metadata client cannot tell.
func ServerShardSelection(ctx context.Context, client dynamic.Interface, resource schema.GroupVersionResource, namespace string) (bool, error) {
	sel, err := ShardSelector(FieldUID, []HashRange{{Start: 0, End: 0}})
	if err != nil {
		return false, err
	}
	list, err := client.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1, ShardSelector: sel})
	if err != nil {
		return false, fmt.Errorf("sharding: probing shard selectors on %s: %w", resource, err)
	}
	_, found, err := unstructured.NestedMap(list.Object, "metadata", "shardInfo")
	return found && err == nil, nil
}
