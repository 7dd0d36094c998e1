package cache

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// coTestHandler announces each call on entered, waits for a token on gate, then records it.
type coTestHandler struct {
	entered chan string
	gate    chan struct{}
	events  chan string
	// view is what the handler was told, per key.
	mu   sync.Mutex
	view map[string]*v1.Pod
}

func newCoTestHandler() *coTestHandler {
	return &coTestHandler{entered: make(chan string, 1024), gate: make(chan struct{}, 1024),
		events: make(chan string, 1024), view: map[string]*v1.Pod{}}
}

func (h *coTestHandler) call(desc string, apply func()) {
	h.entered <- desc
	<-h.gate
	h.mu.Lock()
	apply()
	h.mu.Unlock()
	h.events <- desc
}

func (h *coTestHandler) OnAdd(obj interface{}, initial bool) {
	desc := "add " + infTestName(obj)
	if initial {
		desc += " initial"
	}
	h.call(desc, func() { p := obj.(*v1.Pod); h.view[p.Name] = p })
}

func (h *coTestHandler) OnUpdate(old, obj interface{}) {
	h.call("update "+infTestName(old)+"->"+infTestName(obj), func() { p := obj.(*v1.Pod); h.view[p.Name] = p })
}

func (h *coTestHandler) OnDelete(obj interface{}) {
	h.call("delete "+infTestName(obj), func() {
		if d, ok := obj.(DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		delete(h.view, obj.(*v1.Pod).Name)
	})
}

// release lets n calls through and returns what they recorded. The caller has received the
// first call's announcement; the rest are consumed here.
func (h *coTestHandler) release(t *testing.T, n int) []string {
	t.Helper()
	for range n {
		h.gate <- struct{}{}
	}
	out := make([]string, n)
	for i := range out {
		select {
		case out[i] = <-h.events:
		case <-t.Context().Done():
		}
	}
	for len(h.entered) > 0 { // the announcements of the calls after the first
		<-h.entered
	}
	return out
}

// coTestCounter is a CounterMetric.
type coTestCounter struct{ n atomic.Int64 }

func (c *coTestCounter) Inc() { c.n.Add(1) }

// coTestMetrics is an InformerMetricsProvider that also implements HandlerMetricsProvider.
type coTestMetrics struct {
	infTestMetrics
	pending                     infTestGauge
	coalesced, episodes, panics coTestCounter
	handlers                    []string
}

func (m *coTestMetrics) NewHandlerPendingMetric(_ InformerNameAndResource, handler string) GaugeMetric {
	m.handlers = append(m.handlers, handler)
	return &m.pending
}
func (m *coTestMetrics) NewHandlerCoalescedMetric(InformerNameAndResource, string) CounterMetric {
	return &m.coalesced
}
func (m *coTestMetrics) NewHandlerCoalescingEpisodesMetric(InformerNameAndResource, string) CounterMetric {
	return &m.episodes
}
func (m *coTestMetrics) NewHandlerPanicsMetric(InformerNameAndResource, string) CounterMetric {
	return &m.panics
}

// coTestLog collects log lines.
type coTestLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *coTestLog) logger() klog.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

