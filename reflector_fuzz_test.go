package cache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/kcache/cache/internal/features"
	fcache "github.com/kcache/cache/testing"
)

// FuzzReflector runs an informer — its Reflector, its queue (DeltaFIFO, or RealFIFO with or
// without atomic replace, chosen by the setup byte), watch-list on or off — against a server
// whose behaviour the fuzzer writes: the fake source's changes, compactions, broken watches,
// bookmarks, ERROR events and malformed events, and a proxy in front of it (fzProxy) that fails
// lists and watches, answers with something that is not a list, repeats a key in a list,
// returns short pages and expires continue tokens between them, and cuts, errors or strips
// streams — a 410 in the middle of a watch-list, a lost
// initial-events-end bookmark, bookmarks without a version. Everything runs in a synctest
// bubble, so backoffs and watch timeouts pass in fake time.
//
// Invariants: no panic and no goroutine left behind (synctest fails on either); no handler
// sees a key go back to an older resourceVersion; every malformed event and list that reached
// the Reflector produced its documented error (watch events are logged and dropped, a LIST
// that is not a list fails the round); a malformed event that arrives while the cache is in
// step with the server leaves it in step; and once the server is well-behaved and quiet, the
// indexer and the handler's view equal the source and LastSyncResourceVersion is the source's.
//
// The Reflector trusts the server's resource versions, as client-go does: after an event the
// fuzzer replays out of resourceVersion order, the Reflector may resume a watch from that
// older version, and keys may then legitimately go back before they go forward. Runs with such
// events skip the monotonicity check, and the quiet server breaks the watch and expires the
// next one (as after a compaction) so that the Reflector relists.
func FuzzReflector(f *testing.F) {
	f.Add(byte(0), []byte{0, 0, 0, 1, 2, 0, 3, 0, 12, 2, 0, 3})
	f.Add(byte(1), []byte{0, 0, 11, 0x12, 0, 1, 12, 3, 4, 0, 12, 4, 0, 2})
	f.Add(byte(2), []byte{0, 0, 10, 6, 8, 0, 8, 1, 8, 2, 12, 3, 0, 4})
	f.Add(byte(3), []byte{11, 0x15, 0, 1, 6, 0, 12, 2, 10, 0, 4, 0, 12, 5})
	f.Add(byte(4), []byte{13, 1, 10, 5, 10, 7, 4, 0, 12, 5, 2, 1, 0, 2, 5, 1})
	f.Add(byte(5), []byte{9, 0, 0, 0, 9, 1, 3, 0, 12, 4, 7, 2, 12, 4})
	// A 410 on the watch, then on the relist at the last version, then a 500 on the retry from
	// "", so that the next round lists from "" in pages, and its continue token expires after
	// the first page.
	f.Add(byte(0x3c), []byte{10, 0, 10, 2, 10, 8, 10, 9, 11, 0, 3, 0, 12, 3, 12, 5})
	f.Add(byte(0x38), []byte{10, 0, 10, 2, 10, 8, 10, 9, 11, 0, 3, 0, 12, 3, 12, 5})
	// A server without a watch cache pages the first list at "0", so the Reflector pages
	// every list.
	f.Add(byte(0x6c), []byte{0, 0, 10, 9, 11, 0, 3, 0, 12, 3, 0, 1, 12, 5})
	f.Fuzz(func(t *testing.T, setup byte, ops []byte) {
		if len(ops) > 120 {
			ops = ops[:120]
		}
		// setup: bit 0 watch-list, bits 1-2 the queue, bits 3-4 the initial objects (1-4),
		// bit 5 short pages, bit 6 a server that pages lists at "0".
		watchList := setup&1 != 0
		fifo := int(setup>>1&3) % 3
		features.SetForTesting(t, features.WatchListClient, watchList)
		features.SetForTesting(t, features.InOrderInformers, fifo != 0)
		features.SetForTesting(t, features.AtomicFIFO, fifo == 2)
		features.SetForTesting(t, features.UnlockWhileProcessingFIFO, fifo == 2)
		errs := fzCaptureErrors(t)
		synctest.Test(t, func(t *testing.T) {
			var pageCap int64
			if setup&0x20 != 0 {
				pageCap = 2
			}
			h := newFzHarness(t, errs, int(setup>>3&3), pageCap, setup&0x40 != 0)
			h.run(ops)
		})
	})
}

