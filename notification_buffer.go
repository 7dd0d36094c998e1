package cache

import "github.com/kcache/cache/internal/ring"

// notificationKind says which handler method a notification is for.
type notificationKind uint8

const (
	notifyAdd notificationKind = iota + 1
	notifyUpdate
	notifyDelete
)

// notification is one handler call waiting to be made. It is a plain value of two interfaces
// (32 bytes), so that queueing it does not allocate and a handler's backlog costs 32 bytes per
// call (client-go boxes each notification: 16 bytes in its buffer and a 32-byte allocation).
// The kind is folded into tag: an add or a delete carries one of the markers below, an update
// carries its old object, which can never be a marker (an unexported type). Build one with
// addNotification, updateNotification or deleteNotification.
type notification struct {
	obj interface{} // the new object of an add or update, the object of a delete
	tag interface{} // a *notificationMarker for an add or delete, the old object of an update
}

// notificationMarker is the tag of a notification that is not an update.
type notificationMarker struct {
	kind    notificationKind
	initial bool // an add of the initial list
}

var (
	markAdd        = &notificationMarker{kind: notifyAdd}
	markInitialAdd = &notificationMarker{kind: notifyAdd, initial: true}
	markDelete     = &notificationMarker{kind: notifyDelete}
)

// addNotification returns a notification for OnAdd(obj, isInInitialList).
func addNotification(obj interface{}, isInInitialList bool) notification {
	if isInInitialList {
		return notification{obj: obj, tag: markInitialAdd}
	}
	return notification{obj: obj, tag: markAdd}
}

// updateNotification returns a notification for OnUpdate(oldObj, newObj).
func updateNotification(oldObj, newObj interface{}) notification {
	return notification{obj: newObj, tag: oldObj}
}

// deleteNotification returns a notification for OnDelete(obj).
func deleteNotification(obj interface{}) notification {
	return notification{obj: obj, tag: markDelete}
}

// kind returns which handler method n is for.
func (n notification) kind() notificationKind {
	if m, ok := n.tag.(*notificationMarker); ok {
		return m.kind
	}
	return notifyUpdate
}

// isInitialAdd reports whether n is an add of the initial list.
func (n notification) isInitialAdd() bool {
	m, ok := n.tag.(*notificationMarker)
	return ok && m.initial
}

// coalesceEvent says whether a notificationBuffer operation began or ended a coalescing
// episode, so that the caller can log it after releasing its lock.
type coalesceEvent uint8

const (
	coalesceNone coalesceEvent = iota
	coalesceStarted
	coalesceStopped
)

// delivery is what a listener does for one element of its buffer: call the handler with n
// (unless call is false: the key appeared and vanished while coalesced), then tell the sync
// tracker that initialAdds initial-list adds are processed.
type delivery struct {
	n           notification
	call        bool
	initialAdds int
}

// pendingKey is what a coalescing buffer keeps for one object key: the first notification that
// became pending for it (which tells what the handler saw before), the last one (the newest
// state), and how many were folded together.
type pendingKey struct {
	key   string
	keyed bool // false for a notification whose key could not be computed
	// lastSeen is what the handler last received for the key before first, when first is a
	// delete (whose object is the deleted state as reported, not what the handler has).
	lastSeen    interface{}
	first, last notification
	count       int
	initialAdds int
}

// addRun is a run of adds queued as one element of a plain buffer (PushRun): the objects of an
// initial list, or of the cache for a handler added late, delivered as one OnAdd each, in
// order. objs is the informer's own list, shared by every listener's run and never written;
// next is this run's cursor.
type addRun struct {
	objs    []interface{}
	next    int
	initial bool
}

// markAddRun tags a notification whose obj is an *addRun. It never leaves notificationBuffer:
// Pop hands out the run's adds one by one.
var markAddRun = &notificationMarker{kind: notifyAdd}

