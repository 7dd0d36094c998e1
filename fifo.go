package cache

import (
	"sync"

	"github.com/kcache/cache/internal/ring"
)

// FIFO is a Queue that keeps only the latest object per key and hands keys out in the order
// they were first added. It does not tell the consumer what changed (DeltaFIFO and RealFIFO
// do); it suits consumers that only need the newest state of whatever changed.
//
// Add and Update store the object and queue its key unless it is queued already. Delete drops
// the object but leaves its key queued; Pop skips keys whose object is gone. Replace swaps in
// the new objects and queues each of their keys once; Resync queues every stored key that is
// not queued. HasSynced turns true once the objects of the first Replace have all been popped
// and processed, or at the first Add, Update or Delete before any Replace.
//
// Unlike client-go's FIFO, Pop releases the lock while process runs, so producers are not
// blocked by a slow consumer, and a key is never queued twice. Create a FIFO with NewFIFO.
type FIFO struct {
	keyFunc KeyFunc

	// synced is closed once HasSynced is true.
	synced chan struct{}

	// mu guards everything below.
	mu    sync.Mutex
	items map[string]interface{}
	queue *ring.Ring[string]
	// queued holds the keys in queue.
	queued map[string]struct{}
	// populated is set by the first write of any kind.
	populated bool
	// initialPopulationCount is the number of keys of the first Replace not yet popped and
	// processed.
	initialPopulationCount int
	syncedClosed           bool
	closed                 bool
	// changed is closed (and replaced) when a key is queued or the FIFO is closed while Pop
	// waits on it (watched).
	changed chan struct{}
	watched bool
}

var (
	_ Queue       = &FIFO{}
	_ DoneChecker = &FIFO{}
)

// NewFIFO returns an empty FIFO keyed by keyFunc.
func NewFIFO(keyFunc KeyFunc) *FIFO {
	return &FIFO{
		keyFunc: keyFunc,
		synced:  make(chan struct{}),
		items:   map[string]interface{}{},
		queue:   ring.New[string](0),
		queued:  map[string]struct{}{},
		changed: make(chan struct{}),
	}
}

// wakeLocked wakes a waiting Pop. Without one it costs nothing.
func (f *FIFO) wakeLocked() {
	if !f.watched {
		return
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.watched = false
}

// checkSyncedLocked closes synced once the first Replace's objects have all been processed.
func (f *FIFO) checkSyncedLocked() {
	if f.populated && f.initialPopulationCount == 0 && !f.syncedClosed {
		f.syncedClosed = true
		close(f.synced)
	}
}

// enqueueLocked queues key unless it is queued already.
func (f *FIFO) enqueueLocked(key string) {
	if _, ok := f.queued[key]; ok {
		return
	}
	f.queued[key] = struct{}{}
	f.queue.Push(key)
	f.wakeLocked()
}

// Close makes Pop return ErrFIFOClosed once the queue is empty.
func (f *FIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.wakeLocked()
}

// IsClosed reports whether Close was called.
func (f *FIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// HasSynced reports whether the first Replace's objects have all been popped and processed, or
// an Add, Update or Delete came first.
func (f *FIFO) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncedClosed
}

// HasSyncedChecker returns the FIFO itself, whose Done channel is closed when HasSynced turns
// true.
func (f *FIFO) HasSyncedChecker() DoneChecker {
	return f
}

// Name returns "FIFO".
func (f *FIFO) Name() string {
	return "FIFO"
}

// Done returns a channel closed when HasSynced turns true.
func (f *FIFO) Done() <-chan struct{} {
	return f.synced
}

// Add stores obj under its key and queues the key unless it is queued. It fails only with a
// KeyError.
func (f *FIFO) Add(obj interface{}) error {
	key, err := f.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	f.checkSyncedLocked()
	f.items[key] = obj
	f.enqueueLocked(key)
	return nil
}

// Update is Add.
func (f *FIFO) Update(obj interface{}) error {
	return f.Add(obj)
}

// Delete drops the object stored under obj's key; a queued key stays queued and Pop skips it.
// It fails only with a KeyError.
func (f *FIFO) Delete(obj interface{}) error {
	key, err := f.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	f.checkSyncedLocked()
	delete(f.items, key)
	return nil
}

// Pop waits for a queued key whose object is still stored, removes it, and calls process with
// the object (outside the lock) and whether it belongs to the first Replace's objects not yet
// processed. It returns the object and process's error, or ErrFIFOClosed once the FIFO is
// closed and empty. Pop is for a single consumer goroutine.
func (f *FIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.mu.Lock()
	for {
		key, ok := f.queue.Pop()
		if !ok {
			if f.closed {
				f.mu.Unlock()
				return nil, ErrFIFOClosed
			}
			changed := f.changed
			f.watched = true
			f.mu.Unlock()
			<-changed
			f.mu.Lock()
			continue
		}
		delete(f.queued, key)
		isInInitialList := !f.syncedClosed
		initial := f.initialPopulationCount > 0
		if initial {
			f.initialPopulationCount--
		}
		item, ok := f.items[key]
		if !ok {
			// Deleted while queued: nothing to process, so the count can settle now.
			f.checkSyncedLocked()
			continue
		}
		delete(f.items, key)
		f.mu.Unlock()

		err := process(item, isInInitialList)
		if initial {
			f.mu.Lock()
			f.checkSyncedLocked()
			f.mu.Unlock()
		}
		return item, err
	}
}

// Replace makes list the FIFO's whole content and queues each of its keys once, in list order
// (a repeated key keeps its last object). The first Replace sets the number of objects
// HasSynced waits for. The resource version is ignored. If a key cannot be computed, Replace
// returns the KeyError and changes nothing.
func (f *FIFO) Replace(list []interface{}, resourceVersion string) error {
	items := make(map[string]interface{}, len(list))
	order := make([]string, 0, len(list))
	for _, obj := range list {
		key, err := f.keyFunc(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		if _, dup := items[key]; !dup {
			order = append(order, key)
		}
		items[key] = obj
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(items)
		f.checkSyncedLocked()
	}
	f.items = items
	f.queue.Reset()
	clear(f.queued)
	for _, key := range order {
		f.enqueueLocked(key)
	}
	return nil
}

// Resync queues every stored key that is not queued.
func (f *FIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key := range f.items {
		f.enqueueLocked(key)
	}
	return nil
}
