package cache

import (
	"errors"
	"sync"

	"github.com/kcache/cache/internal/heap"
)

// errHeapClosed is the error of writes to, and Pop from, a closed and empty Heap. Its text is
// client-go's.
var errHeapClosed = errors.New("heap is closed")

// LessFunc orders the objects of a Heap: it reports whether a must be popped before b.
type LessFunc func(interface{}, interface{}) bool

// Heap is a thread-safe priority queue of objects, keyed by a KeyFunc: an object added under
// a key already present replaces the old one and takes its place in the order. Pop removes the
// smallest object according to the LessFunc, blocking while the heap is empty.
//
// LessFunc is called under the heap's lock (a heap cannot order without it), so it must be
// fast and must not call back into the heap. Create a Heap with NewHeap.
type Heap struct {
	keyFunc KeyFunc

	// mu guards data, closed, changed and watched.
	mu     sync.RWMutex
	data   *heap.Keyed[string, interface{}]
	closed bool
	// changed is closed (and replaced) when an object is added or the heap is closed while a
	// Pop waits on it (watched), waking every blocked Pop.
	changed chan struct{}
	watched bool
}

// NewHeap returns an empty Heap keyed by keyFn and ordered by lessFn.
func NewHeap(keyFn KeyFunc, lessFn LessFunc) *Heap {
	return &Heap{
		keyFunc: keyFn,
		data:    heap.NewKeyed[string](func(a, b interface{}) bool { return lessFn(a, b) }),
		changed: make(chan struct{}),
	}
}

// wakeLocked wakes every blocked Pop. Without one it costs nothing.
func (h *Heap) wakeLocked() {
	if !h.watched {
		return
	}
	close(h.changed)
	h.changed = make(chan struct{})
	h.watched = false
}

// Close makes Pop return an error once the heap is empty, and makes writes fail. Objects
// already queued can still be popped.
func (h *Heap) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		h.wakeLocked()
	}
}

// Add stores obj under its key, replacing any object there and re-ordering it. O(log n). It
// fails with a KeyError, or with "heap is closed" after Close.
func (h *Heap) Add(obj interface{}) error {
	key, err := h.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHeapClosed
	}
	h.data.Set(key, obj)
	h.wakeLocked()
	return nil
}

// BulkAdd adds every object of list as Add does, under one lock acquisition. Keys are computed
// first: if one fails, BulkAdd returns its KeyError and adds nothing (client-go adds the
// objects before the bad one and then does not wake Pop).
func (h *Heap) BulkAdd(list []interface{}) error {
	keys := make([]string, len(list))
	for i, obj := range list {
		key, err := h.keyFunc(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		keys[i] = key
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHeapClosed
	}
	for i, obj := range list {
		h.data.Set(keys[i], obj)
	}
	h.wakeLocked()
	return nil
}

// AddIfNotPresent adds obj unless an object is stored under its key already, in which case it
// does nothing. Errors are those of Add.
func (h *Heap) AddIfNotPresent(obj interface{}) error {
	key, err := h.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHeapClosed
	}
	if _, exists := h.data.Get(key); !exists {
		h.data.Set(key, obj)
	}
	h.wakeLocked()
	return nil
}

// Update is Add.
func (h *Heap) Update(obj interface{}) error {
	return h.Add(obj)
}

// Delete removes the object stored under obj's key. It fails with a KeyError, or with
// "object not found" when nothing is stored there. It works after Close.
func (h *Heap) Delete(obj interface{}) error {
	key, err := h.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.data.Remove(key); !ok {
		return errors.New("object not found")
	}
	return nil
}

// Pop removes and returns the smallest object, waiting while the heap is empty. Once the heap
// is closed and empty it returns "heap is closed".
func (h *Heap) Pop() (interface{}, error) {
	for {
		h.mu.Lock()
		if _, obj, ok := h.data.Pop(); ok {
			h.mu.Unlock()
			return obj, nil
		}
		if h.closed {
			h.mu.Unlock()
			return nil, errHeapClosed
		}
		changed := h.changed
		h.watched = true
		h.mu.Unlock()
		<-changed
	}
}

// List returns every object, in no particular order.
func (h *Heap) List() []interface{} {
	h.mu.RLock()
	defer h.mu.RUnlock()
	list := make([]interface{}, 0, h.data.Len())
	h.data.Each(func(_ string, obj interface{}) { list = append(list, obj) })
	return list
}

// ListKeys returns every key, in no particular order.
func (h *Heap) ListKeys() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	keys := make([]string, 0, h.data.Len())
	h.data.Each(func(key string, _ interface{}) { keys = append(keys, key) })
	return keys
}

// Get returns the object stored under obj's key. It fails only with a KeyError.
func (h *Heap) Get(obj interface{}) (interface{}, bool, error) {
	key, err := h.keyFunc(obj)
	if err != nil {
		return nil, false, KeyError{obj, err}
	}
	return h.GetByKey(key)
}

// GetByKey returns the object stored under key. The error is always nil.
func (h *Heap) GetByKey(key string) (interface{}, bool, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	obj, ok := h.data.Get(key)
	return obj, ok, nil
}

// IsClosed reports whether Close was called.
func (h *Heap) IsClosed() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.closed
}
