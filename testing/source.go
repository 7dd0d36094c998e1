package testing

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ErrShutdown is returned by List and Watch after Shutdown.
var ErrShutdown = errors.New("testing: the fake source is shut down")

// Options configure a FakeControllerSource. The zero value gives client-go's behaviour plus
// everything this package adds, with a real clock.
type Options struct {
	// Clock measures watch timeouts (ListOptions.TimeoutSeconds). Defaults to
	// clock.RealClock{}; tests pass a k8s.io/utils/clock/testing.FakeClock and step it.
	Clock clock.Clock

	// NewFunc returns an empty object of the served type. The source uses it for bookmark
	// events, which a Reflector drops unless they have its expected type. Defaults to a new
	// zero value of the type of the first object recorded (for *unstructured.Unstructured,
	// one with the same apiVersion and kind). Until then, without NewFunc, Bookmark sends
	// nothing and a streaming list (SendInitialEvents) fails with an InternalError.
	NewFunc func() runtime.Object

	// NewListFunc returns an empty list that List fills with meta.SetList, such as
	// &v1.ConfigMapList{}. Defaults to &metav1.List{}, which holds any kind of object.
	NewListFunc func() runtime.Object

	// FieldsFunc returns the fields of an object that field selectors match. Defaults to
	// DefaultFields (metadata.name and metadata.namespace); with the default, a selector on
	// any other field is rejected with BadRequest, as a real server does for an unsupported
	// field. With a FieldsFunc, selectors on fields it does not return match the empty value.
	FieldsFunc func(obj runtime.Object) fields.Set

	// HistoryLimit, if positive, keeps only that many recorded changes, compacting older ones
	// as new ones arrive (see Compact). Defaults to 0: every change is kept, as in client-go.
	HistoryLimit int

	// MaxWatchQueue, if positive, bounds the events waiting to be read on one watch; a watch
	// that falls further behind is closed, like a real server dropping a slow watcher, and
	// its consumer must resume it from its last resource version. Defaults to 0: the queue
	// grows as needed and the source never blocks on a watcher.
	MaxWatchQueue int

	// PaginateResourceVersionZero makes lists at resourceVersion "0" honour Limit, like a
	// server without a watch cache. Defaults to false: as on a real server with its watch
	// cache, a "0" list ignores Limit and returns everything in one page.
	PaginateResourceVersionZero bool

	// Rand decides which changes Change sends when its probability is between 0 and 1.
	// Defaults to a generator with a fixed seed, so runs repeat.
	Rand *rand.Rand

	// Logger reports changes the source refuses to record. Defaults to klog.Background().
	Logger *klog.Logger
}

// FakeControllerSource is an in-memory API server for one resource: it implements the
// ListerWatcher shape (List, Watch, ListWithContext, WatchWithContext) and the methods of
// client-go's FakeControllerSource (k8s.io/client-go/tools/cache/testing), plus paginated
// lists, resource version semantics, compaction, bookmarks, streaming lists, selectors and
// fault injection. See the package documentation for the behaviour.
//
// A FakeControllerSource is safe for concurrent use. It never blocks on a watcher: each
// watch has its own queue and goroutine.
type FakeControllerSource struct {
	// ListError, when not nil, is returned by every List call, as in client-go. Set it before
	// the source is used from several goroutines, or use SetListError.
	ListError error

	opts   Options
	logger klog.Logger

	// mu guards every field below.
	mu          sync.Mutex
	hist        history
	watchers    map[*watcher]struct{}
	proto       runtime.Object // the first object recorded, for NewFunc's default
	rand        *rand.Rand
	shutdown    bool
	noWatchList bool
	listFaults  []error
	watchFaults []error
	hook        RequestHook
	requests    []Request
	changed     chan struct{} // closed and replaced when requests or watchers change
}

// NewFakeControllerSource returns an empty source with default Options, like client-go's
// constructor of the same name.
func NewFakeControllerSource() *FakeControllerSource {
	return New(Options{})
}

