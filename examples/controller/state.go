package main

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache"
)

// stateOf maps each object's key to its resource version.
func stateOf(items []runtime.Object) map[string]string {
	anys := make([]interface{}, len(items))
	for i, o := range items {
		anys[i] = o
	}
	return stateOfAny(anys)
}

func stateOfAny(items []interface{}) map[string]string {
	out := make(map[string]string, len(items))
	for _, o := range items {
		key, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			continue
		}
		m, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		out[key] = m.GetResourceVersion()
	}
	return out
}
