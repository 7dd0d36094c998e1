package cache

import (
	"k8s.io/apimachinery/pkg/api/meta"
)

// TransformStripManagedFields returns a TransformFunc that drops metadata.managedFields from
// every object that has metadata, in place, and hands on everything else (tombstones, objects
// without metadata) unchanged and without error.
//
// The API server writes managedFields (server-side apply bookkeeping: one entry per field
// manager, each holding a JSON description of the fields it owns) on every object; controllers
// rarely read them, yet in a cache they are often the largest part of small objects. See
// MEMORY.md for what dropping them saves. Use it with SetTransform before an informer starts,
// or with the informers package's WithTransform for every informer of a factory. Objects a
// transform sees were decoded for this informer alone, so changing them in place is safe; an
// object with no managedFields is not touched.
//
// kcache extension (controller-runtime ships the same as cache.TransformStripManagedFields).
func TransformStripManagedFields() TransformFunc {
	return stripManagedFields
}

func stripManagedFields(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