// New returns an empty source configured by opts.
func New(opts Options) *FakeControllerSource {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	f := &FakeControllerSource{
		opts:     opts,
		logger:   klog.Background(),
		hist:     newHistory(),
		watchers: map[*watcher]struct{}{},
		rand:     opts.Rand,
		changed:  make(chan struct{}),
	}
	if opts.Logger != nil {
		f.logger = *opts.Logger
	}
	if f.rand == nil {
		f.rand = rand.New(rand.NewPCG(1, 2))
	}
	return f
}

// Add records obj as added and sends an Added event to the open watches. obj's
// ResourceVersion is set to the new version; the source keeps a deep copy.
func (f *FakeControllerSource) Add(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Added, Object: obj}, 1)
}

// Modify records obj as modified and sends a Modified event. obj's ResourceVersion is set.
func (f *FakeControllerSource) Modify(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Modified, Object: obj}, 1)
}

// Delete records lastValue as deleted and sends a Deleted event carrying it. lastValue's
// ResourceVersion is set.
func (f *FakeControllerSource) Delete(lastValue runtime.Object) {
	f.Change(watch.Event{Type: watch.Deleted, Object: lastValue}, 1)
}

// AddDropWatch records obj as added without telling the open watches, as if their
// connection lost the event. A watch started later from an older version still gets it.
func (f *FakeControllerSource) AddDropWatch(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Added, Object: obj}, 0)
}

// ModifyDropWatch records obj as modified without telling the open watches.
func (f *FakeControllerSource) ModifyDropWatch(obj runtime.Object) {
	f.Change(watch.Event{Type: watch.Modified, Object: obj}, 0)
}

// DeleteDropWatch records lastValue as deleted without telling the open watches.
func (f *FakeControllerSource) DeleteDropWatch(lastValue runtime.Object) {
	f.Change(watch.Event{Type: watch.Deleted, Object: lastValue}, 0)
}

// Change records e — an Added, Modified or Deleted event — at the next resource version,
// which is written into e.Object, and sends it to the open watches with probability
// watchProbability (1 always, 0 never; in between, Options.Rand decides). As in client-go,
// objects are keyed by namespace, name and UID; Added and Modified store the object whether
// or not it existed, and Deleted removes it if it exists and is recorded either way.
//
// Events of another type, a nil object, an object without metadata, and any change after
// Shutdown are not recorded: the source logs an error and drops them (client-go panics).
func (f *FakeControllerSource) Change(e watch.Event, watchProbability float64) {
	if err := f.change(e, watchProbability); err != nil {
		f.logger.Error(err, "Fake source dropped a change", "type", e.Type)
	}
}

func (f *FakeControllerSource) change(e watch.Event, watchProbability float64) error {
	switch e.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		return fmt.Errorf("testing: cannot record a %s event; use Bookmark, InjectError or Inject", e.Type)
	}
	if isNil(e.Object) {
		return errors.New("testing: cannot record a change without an object")
	}
	m, err := meta.Accessor(e.Object)
	if err != nil {
		return fmt.Errorf("testing: cannot record a change of %T: %w", e.Object, err)
	}
	stored := e.Object.DeepCopyObject()
	sm, err := meta.Accessor(stored)
	if err != nil {
		return fmt.Errorf("testing: cannot record a change of %T: %w", e.Object, err)
	}
	key := objKey{namespace: m.GetNamespace(), name: m.GetName(), uid: m.GetUID()}
	a := computeAttrs(stored, sm, f.opts.FieldsFunc)

	f.mu.Lock()
	if f.shutdown {
		f.mu.Unlock()
		return ErrShutdown
	}
	rv := strconv.Itoa(f.hist.lastRV + 1)
	sm.SetResourceVersion(rv)
	live := f.decideLocked(watchProbability)
	c := f.hist.record(e.Type, key, entry{obj: stored, attrs: a}, live)
	if f.proto == nil {
		f.proto = stored
	}
	if live {
		for w := range f.watchers {
			if !w.offerLocked(c) {
				f.dropLocked(w, abort)
			}
		}
	}
	if limit := f.opts.HistoryLimit; limit > 0 && len(f.hist.changes) > limit {
		f.hist.compact(f.hist.lastRV - limit)
	}
	f.mu.Unlock()

	m.SetResourceVersion(rv)
	return nil
}