func (l *coTestLog) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// TestSharedInformerCoalescingHandler: a handler with MaxPending, added late so that
// coalescing starts during its initial list, stalls twice; each time it then gets one
// notification per key, in the order the keys became pending, with the guarantees of
// HandlerOptions.MaxPending, while a handler without MaxPending gets every notification.
func TestSharedInformerCoalescingHandler(t *testing.T) {
	ResetInformerNamesForTesting()
	defer ResetInformerNamesForTesting()
	name, err := NewInformerName("coalesce-test")
	if err != nil {
		t.Fatal(err)
	}
	metrics := &coTestMetrics{}
	src := infTestSource("a", "b", "c", "d", "e") // versions 1..5
	inf := newSharedIndexInformer(src, &v1.Pod{}, SharedIndexInformerOptions{
		Identifier:              name.WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}),
		InformerMetricsProvider: metrics,
	}, clock.RealClock{})
	plain := newInfTestRecorder()
	plainReg, err := inf.AddEventHandler(plain)
	if err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	infTestWaitSynced(t, inf, plainReg)
	infTestNextN(t, plain, 5)

	// All five initial adds are queued before the listener starts: coalescing starts at once.
	var log coTestLog
	h := newCoTestHandler()
	logger := log.logger()
	reg, err := inf.AddEventHandlerWithOptions(h, HandlerOptions{MaxPending: ptr.To(2), Logger: &logger})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-h.entered; got != "add a@1 initial" {
		t.Fatalf("first call %q", got)
	}
	// Each change and the sentinel z, which the plain handler receiving means that everything
	// before it was queued for h too.
	changes := func(steps ...func()) {
		for _, step := range steps {
			step()
		}
		src.Add(infTestPod("ns", "z", ""))
		for {
			if e := plain.next(t); e.kind == "add" && infTestName(e.obj) == fmt.Sprintf("z@%d", src.ResourceVersion()) ||
				e.kind == "update" && strings.HasPrefix(infTestName(e.obj), "z@") {
				return
			}
		}
	}
	modify := func(name string) func() { return func() { src.Modify(infTestPod("ns", name, "")) } }
	del := func(name string) func() { return func() { src.Delete(infTestPod("ns", name, "")) } }
	add := func(name string) func() { return func() { src.Add(infTestPod("ns", name, "")) } }
	changes(modify("a"), modify("a"), modify("a"), // 6, 7, 8
		del("b"),           // 9: b appeared (initial) and vanished: nothing, but counts as processed
		add("f"), del("f"), // 10, 11: nothing
		del("c"), add("c"), // 12, 13: re-created before the handler saw it: one initial add
	) // z: 14
	if reg.HasSynced() {
		t.Fatal("handler synced before it was told about its initial list")
	}
	want := []string{"add a@1 initial", "add c@13 initial", "add d@4 initial", "add e@5 initial", "update a@1->a@8", "add z@14"}
	if got := h.release(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("first stall:\n got %q\nwant %q", got, want)
	}
	infTestWaitSynced(t, inf, reg)

	// Second stall, this time in the middle of plain buffering.
	src.Modify(infTestPod("ns", "d", "")) // 15
	if got := <-h.entered; got != "update d@4->d@15" {
		t.Fatalf("call %q", got)
	}
	changes(modify("d"), modify("c"), del("c"), modify("e"), modify("e")) // 16..20, z: 21
	want = []string{"update d@4->d@15", "update d@15->d@16", "delete tombstone:c", "update e@5->e@20", "update z@14->z@21"}
	if got := h.release(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("second stall:\n got %q\nwant %q", got, want)
	}

	// The handler's view equals the cache, object for object.
	h.mu.Lock()
	for _, obj := range inf.GetStore().List() {
		p := obj.(*v1.Pod)
		if h.view[p.Name] != p {
			t.Errorf("handler view of %s: %v, cache %s", p.Name, h.view[p.Name], infTestName(p))
		}
	}
	if len(h.view) != len(inf.GetStore().List()) {
		t.Errorf("handler view has %d objects, cache %d", len(h.view), len(inf.GetStore().List()))
	}
	h.mu.Unlock()

	if n := metrics.episodes.n.Load(); n != 2 {
		t.Errorf("episodes %d, want 2", n)
	}
	// First stall: 14 notifications folded, 6 calls made from them (a's initial add included);
	// second: 6 folded, 4 calls.
	if n := metrics.coalesced.n.Load(); n != 8+2 {
		t.Errorf("coalesced away %d, want 10", n)
	}
	if _, sets := metrics.pending.get(); sets == 0 {
		t.Error("pending gauge never set")
	}
	if !slices.Equal(metrics.handlers, []string{listenerName(plainReg), listenerName(reg)}) {
		t.Errorf("handler metrics created for %q", metrics.handlers)
	}
	if start, stop := log.count("coalescing its notifications per object"), log.count("no longer coalescing"); start != 2 || stop != 2 {
		t.Errorf("logged %d starts and %d stops of coalescing, want 2 and 2:\n%s", start, stop, strings.Join(log.lines, "\n"))
	}
	if got := len(plain.events); got != 0 {
		t.Errorf("plain handler has %d more events", got)
	}
}