// fzErrors collects what goes to utilruntime's error handlers: the messages of dropped
// watch events.
type fzErrors struct {
	mu   sync.Mutex
	msgs map[string]int
}

// fzCaptureErrors replaces utilruntime.ErrorHandlers (which would also sleep, see
// reflTestNoErrorBackoff) until the end of the test.
func fzCaptureErrors(t *testing.T) *fzErrors {
	e := &fzErrors{msgs: map[string]int{}}
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(_ context.Context, _ error, msg string, _ ...interface{}) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.msgs[msg]++
		},
	}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	return e
}

func (e *fzErrors) count(msg string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.msgs[msg]
}

// fzView is a handler that rebuilds the source's state from its notifications and records
// every notification that took a key back to an older resourceVersion.
type fzView struct {
	mu        sync.Mutex // mu guards the fields below
	objects   map[string]string
	newest    map[string]int
	backwards []string
}

func newFzView() *fzView {
	return &fzView{objects: map[string]string{}, newest: map[string]int{}}
}

func (v *fzView) set(obj interface{}, how string) {
	p := obj.(*v1.Pod)
	key := p.Namespace + "/" + p.Name
	rv, _ := strconv.Atoi(p.ResourceVersion)
	v.mu.Lock()
	defer v.mu.Unlock()
	if rv < v.newest[key] {
		v.backwards = append(v.backwards, fmt.Sprintf("%s %s@%d after @%d", how, key, rv, v.newest[key]))
	}
	v.newest[key] = max(v.newest[key], rv)
	v.objects[key] = p.ResourceVersion
}

func (v *fzView) OnAdd(obj interface{}, _ bool) { v.set(obj, "add") }
func (v *fzView) OnUpdate(_, obj interface{})   { v.set(obj, "update") }
func (v *fzView) OnDelete(obj interface{}) {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		panic(err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.objects, key)
}

func (v *fzView) snapshot() (map[string]string, []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.objects), append([]string(nil), v.backwards...)
}

const fzKeys = 5

// fzHarness is one run: the source, the proxy, the informer and what the checks need.
type fzHarness struct {
	t     *testing.T
	errs  *fzErrors
	src   *fcache.FakeControllerSource
	proxy *fzProxy
	inf   SharedIndexInformer
	view  *fzView
	// roundErrs are the errors of failed ListAndWatch rounds.
	roundMu   sync.Mutex
	roundErrs []error
	// history holds every version of each key the source recorded, for stale replays.
	history map[string][]*v1.Pod
	// corrupt is set once an event went out of resourceVersion order.
	corrupt bool
	stop    func()
	log     []string
}

func newFzHarness(t *testing.T, errs *fzErrors, initial int, pageCap int64, pageZero bool) *fzHarness {
	discard := logr.Discard()
	src := fcache.New(fcache.Options{
		NewListFunc:                 func() runtime.Object { return &v1.PodList{} },
		Logger:                      &discard,
		PaginateResourceVersionZero: pageZero,
	})
	h := &fzHarness{t: t, errs: errs, src: src, proxy: newFzProxy(src), view: newFzView(), history: map[string][]*v1.Pod{}}
	h.proxy.pageCap = pageCap
	// At least one object: a source that has recorded nothing lists at resourceVersion "0",
	// which a real server never does, and from which a watch never moves the version on.
	for i := range initial + 1 {
		h.upsert(i, 0)
	}
	h.inf = NewSharedIndexInformerWithOptions(h.proxy, &v1.Pod{}, SharedIndexInformerOptions{
		Indexers: Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
	})
	if err := h.inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *Reflector, err error) {
		h.roundMu.Lock()
		defer h.roundMu.Unlock()
		h.roundErrs = append(h.roundErrs, err)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.inf.AddEventHandler(h.view); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), discard))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.inf.RunWithContext(ctx)
	}()
	h.stop = func() {
		cancel()
		<-done
	}
	return h
}

func fzKey(i int) string { return "k" + strconv.Itoa(i%fzKeys) }