func (f *FakeControllerSource) decideLocked(p float64) bool {
	switch {
	case p >= 1:
		return true
	case p <= 0:
		return false
	}
	return f.rand.Float64() < p
}

// ResourceVersion returns the current resource version: the version of the last recorded
// change, 0 for a source that has recorded none.
func (f *FakeControllerSource) ResourceVersion() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hist.lastRV
}

// Len returns the number of stored objects.
func (f *FakeControllerSource) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.hist.items)
}

// Compact forgets the changes at or below resource version rv, as etcd compaction does: a
// watch from an older version, an exact list at one, and a continue token of a list taken at
// one then fail with 410 Expired. Open watches are not affected. rv is clamped to the
// versions the source has.
func (f *FakeControllerSource) Compact(rv int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hist.compact(rv)
}

// ResetWatch simulates a lost connection, as in client-go: every open watch is closed after
// the events already queued for it, and all history is compacted, so resuming a watch from
// any version but the current one fails with 410 Expired and the client has to relist.
func (f *FakeControllerSource) ResetWatch() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropAllLocked(drain)
	f.hist.compact(f.hist.lastRV)
}

// Shutdown closes every open watch after the events already queued for it. Later List and
// Watch calls fail with ErrShutdown and later changes are dropped. Unlike client-go's,
// which leaves the source locked, any method may still be called. Shutdown is idempotent.
func (f *FakeControllerSource) Shutdown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shutdown = true
	f.dropAllLocked(drain)
}

// Bookmark sends a Bookmark event carrying the current resource version to every open watch
// that asked for bookmarks (AllowWatchBookmarks). It sends nothing while the object type is
// unknown (see Options.NewFunc).
func (f *FakeControllerSource) Bookmark() {
	obj, err := f.newObject()
	if err != nil {
		f.logger.Error(err, "Fake source sent no bookmark")
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		f.logger.Error(err, "Fake source sent no bookmark")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m.SetResourceVersion(strconv.Itoa(f.hist.lastRV))
	for w := range f.watchers {
		if w.bookmarks && !w.pushLocked(queued{typ: watch.Bookmark, obj: obj, copy: true}) {
			f.dropLocked(w, abort)
		}
	}
}

// errNoType is returned when the source needs an object of the served type and cannot make one.
var errNoType = errors.New("testing: the object type is not known yet: set Options.NewFunc or record an object first")

// newObject returns an empty object of the served type; see Options.NewFunc. It may call
// user code, so it must not run under the source's lock.
func (f *FakeControllerSource) newObject() (runtime.Object, error) {
	if f.opts.NewFunc != nil {
		obj := f.opts.NewFunc()
		if isNil(obj) {
			return nil, errors.New("testing: Options.NewFunc returned nil")
		}
		return obj, nil
	}
	f.mu.Lock()
	proto := f.proto
	f.mu.Unlock()
	if proto == nil {
		return nil, errNoType
	}
	if u, ok := proto.(*unstructured.Unstructured); ok {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(u.GroupVersionKind())
		return obj, nil
	}
	t := reflect.TypeOf(proto)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("testing: cannot make an empty %T: set Options.NewFunc", proto)
	}
	obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("testing: cannot make an empty %T: set Options.NewFunc", proto)
	}
	obj.GetObjectKind().SetGroupVersionKind(proto.GetObjectKind().GroupVersionKind())
	return obj, nil
}

// dropLocked forgets w and ends its stream the given way.
func (f *FakeControllerSource) dropLocked(w *watcher, how ending) {
	delete(f.watchers, w)
	w.finish(how)
	f.notifyLocked()
}

func (f *FakeControllerSource) dropAllLocked(how ending) {
	for w := range f.watchers {
		f.dropLocked(w, how)
	}
}

// forget is called by a watcher's goroutine when it exits.
func (f *FakeControllerSource) forget(w *watcher) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.watchers[w]; ok {
		f.dropLocked(w, abort)
	}
}

// notifyLocked wakes everyone waiting in WaitForWatchers or WaitForRequests.
func (f *FakeControllerSource) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// isNil reports whether obj is nil or a nil pointer.
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// initialEventsEnd marks the bookmark that ends a streaming list's initial events.
var initialEventsEnd = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
