package cache

import "sync"

// queueRingMin is the minimum capacity of the rings of DeltaFIFO and RealFIFO: the first
// chunk they allocate, and what they keep once drained. An informer's queue mostly holds a
// few deltas between pops, and a new one often only one Replace.
const queueRingMin = 4

// popWaker lets a consumer blocked on an empty queue sleep until a producer queues something
// or the queue is closed, without sync.Cond. The owner's mutex guards both fields; ch has
// capacity one, so a wake-up is never lost and producers never block. A consumer that wakes
// must re-check its condition: a wake-up may be stale. The zero value is ready: ch is made by
// the first consumer that waits, so a queue that is never waited on (one Replace and Pop on a
// full queue, say) does not allocate it. DeltaFIFO and RealFIFO use it.
type popWaker struct {
	ch      chan struct{}
	waiters int
}

// waitLocked releases mu, sleeps until woken, and re-acquires mu. mu must be held.
func (w *popWaker) waitLocked(mu *sync.Mutex) {
	if w.ch == nil {
		w.ch = make(chan struct{}, 1)
	}
	ch := w.ch
	w.waiters++
	mu.Unlock()
	<-ch
	mu.Lock()
	w.waiters--
}

// wakeLocked wakes one sleeping consumer, if any. The owner's mutex must be held. A consumer
// that takes an item and leaves more behind, or that returns because the queue is closed,
// calls it again to pass the wake-up on.
func (w *popWaker) wakeLocked() {
	if w.waiters == 0 {
		return
	}
	select {
	case w.ch <- struct{}{}:
	default:
	}
}
