package cache_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	cache "github.com/kcache/cache"
)

var coalesceBenchEvents = flag.Int("coalesce-events", 1_000_000, "watch events of BenchmarkCoalescingStalledHandler")

const (
	coalesceBenchObjects = 10_000
	coalesceBenchSamples = 10 // heap samples taken while the events stream
)

// coBenchSource serves a list of ConfigMaps and then a watch the benchmark writes to
// directly, without copies, so that the informer, not the source, is what is measured.
type coBenchSource struct {
	list    *v1.ConfigMapList
	watcher *watch.FakeWatcher
	once    sync.Once
	ready   chan struct{}
}

func coBenchConfigMap(i, rv int, uid string) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("ns-%d", i%100), Name: fmt.Sprintf("cm-%d", i),
			UID: types.UID(uid), ResourceVersion: strconv.Itoa(rv), Labels: map[string]string{"app": "bench"},
		},
		Data: map[string]string{"config": "value-" + strconv.Itoa(rv)},
	}
}

func (s *coBenchSource) List(metav1.ListOptions) (runtime.Object, error) { return s.list, nil }

func (s *coBenchSource) Watch(options metav1.ListOptions) (watch.Interface, error) {
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return nil, errors.New("streaming lists are not supported")
	}
	var w watch.Interface = watch.NewFake()
	s.once.Do(func() { w = s.watcher; close(s.ready) })
	return w, nil
}

// coBenchView is a handler that rebuilds the objects it is told about and checks, on every
// notification, the guarantees of HandlerOptions.MaxPending: per key states never go back,
// OnUpdate's old object is the one the handler last received, OnAdd only for keys it does not
// have, OnDelete only for keys it has.
type coBenchView struct {
	gate     chan struct{} // closed when the handler may run
	sentinel string        // resource version of the last event
	done     chan struct{} // closed when the sentinel arrived

	view    map[string]*v1.ConfigMap
	highest map[string]int
	calls   int
	err     error
}

func newCoBenchView(stalled bool) *coBenchView {
	v := &coBenchView{gate: make(chan struct{}), done: make(chan struct{}), view: map[string]*v1.ConfigMap{}, highest: map[string]int{}}
	if !stalled {
		close(v.gate)
	}
	return v
}

func (v *coBenchView) fail(format string, args ...interface{}) {
	if v.err == nil {
		v.err = fmt.Errorf(format, args...)
	}
}

func (v *coBenchView) see(cm *v1.ConfigMap) {
	<-v.gate
	v.calls++
	key := cm.Namespace + "/" + cm.Name
	rv, _ := strconv.Atoi(cm.ResourceVersion)
	if rv < v.highest[key] {
		v.fail("%s went back from %d to %d", key, v.highest[key], rv)
	}
	v.highest[key] = rv
	if cm.ResourceVersion == v.sentinel {
		close(v.done)
	}
}

func (v *coBenchView) OnAdd(obj interface{}, _ bool) {
	cm := obj.(*v1.ConfigMap)
	v.see(cm)
	key := cm.Namespace + "/" + cm.Name
	if _, ok := v.view[key]; ok {
		v.fail("OnAdd for %s, which the handler has", key)
	}
	v.view[key] = cm
}

func (v *coBenchView) OnUpdate(oldObj, newObj interface{}) {
	cm := newObj.(*v1.ConfigMap)
	v.see(cm)
	key := cm.Namespace + "/" + cm.Name
	if v.view[key] != oldObj {
		v.fail("OnUpdate for %s: old object is not the one last received", key)
	}
	v.view[key] = cm
}