func listenerName(reg ResourceEventHandlerRegistration) string {
	return reg.(*processorListener).handlerName
}

// TestSharedInformerMaxPendingOptions: the handler option, the informer default, and bad
// values.
func TestSharedInformerMaxPendingOptions(t *testing.T) {
	cases := []struct {
		name        string
		def, option *int
		want        int
		wantErr     bool
	}{
		{name: "neither: no bound", want: -1},
		{name: "handler option", option: ptr.To(5), want: 5},
		{name: "informer default", def: ptr.To(7), want: 7},
		{name: "handler option wins", def: ptr.To(7), option: ptr.To(0), want: 0},
		{name: "negative option", option: ptr.To(-1), wantErr: true},
		{name: "negative default", def: ptr.To(-3), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inf := newSharedIndexInformer(infTestSource(), &v1.Pod{}, SharedIndexInformerOptions{DefaultHandlerMaxPending: tc.def}, clock.RealClock{})
			reg, err := inf.AddEventHandlerWithOptions(newInfTestRecorder(), HandlerOptions{MaxPending: tc.option})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := reg.(*processorListener).pending.maxPending; got != tc.want {
				t.Fatalf("maxPending %d, want %d", got, tc.want)
			}
		})
	}
}

// TestNewHandlerMetrics: handler metrics exist only for a reserved identity and a provider
// that implements HandlerMetricsProvider; other providers keep working without them.
func TestNewHandlerMetrics(t *testing.T) {
	ResetInformerNamesForTesting()
	defer ResetInformerNamesForTesting()
	name, err := NewInformerName("new-handler-metrics")
	if err != nil {
		t.Fatal(err)
	}
	id := name.WithResource(schema.GroupVersionResource{Resource: "pods"})
	cases := []struct {
		name     string
		id       InformerNameAndResource
		provider InformerMetricsProvider
		want     bool
	}{
		{name: "handler provider", id: id, provider: &coTestMetrics{}, want: true},
		{name: "plain provider", id: id, provider: &infTestMetrics{}},
		{name: "no identity", provider: &coTestMetrics{}},
		{name: "global noop provider", id: id},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := newHandlerMetrics(tc.id, tc.provider, "h") != nil; got != tc.want {
				t.Fatalf("metrics created: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSharedInformerCoalescingInitialList: a handler registered before the informer starts,
// with MaxPending 0 and blocked in its first call, coalesces the informer's initial list; it
// still gets every object as an initial-list add, and its registration syncs only once it
// has.
func TestSharedInformerCoalescingInitialList(t *testing.T) {
	src := infTestSource("a", "b", "c", "d", "e")
	inf := infTestNewInformer(src, 0)
	h := newCoTestHandler()
	reg, err := inf.AddEventHandlerWithOptions(h, HandlerOptions{MaxPending: ptr.To(0)})
	if err != nil {
		t.Fatal(err)
	}
	infTestRun(t, inf)
	<-h.entered
	infTestWaitSynced(t, inf)
	if reg.HasSynced() {
		t.Fatal("registration synced while the handler is blocked in its first initial add")
	}
	got := h.release(t, 5)
	slices.Sort(got)
	want := []string{"add a@1 initial", "add b@2 initial", "add c@3 initial", "add d@4 initial", "add e@5 initial"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	infTestWaitSynced(t, inf, reg)
}