// upsert adds key i, or modifies it when the source has it.
func (h *fzHarness) upsert(i int, gen byte) {
	name := fzKey(i)
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{"gen": strconv.Itoa(int(gen))}}}
	if h.has(name) {
		h.src.Modify(p)
	} else {
		h.src.Add(p)
	}
	h.history[name] = append(h.history[name], p.DeepCopy())
}

func (h *fzHarness) has(name string) bool {
	_, ok := h.sourceState()["ns/"+name]
	return ok
}

func (h *fzHarness) sourceState() map[string]string {
	list, err := h.src.List(metav1.ListOptions{})
	if err != nil {
		h.t.Fatalf("source list: %v", err)
	}
	out := map[string]string{}
	for _, p := range list.(*v1.PodList).Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}

// inStep reports whether the indexer and the handler equal the source and the informer's
// resource version is the source's.
func (h *fzHarness) inStep() bool {
	want := h.sourceState()
	view, _ := h.view.snapshot()
	return maps.Equal(infTestStoreState(h.inf.GetStore()), want) && maps.Equal(view, want) &&
		h.inf.LastSyncResourceVersion() == strconv.Itoa(h.src.ResourceVersion())
}

// fzAPIErrors are the errors the fuzzer makes lists, watches and ERROR events fail with.
var fzAPIErrors = []func() error{
	fcache.ExpiredError,
	func() error { return reflTestGone() },
	fcache.InternalError,
	func() error { return fcache.TooManyRequestsError(1) },
	fcache.ConnectionRefusedError,
	func() error { return tooLargeError() },
}

func tooLargeError() error {
	err := apierrors.NewTimeoutError("Too large resource version: 999, current: 1", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

// run applies ops, (operation, argument) byte pairs, then makes the server quiet and checks.
func (h *fzHarness) run(ops []byte) {
	defer h.stop()
	synctest.Wait()
	for i := 0; i+1 < len(ops); i += 2 {
		h.apply(i/2, ops[i]%16, ops[i+1])
		synctest.Wait()
	}
	h.quiet()
}

func (h *fzHarness) apply(step int, op, arg byte) {
	h.log = append(h.log, fmt.Sprintf("%d:%d/%d", step, op, arg))
	switch op {
	case 0, 1, 14, 15:
		h.upsert(int(arg), arg)
	case 2:
		if name := fzKey(int(arg)); h.has(name) {
			h.src.Delete(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}})
		}
	case 3:
		h.src.CloseWatches()
	case 4:
		h.src.ResetWatch()
	case 5:
		h.src.Compact(h.src.ResourceVersion() - int(arg%4))
	case 6:
		h.src.Bookmark()
	case 7:
		h.src.InjectError(fzAPIErrors[int(arg)%len(fzAPIErrors)]())
	case 8:
		h.injectMalformed(arg)
	case 9:
		// A past version of a key, replayed out of resourceVersion order.
		versions := h.history[fzKey(int(arg))]
		if len(versions) < 2 {
			return
		}
		old := versions[int(arg>>3)%(len(versions)-1)]
		h.corrupt = true
		h.src.Inject(watch.Event{Type: watch.Modified, Object: old.DeepCopy()})
	case 10:
		var f fzListFault
		switch k := int(arg) % (len(fzAPIErrors) + 4); {
		case k < len(fzAPIErrors):
			f.err = fzAPIErrors[k]()
		case k == len(fzAPIErrors):
			f.notList = true
		case k == len(fzAPIErrors)+1:
			f.nilList = true
		case k == len(fzAPIErrors)+2:
			f.dupKey = true
		default:
			f.expire = true
		}
		h.proxy.mu.Lock()
		h.proxy.listFaults = append(h.proxy.listFaults, f)
		h.proxy.mu.Unlock()
	case 11:
		var f fzWatchFault
		switch k := int(arg&15) % (len(fzAPIErrors) + 1 + int(numStreamFaults)); {
		case k < len(fzAPIErrors):
			f.err = fzAPIErrors[k]()
		case k == len(fzAPIErrors):
			f.nilWatch = true
		default:
			f.then = fzStreamFault(k - len(fzAPIErrors) - 1)
			f.after = int(arg>>4) % 4
		}
		h.proxy.mu.Lock()
		h.proxy.watchFaults = append(h.proxy.watchFaults, f)
		h.proxy.mu.Unlock()
	case 12:
		time.Sleep(time.Duration(1<<(arg%7)) * time.Second)
	case 13:
		h.src.SetWatchListSupported(arg&1 == 0)
	}
}