func (v *coBenchView) OnDelete(obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm := obj.(*v1.ConfigMap)
	v.see(cm)
	key := cm.Namespace + "/" + cm.Name
	if _, ok := v.view[key]; !ok {
		v.fail("OnDelete for %s, which the handler does not have", key)
	}
	delete(v.view, key)
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkCoalescingStalledHandler streams -coalesce-events watch events (updates, with ~1%
// deletes and re-creates) over 10k ConfigMaps to an informer with a fast handler and a second
// handler that is stalled (blocked in its first call) until the stream ends, then released.
// It reports the live heap, sampled after forced collections while the events stream, its
// peak, and checks on every notification the guarantees of MaxPending and, after the
// release, that the handler's rebuilt view equals the source.
//
//   - no-stall: both handlers keep up (the reference);
//   - stalled/max-pending=1000: the stalled handler coalesces;
//   - stalled/unbounded: client-go's behaviour, every notification kept.
func BenchmarkCoalescingStalledHandler(b *testing.B) {
	cases := []struct {
		name       string
		stalled    bool
		maxPending *int
	}{
		{"no-stall", false, ptr.To(1000)},
		{"stalled/max-pending=1000", true, ptr.To(1000)},
		{"stalled/unbounded", true, nil},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var peak, base uint64
			for range b.N {
				base, peak = coBenchRun(b, tc.stalled, tc.maxPending)
			}
			b.ReportMetric(float64(base)/(1<<20), "MiB-synced")
			b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-streaming")
			b.ReportMetric(float64(*coalesceBenchEvents)/b.Elapsed().Seconds()*float64(b.N), "events/s")
		})
	}
}

func coBenchRun(b *testing.B, stalled bool, maxPending *int) (base, peak uint64) {
	b.Helper()
	src := &coBenchSource{list: &v1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}},
		watcher: watch.NewFakeWithChanSize(1000, false), ready: make(chan struct{})}
	type state struct{ rv, gen int }
	truth := make([]state, coalesceBenchObjects+1) // the last one is the sentinel
	for i := range truth {
		src.list.Items = append(src.list.Items, *coBenchConfigMap(i, 1, fmt.Sprintf("%d-0", i)))
		truth[i] = state{rv: 1}
	}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{ListFunc: src.List, WatchFunc: src.Watch}, &v1.ConfigMap{}, 0, cache.Indexers{})
	fast, slow := newCoBenchView(false), newCoBenchView(stalled)
	if _, err := inf.AddEventHandler(fast); err != nil {
		b.Fatal(err)
	}
	if _, err := inf.AddEventHandlerWithOptions(slow, cache.HandlerOptions{MaxPending: maxPending}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("informer did not sync")
	}
	<-src.ready
	src.list = nil
	base = heapInUse()

	events := *coalesceBenchEvents
	rv := 1
	fast.sentinel, slow.sentinel = strconv.Itoa(events+events/100+2), strconv.Itoa(events+events/100+2)
	for j := 0; j < events; j++ {
		i := (j * 7919) % coalesceBenchObjects
		rv++
		if j%100 == 99 { // delete and re-create under a new UID
			src.watcher.Delete(coBenchConfigMap(i, rv, fmt.Sprintf("%d-%d", i, truth[i].gen)))
			rv++
			truth[i].gen++
			src.watcher.Add(coBenchConfigMap(i, rv, fmt.Sprintf("%d-%d", i, truth[i].gen)))
		} else {
			src.watcher.Modify(coBenchConfigMap(i, rv, fmt.Sprintf("%d-%d", i, truth[i].gen)))
		}
		truth[i].rv = rv
		if j%(events/coalesceBenchSamples) == events/coalesceBenchSamples-1 {
			peak = max(peak, heapInUse())
		}
	}
	// The sentinel: an object untouched until now, so that it is the last key to become
	// pending, and delivered last.
	rv++
	if strconv.Itoa(rv) != fast.sentinel {
		b.Fatalf("sentinel version %d, expected %s", rv, fast.sentinel)
	}
	src.watcher.Modify(coBenchConfigMap(coalesceBenchObjects, rv, fmt.Sprintf("%d-0", coalesceBenchObjects)))
	truth[coalesceBenchObjects].rv = rv
	<-fast.done
	peak = max(peak, heapInUse())
	if stalled {
		close(slow.gate)
	}
	<-slow.done
	for _, v := range []*coBenchView{fast, slow} {
		if v.err != nil {
			b.Fatal(v.err)
		}
		if len(v.view) != len(truth) {
			b.Fatalf("handler view has %d objects, want %d", len(v.view), len(truth))
		}
		for i, want := range truth {
			cm := v.view[fmt.Sprintf("ns-%d/cm-%d", i%100, i)]
			if cm == nil || cm.ResourceVersion != strconv.Itoa(want.rv) || string(cm.UID) != fmt.Sprintf("%d-%d", i, want.gen) {
				b.Fatalf("handler view of cm-%d is %v, want version %d generation %d", i, cm, want.rv, want.gen)
			}
		}
	}
	b.ReportMetric(float64(slow.calls), "stalled-handler-calls")
	return base, peak
}