// notificationBuffer holds the notifications waiting for one handler. It is the deterministic
// core of processorListener: no locks, goroutines or clock; the listener guards it with its
// mutex.
//
// With maxPending < 0 it is a plain FIFO (client-go's behaviour). Otherwise, as soon as more
// than maxPending notifications wait, it switches to coalescing: the queued notifications and
// every later one are folded per object key (DeletionHandlingMetaNamespaceKeyFunc) into one
// pendingKey, kept in the order the keys first became pending, so memory is O(keys waiting).
// pop resolves a pendingKey into at most one notification (see resolve). When the last
// pendingKey is popped the buffer returns to plain FIFO mode. A notification whose key cannot
// be computed is never folded: it waits, unchanged, in its place in the order.
type notificationBuffer struct {
	maxPending int

	// plain holds the notifications in FIFO mode; it is empty while coalescing. With
	// maxPending < 0 an element may be a run of adds (PushRun); runExtra counts the adds the
	// runs in plain hold beyond one each.
	plain    ring.Ring[notification]
	runExtra int

	// coalescing is true from the push that exceeded maxPending until order drains.
	coalescing bool
	// order holds the pendingKeys in the order their keys became pending.
	order ring.Ring[*pendingKey]
	// byKey indexes the keyed pendingKeys of order; nil outside an episode.
	byKey map[string]*pendingKey
	// delivered maps each key to the object last popped for delivery (what the handler has
	// or is about to receive); deleted keys are removed. Kept only when maxPending >= 0: it
	// gives a pendingKey that starts with a delete the exact object the handler last
	// received. It costs one key computation per delivery and O(keys the handler has)
	// pointers, mostly shared with the informer's cache.
	delivered map[string]interface{}

	// coalescedAway counts notifications that were folded and never delivered on their own.
	coalescedAway uint64
	// episodes counts the switches to coalescing.
	episodes uint64
}

// newNotificationBuffer returns an empty buffer that coalesces above maxPending waiting
// notifications, or never if maxPending is negative.
func newNotificationBuffer(maxPending int) notificationBuffer {
	b := notificationBuffer{maxPending: maxPending, plain: *ring.New[notification](initialBufferSize)}
	if maxPending >= 0 {
		b.delivered = map[string]interface{}{}
	}
	return b
}

// Len returns the number of deliveries waiting: notifications, or keys while coalescing. O(1).
func (b *notificationBuffer) Len() int {
	if b.coalescing {
		return b.order.Len()
	}
	return b.plain.Len() + b.runExtra
}

// Cap returns the slots allocated for plain notifications. O(1).
func (b *notificationBuffer) Cap() int { return b.plain.Cap() }

// Reset drops everything waiting. Statistics and the record of deliveries are kept. O(1).
func (b *notificationBuffer) Reset() {
	b.plain.Reset()
	b.runExtra = 0
	b.order.Reset()
	b.byKey = nil
	b.coalescing = false
}

// Drop releases everything, the record of deliveries included; for a listener that stops.
func (b *notificationBuffer) Drop() {
	b.Reset()
	b.delivered = nil
}

// Push queues n. It reports coalesceStarted when n made the buffer switch to coalescing.
// Amortised O(1), except the switch itself, which folds the maxPending+1 queued
// notifications.
func (b *notificationBuffer) Push(n notification) coalesceEvent {
	if b.coalescing {
		b.fold(n)
		return coalesceNone
	}
	b.plain.Push(n)
	if b.maxPending < 0 || b.plain.Len() <= b.maxPending {
		return coalesceNone
	}
	b.coalescing = true
	b.episodes++
	b.byKey = make(map[string]*pendingKey, b.plain.Len())
	for {
		m, ok := b.plain.Pop()
		if !ok {
			break
		}
		b.fold(m)
	}
	b.plain.Reset()
	return coalesceStarted
}

// PushRun queues an add of each of objs, in order, all with isInInitialList initial; objs
// must not change afterwards. A buffer that never coalesces (maxPending < 0, client-go's
// behaviour) keeps them as one element that points into objs, so a handler behind an initial
// list of n objects costs one element instead of n notifications; otherwise each is pushed
// as Push would. It reports coalesceStarted when the adds made the buffer switch to
// coalescing.
func (b *notificationBuffer) PushRun(objs []interface{}, initial bool) coalesceEvent {
	if b.maxPending >= 0 || len(objs) == 1 {
		ev := coalesceNone
		for _, obj := range objs {
			if b.Push(addNotification(obj, initial)) == coalesceStarted {
				ev = coalesceStarted
			}
		}
		return ev
	}
	if len(objs) > 0 {
		b.plain.Push(notification{obj: &addRun{objs: objs, initial: initial}, tag: markAddRun})
		b.runExtra += len(objs) - 1
	}
	return coalesceNone
}