// injectMalformed sends a malformed event to the open watches. If the cache was in step with
// the server and nothing else is going on, it must still be afterwards, and the documented
// error must have been reported for every copy that reached the Reflector.
func (h *fzHarness) injectMalformed(arg byte) {
	var ev watch.Event
	switch arg % 3 {
	case 0:
		ev = watch.Event{Type: watch.Modified}
	case 1:
		ev = watch.Event{Type: watch.Added, Object: &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fzKey(int(arg >> 2))}}}
	case 2:
		// An ERROR event that does not carry a Status: it ends the watch like any ERROR.
		ev = watch.Event{Type: watch.Error, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "not-a-status"}}}
	}
	before := h.inStep()
	h.src.Inject(ev)
	synctest.Wait()
	if before && !h.inStep() {
		h.t.Fatalf("a malformed event (%s %T) put the cache out of step:\nstore %v\nsource %v\nops %v",
			ev.Type, ev.Object, infTestStoreState(h.inf.GetStore()), h.sourceState(), h.log)
	}
}

// quiet makes the server well-behaved and idle, then waits (in fake time, up to 20 minutes,
// which covers a watch timeout and the longest backoff) for the informer to catch up.
func (h *fzHarness) quiet() {
	h.proxy.setQuiet()
	h.src.SetWatchListSupported(true)
	if h.corrupt {
		// Break the watches and expire the next one, as a server does after compacting
		// the history: the Reflector relists.
		h.src.FailWatches(1, fcache.ExpiredError())
		h.src.CloseWatches()
	}
	for range 20 * 60 {
		synctest.Wait()
		if h.inStep() {
			break
		}
		time.Sleep(time.Second)
	}
	view, backwards := h.view.snapshot()
	want := h.sourceState()
	if !h.inStep() {
		h.t.Fatalf("the informer did not catch up with the quiet server within 20 minutes:\nindexer %v\nhandler %v\nsource  %v\nrv %q, source %d\nops %v\nround errors %v",
			infTestStoreState(h.inf.GetStore()), view, want, h.inf.LastSyncResourceVersion(), h.src.ResourceVersion(), h.log, h.rounds())
	}
	if len(backwards) > 0 && !h.corrupt {
		h.t.Fatalf("keys went back to older versions: %v\nops %v", backwards, h.log)
	}
	h.checkDocumentedErrors()
}

func (h *fzHarness) rounds() []string {
	h.roundMu.Lock()
	defer h.roundMu.Unlock()
	var out []string
	for _, err := range h.roundErrs {
		out = append(out, err.Error())
	}
	return out
}

// checkDocumentedErrors matches the malformed input the Reflector received with the errors
// its documentation promises.
func (h *fzHarness) checkDocumentedErrors() {
	h.proxy.mu.Lock()
	delivered := maps.Clone(h.proxy.delivered)
	h.proxy.mu.Unlock()
	for kind, msg := range map[string]string{
		"watch: nil object":                         "Watch event without an object",
		"watch: wrong type":                         "Unexpected watch event object type",
		"watch: bookmark without a resourceVersion": "Watch bookmark without a resourceVersion",
	} {
		if got, want := h.errs.count(msg), delivered[kind]; got != want {
			h.t.Fatalf("%d %q reported for %d events with a %s\nops %v", got, msg, want, kind, h.log)
		}
	}
	nilLists, notLists := 0, 0
	h.roundMu.Lock()
	for _, err := range h.roundErrs {
		switch {
		case errors.Is(err, errNilList):
			nilLists++
		case strings.Contains(err.Error(), "must be a list") || strings.Contains(err.Error(), "unable to understand list result"):
			notLists++
		}
	}
	h.roundMu.Unlock()
	if nilLists != delivered["list: nil"] || notLists != delivered["list: not a list"] {
		h.t.Fatalf("rounds failed for %d nil lists and %d non-lists; the Reflector got %d and %d\nops %v",
			nilLists, notLists, delivered["list: nil"], delivered["list: not a list"], h.log)
	}
}
