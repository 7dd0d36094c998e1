package main

import (
	"fmt"
	"reflect"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func init() {
	for _, c := range []struct {
		name         string
		stall, bound bool
	}{{"max-pending=1000", true, true}, {"unbounded", true, false}, {"no-stall", false, false}} {
		register(workload{
			group: "memory",
			name:  "stalled-handler/10k-configmaps/" + c.name,
			doc: "one fast and one stalled handler while N watch events (updates, ~1% delete+re-create) flow over 10k configmaps, " +
				"then the stalled one is released until its view equals the source; stalled-peak-B is the most live heap above " +
				"the synced informer while it is stalled; with max-pending=1000 kcache sets HandlerOptions.MaxPending (client-go " +
				"has no bound); no-stall is the same run with neither handler stalled",
			heavy: true,
			run:   func(b *testing.B, impl *Impl) { benchStalledHandler(b, impl, scale(1_000_000), c.stall, c.bound) },
		})
	}
}

const stalledKeys = 10_000

func benchStalledHandler(b *testing.B, impl *Impl, events int, stall, bound bool) {
	list := &v1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range stalledKeys {
		list.Items = append(list.Items, *configMap(i, 10, "1"))
	}
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		src := newSource(func() runtime.Object { return list.DeepCopy() })
		var fast atomic.Int64
		release := make(chan struct{})
		if !stall {
			close(release)
		}
		inf := impl.NewInformer(src, &v1.ConfigMap{})
		if err := inf.AddHandler(Handler{
			Update: func(_, _ interface{}) { fast.Add(1) },
			Add:    func(_ interface{}, _ bool) { fast.Add(1) },
			Delete: func(interface{}) { fast.Add(1) },
		}); err != nil {
			b.Fatal(err)
		}
		view := &handlerView{rv: make(map[string]int64, stalledKeys+1)}
		stalled := view.handler(release)
		stalled.ExpectStall = bound
		if err := inf.AddHandler(stalled); err != nil {
			b.Fatal(err)
		}
		stop := runInformer(b, inf)
		<-src.watched
		waitUntil(b, "the initial list at the stalled handler", func() bool { return view.len() >= stalledKeys })
		w := src.current()
		base := liveHeap()
		b.StartTimer()
		sampler := startPeakSampler()
		sent, iters := sendChurn(w, events, stalledKeys)
		waitUntil(b, "the fast handler", func() bool { return fast.Load() >= int64(stalledKeys+sent) })
		peak := sampler.finish()
		if stall {
			close(release)
		}
		// A configmap never seen before, created last: once the stalled handler has it, it
		// has caught up (also when it coalesced, which delivers keys in the order they
		// first became pending).
		sentinel := stalledKeys
		w.Add(configMap(sentinel, 10, strconv.Itoa(iters+2)))
		waitUntil(b, "the released handler", func() bool { return view.has(sentinel) })
		b.StopTimer()
		if err := view.check(iters); err != nil {
			b.Fatalf("%s, stalled handler after release: %v", impl.Name, err)
		}
		b.ReportMetric(float64(peak)-float64(base), "stalled-peak-B")
		stop()
		goruntime.KeepAlive(inf)
		b.StartTimer()
	}
}

// sendChurn sends events watch events over keys configmaps: updates, and every 100th event a
// delete followed by a re-create of the same key; event i goes to key i%keys at resource
// version i+2. It returns how many events it sent and how many values of i it used.
func sendChurn(w *watch.FakeWatcher, events, keys int) (sent, iters int) {
	for ; sent < events; iters++ {
		k := iters % keys
		rv := strconv.Itoa(iters + 2)
		if iters%100 == 99 {
			w.Delete(configMap(k, 10, rv))
			w.Add(configMap(k, 10, rv))
			sent += 2
			continue
		}
		w.Modify(configMap(k, 10, rv))
		sent++
	}
	return sent, iters
}

