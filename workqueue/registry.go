package workqueue

import (
	"cmp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/kcache/cache/internal/callsite"
)

// QueueStatus is a snapshot of one live queue, as Queues returns it. kcache extension.
//
// The counts are kept for every queue. The durations need the bookkeeping of a measured queue
// (one with metrics, see MetricsProvider) or of a queue created after EnableTiming; for other
// queues Timed is false and they are zero.
type QueueStatus struct {
	// Name is the queue's name: the one given in its config, or its default name (see Queues).
	Name string
	// Named reports whether Name was given in the config; false for a default name.
	Named bool
	// Depth is the number of items waiting to be taken, as Len reports it.
	Depth int
	// Adds is the number of adds that made an item dirty since the queue was created (the
	// adds metric): an add of an item already waiting is not counted.
	Adds int64
	// Processing is the number of items taken by a worker and not yet Done.
	Processing int
	// Retries is the number of AddAfter calls (so AddRateLimited calls) of a delaying or
	// rate-limited queue (the retries metric); 0 for a plain queue.
	Retries int64
	// Delayed is the number of items of a delaying or rate-limited queue waiting for their
	// delay to pass; 0 for a plain queue.
	Delayed int

	// Timed reports whether the durations below were measured.
	Timed bool
	// UnfinishedWork is the sum over the items being processed of the time since their Get
	// (the unfinished-work metric).
	UnfinishedWork time.Duration
	// LongestRunning is the time since the Get of the item being processed longest (the
	// longest-running-processor metric).
	LongestRunning time.Duration
	// OldestWaiting is the time since the first add of the item that has waited longest to be
	// taken (the oldest-waiting metric of ExtendedMetricsProvider).
	OldestWaiting time.Duration
}

// Queues returns a snapshot of every live queue: every Typed queue and every delaying and
// rate-limited queue built on one, named or not, every priority queue of package
// priorityqueue, and the queues given to Register; sorted by name. A queue
// appears from its creation until its ShutDown or ShutDownWithDrain, or until it is garbage
// collected: the registry holds queues by weak pointer and never keeps one alive. Each queue is
// read under its own lock, one at a time, so the snapshot is consistent per queue, not across
// queues. Cost: O(queues), plus O(items waiting or processing) for a measured queue.
//
// A queue created without a name gets a default name, stable from run to run of the same
// program: the function that created it, as "package.Function" with the package's last path
// element ("controller.(*Controller).Run", "main.main"), the first caller outside this package
// and its sub-packages.
// The second queue created by the same function in a process is named "package.Function-2",
// the third "-3", and so on, in creation order. The default name is what Queues reports; the
// queue's metrics are recorded under it only with an ExtendedMetricsProvider.
//
// kcache extension.
func Queues() []QueueStatus {
	registry.mu.Lock()
	funcs := make([]func() (QueueStatus, bool), 0, len(registry.queues))
	for _, f := range registry.queues {
		funcs = append(funcs, f)
	}
	registry.mu.Unlock()

	out := make([]QueueStatus, 0, len(funcs))
	for _, f := range funcs {
		if s, ok := f(); ok {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b QueueStatus) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// registry holds the live queues.
var registry struct {
	// mu guards the fields below.
	mu     sync.Mutex
	nextID uint64
	// queues maps a registration id to a function that reads the queue's status, or reports
	// false once the queue has been collected.
	queues map[uint64]func() (QueueStatus, bool)
	// names counts the default names handed out per base name.
	names map[string]int
}

// Register adds q, a queue implemented outside this package, to Queues, until the returned
// stop is called (at the queue's shutdown) or q is garbage collected: q is held by weak
// pointer. Queues calls status(q) for the queue's entry, without holding any lock of its
// own; status must not keep q. The entry's Name and Named are set from name, or from a
// default name (see Queues) when name is empty, which Register returns; the function that
// creates the queue is the first caller outside this package and its sub-packages.
//
// kcache extension.
func Register[Q any](q *Q, name string, status func(q *Q) QueueStatus) (resolved string, stop func()) {
	qn := resolveName(name)
	wp := weak.Make(q)
	id := add(func() (QueueStatus, bool) {
		live := wp.Value()
		if live == nil {
			return QueueStatus{}, false
		}
		s := status(live)
		s.Name, s.Named = qn.name, qn.given
		return s, true
	})
	runtime.AddCleanup(q, unregister, id)
	return qn.name, func() { unregister(id) }
}

// register adds q to the registry until unregister(id) or until q is collected.
func register[T comparable](q *Typed[T]) (id uint64) {
	wp := weak.Make(q)
	id = add(func() (QueueStatus, bool) {
		live := wp.Value()
		if live == nil {
			return QueueStatus{}, false
		}
		return live.status(), true
	})
	runtime.AddCleanup(q, unregister, id)
	return id
}

// add puts a queue's status function in the registry and returns its id.
func add(read func() (QueueStatus, bool)) (id uint64) {
	registry.mu.Lock()
	if registry.queues == nil {
		registry.queues = make(map[uint64]func() (QueueStatus, bool))
	}
	registry.nextID++
	id = registry.nextID
	registry.queues[id] = read
	registry.mu.Unlock()
	return id
}

// unregister removes a queue from the registry. It may be called more than once.
func unregister(id uint64) {
	registry.mu.Lock()
	delete(registry.queues, id)
	registry.mu.Unlock()
}

// queueName is a queue's name and whether the user gave it.
type queueName struct {
	name  string
	given bool
}

// resolveName returns name as given, or a default name (see Queues) when it is empty.
func resolveName(name string) queueName {
	if name != "" {
		return queueName{name: name, given: true}
	}
	return queueName{name: defaultName(callerName())}
}

// callerName returns the name of the first function on the stack outside this package and
// priorityqueue (not, say, priorityqueue's tests), with its package path cut to the last
// element, or "workqueue" if there is none.
func callerName() string {
	f, ok := callsite.Caller("github.com/kcache/cache/workqueue", "github.com/kcache/cache/workqueue/priorityqueue")
	if !ok {
		return "workqueue"
	}
	name := f.Function
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// defaultName returns base for its first use in the process and base-N for its N-th.
func defaultName(base string) string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.names == nil {
		registry.names = make(map[string]int)
	}
	registry.names[base]++
	if n := registry.names[base]; n > 1 {
		return base + "-" + strconv.Itoa(n)
	}
	return base
}

// delayStatus is what a delaying queue adds to the status of the Typed queue it feeds.
type delayStatus interface {
	delayCounts() (delayed int, retries int64)
}