// popPlain removes the oldest notification of a plain buffer: the oldest element, or the next
// add of the run at its head.
func (b *notificationBuffer) popPlain() (notification, bool) {
	n, ok := b.plain.Peek()
	if !ok {
		return notification{}, false
	}
	if m, _ := n.tag.(*notificationMarker); m != markAddRun {
		b.plain.Pop()
		return n, true
	}
	run := n.obj.(*addRun)
	obj := run.objs[run.next]
	run.next++
	if run.next == len(run.objs) {
		b.plain.Pop()
	} else {
		b.runExtra--
	}
	return addNotification(obj, run.initial), true
}

// fold adds n to its key's pendingKey, or appends a new one.
func (b *notificationBuffer) fold(n notification) {
	initialAdds := 0
	if n.isInitialAdd() {
		initialAdds = 1
	}
	key, err := listedKey(n.obj)
	if err != nil {
		b.order.Push(&pendingKey{first: n, last: n, count: 1, initialAdds: initialAdds})
		return
	}
	if pk, ok := b.byKey[key]; ok {
		pk.last = n
		pk.count++
		pk.initialAdds += initialAdds
		return
	}
	pk := &pendingKey{key: key, keyed: true, first: n, last: n, count: 1, initialAdds: initialAdds}
	if n.kind() == notifyDelete {
		if seen, ok := b.delivered[key]; ok {
			pk.lastSeen = seen
		} else {
			pk.lastSeen = finalStateOf(n.obj) // the handler was never told about the key
		}
	}
	b.byKey[key] = pk
	b.order.Push(pk)
}

// Pop removes the oldest waiting element and returns what to deliver for it; ok is false if
// nothing waits. It reports coalesceStopped when it drained a coalescing episode.
func (b *notificationBuffer) Pop() (d delivery, ok bool, ev coalesceEvent) {
	if !b.coalescing {
		n, ok := b.popPlain()
		if !ok {
			return delivery{}, false, coalesceNone
		}
		d = delivery{n: n, call: true}
		if n.isInitialAdd() {
			d.initialAdds = 1
		}
		b.recordDelivery(d.n, "", false)
		return d, true, coalesceNone
	}
	pk, _ := b.order.Pop() // never empty while coalescing
	if pk.keyed {
		delete(b.byKey, pk.key)
	}
	d = pk.resolve()
	b.coalescedAway += uint64(pk.count)
	if d.call {
		b.coalescedAway--
		b.recordDelivery(d.n, pk.key, pk.keyed)
	}
	if b.order.Len() == 0 {
		b.Reset()
		ev = coalesceStopped
	}
	return d, true, ev
}

// recordDelivery notes in delivered what the handler receives with n, for the given key or,
// unless keyed, the key of n's object.
func (b *notificationBuffer) recordDelivery(n notification, key string, keyed bool) {
	if b.delivered == nil {
		return
	}
	if !keyed {
		var err error
		if key, err = listedKey(n.obj); err != nil {
			return
		}
	}
	if n.kind() == notifyDelete {
		delete(b.delivered, key)
	} else {
		b.delivered[key] = n.obj
	}
}

// resolve turns the notifications folded into pk into at most one. A single notification is
// delivered unchanged. Otherwise, with lastSeen the state the handler received before the
// first one (the old object of an update; for a delete, the object last delivered for the
// key; nothing for an add):
//   - the key exists now and the handler had not seen it: OnAdd(newest), an initial-list add
//     if the first notification was one;
//   - the key exists and the handler had seen it: OnUpdate(lastSeen, newest);
//   - the key is gone and the handler had seen it: OnDelete of a DeletedFinalStateUnknown
//     holding the last known state (the handler missed intermediate states);
//   - the key is gone and the handler had not seen it: nothing.
func (pk *pendingKey) resolve() delivery {
	d := delivery{initialAdds: pk.initialAdds}
	if pk.count == 1 {
		d.n, d.call = pk.first, true
		return d
	}
	first, last := pk.first.kind(), pk.last.kind()
	seen := first != notifyAdd
	lastSeen := pk.lastSeen
	if first == notifyUpdate {
		lastSeen = pk.first.tag // an update's old object
	}
	switch {
	case last != notifyDelete && !seen:
		d.n = addNotification(pk.last.obj, pk.first.isInitialAdd())
		d.call = true
	case last != notifyDelete:
		d.n = updateNotification(lastSeen, pk.last.obj)
		d.call = true
	case seen:
		d.n = deleteNotification(DeletedFinalStateUnknown{Key: pk.key, Obj: finalStateOf(pk.last.obj)})
		d.call = true
	}
	return d
}

// finalStateOf returns the object inside a DeletedFinalStateUnknown, or obj itself.
func finalStateOf(obj interface{}) interface{} {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}