// handlerView is what a handler knows of the configmaps: each key's resource version as last
// received. Its handler checks on every notification what MaxPending promises, which plain
// delivery keeps too: per key, states never go backwards; an update's old object is the one
// the handler last received; adds are of keys it does not have, updates and deletes of keys it
// has.
type handlerView struct {
	mu  sync.Mutex
	rv  map[string]int64
	err error
}

func (v *handlerView) handler(release <-chan struct{}) Handler {
	return Handler{
		Add: func(obj interface{}, _ bool) {
			v.apply("add", nil, obj)
		},
		Update: func(oldObj, newObj interface{}) {
			<-release
			v.apply("update", oldObj, newObj)
		},
		Delete: func(obj interface{}) {
			v.apply("delete", nil, obj)
		},
	}
}

func (v *handlerView) apply(kind string, oldObj, obj interface{}) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return
	}
	fail := func(format string, args ...any) {
		v.err = fmt.Errorf(kind+": "+format, args...)
	}
	key, rv, ok := configMapVersion(obj)
	if !ok {
		fail("unexpected object %T", obj)
		return
	}
	last, had := v.rv[key]
	switch kind {
	case "add":
		if had {
			fail("%s added again at %d (had %d)", key, rv, last)
			return
		}
		v.rv[key] = rv
	case "update":
		_, oldRV, ok := configMapVersion(oldObj)
		switch {
		case !ok:
			fail("unexpected old object %T", oldObj)
		case !had:
			fail("%s updated but never added", key)
		case oldRV != last:
			fail("%s: old object at %d, last received %d", key, oldRV, last)
		case rv < last:
			fail("%s went back from %d to %d", key, last, rv)
		default:
			v.rv[key] = rv
		}
	case "delete":
		switch {
		case !had:
			fail("%s deleted but never added", key)
		case rv < last:
			fail("%s deleted at %d, older than %d", key, rv, last)
		default:
			delete(v.rv, key)
		}
	}
}

// configMapVersion returns a configmap's key and resource version, also from a tombstone.
func configMapVersion(obj interface{}) (key string, rv int64, ok bool) {
	if t, isTombstone := tombstoneObject(obj); isTombstone {
		obj = t
	}
	cm, ok := obj.(*v1.ConfigMap)
	if !ok {
		return "", 0, false
	}
	rv, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	return cm.Namespace + "/" + cm.Name, rv, err == nil
}

func (v *handlerView) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.rv)
}

func (v *handlerView) has(i int) bool {
	cm := configMap(i, 10, "")
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.rv[cm.Namespace+"/"+cm.Name]
	return ok
}

// check compares the view with the source after sendChurn used iters values and the sentinel
// (key stalledKeys, at iters+2) was created: every key at its last resource version.
func (v *handlerView) check(iters int) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return v.err
	}
	if len(v.rv) != stalledKeys+1 {
		return fmt.Errorf("%d keys, want %d", len(v.rv), stalledKeys+1)
	}
	for k := range stalledKeys + 1 {
		want := int64(1)
		switch {
		case k == stalledKeys:
			want = int64(iters + 2)
		case iters > k:
			want = int64(k+(iters-1-k)/stalledKeys*stalledKeys) + 2
		}
		cm := configMap(k, 10, "")
		if got := v.rv[cm.Namespace+"/"+cm.Name]; got != want {
			return fmt.Errorf("%s/%s at %d, source at %d", cm.Namespace, cm.Name, got, want)
		}
	}
	return nil
}

// tombstoneObject returns the last known state a DeletedFinalStateUnknown holds. kcache and
// client-go each have their own type of that name, with the same fields.
func tombstoneObject(obj interface{}) (interface{}, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Struct || v.Type().Name() != "DeletedFinalStateUnknown" {
		return nil, false
	}
	f := v.FieldByName("Obj")
	if !f.IsValid() || f.Kind() != reflect.Interface {
		return nil, false
	}
	return f.Interface(), true
}
