package cache

// ReflectorStore is what a Reflector writes to: the changes it sees on a watch, whole lists
// from a LIST or a streaming watch-list, and resyncs.
type ReflectorStore interface {
	// Add records an Added watch event.
	Add(obj interface{}) error

	// Update records a Modified watch event.
	Update(obj interface{}) error

	// Delete records a Deleted watch event.
	Delete(obj interface{}) error

	// Replace makes list the whole content, read at resourceVersion. The store takes
	// ownership of list.
	Replace(list []interface{}, resourceVersion string) error

	// Resync is called every resync period; plain stores do nothing.
	Resync() error
}

// ReflectorBookmarkStore is implemented by stores that want to hear about watch bookmarks: the
// Reflector calls Bookmark with the bookmark's resource version.
type ReflectorBookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// TransformingStore is a ReflectorStore that transforms objects as they come in. The Reflector
// applies the same transform to the objects it buffers during a streaming watch-list, so that
// the buffer holds the (usually smaller) transformed objects, then hands them over. This
// package's RealFIFO and DeltaFIFO (the queues informers use) take them as they are, so each
// object is transformed once; any other TransformingStore gets them through Replace, which sees
// objects already transformed once, as in client-go, so its transform must be idempotent.
type TransformingStore interface {
	ReflectorStore
	Transformer() TransformFunc
}

// ResourceVersionUpdater is implemented by stores that want to hear every time the Reflector's
// last-synced resource version moves.
type ResourceVersionUpdater interface {
	// UpdateResourceVersion is called with each new resource version.
	UpdateResourceVersion(resourceVersion string)
}
