package main

import (
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func init() {
	for _, c := range []struct {
		name            string
		changed, delete int // per 1000 objects
	}{{"unchanged", 0, 0}, {"1%-changed-0.1%-deleted", 10, 1}} {
		register(workload{
			group: "memory",
			name:  "relist/" + c.name,
			doc: "a synced informer over N realistic pods relists (410 Gone) and receives fresh copies; " +
				"cache-B is its live heap, relist-retained-B the most the relist adds to it (sampled at GOGC=10)",
			heavy: true,
			run:   func(b *testing.B, impl *Impl) { benchRelist(b, impl, scale(100_000), c.changed, c.delete) },
		})
	}
	register(workload{
		group: "memory",
		name:  "stalled-handler/10k-configmaps",
		doc: "one fast and one stalled handler while N watch events (updates, ~1% delete+re-create) flow over 10k configmaps; " +
			"stalled-peak-B is the most live heap above the synced informer while the handler is stalled",
		heavy: true,
		run:   func(b *testing.B, impl *Impl) { benchStalledHandler(b, impl, scale(1_000_000)) },
	})
}

var heapLiveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// liveHeap returns the heap live after two forced collections.
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	metrics.Read(heapLiveSample)
	return heapLiveSample[0].Value.Uint64()
}

// peakSampler records the largest live heap (as marked by the last GC) while it runs. With a
// low GOGC collections are frequent, so this measures what is retained, not GC pacing.
type peakSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak atomic.Uint64
	gc   int
}

func startPeakSampler() *peakSampler {
	s := &peakSampler{stop: make(chan struct{}), gc: debug.SetGCPercent(10)}
	s.done.Go(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	})
	return s
}

func (s *peakSampler) finish() uint64 {
	close(s.stop)
	s.done.Wait()
	debug.SetGCPercent(s.gc)
	return s.peak.Load()
}

func benchRelist(b *testing.B, impl *Impl, n, changedPer1000, deletedPer1000 int) {
	first := podList(n, 100, true)
	second := first.DeepCopy()
	second.ResourceVersion = "2"
	kept := second.Items[:0]
	deleted := 0
	for i, p := range second.Items {
		switch {
		case deletedPer1000 > 0 && i%1000 < deletedPer1000:
			deleted++
			continue
		case i%1000 < deletedPer1000+changedPer1000:
			p.ResourceVersion = "2"
			p.Status.Conditions[1].Status = v1.ConditionFalse
		}
		kept = append(kept, p)
	}
	second.Items = kept
	var lists atomic.Int32
	src := newSource(func() runtime.Object {
		// Fresh copies every time, as a client decoding a response hands out.
		if lists.Add(1) == 1 {
			return first.DeepCopy()
		}
		return second.DeepCopy()
	})
	var updates, deletes atomic.Int64
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		base := liveHeap()
		inf := impl.NewInformer(src, &v1.Pod{})
		if err := inf.AddHandler(Handler{
			Update: func(_, _ interface{}) { updates.Add(1) },
			Delete: func(interface{}) { deletes.Add(1) },
		}); err != nil {
			b.Fatal(err)
		}
		stop := runInformer(b, inf)
		<-src.watched
		synced := liveHeap()
		b.StartTimer()
		sampler := startPeakSampler()
		src.relist()
		waitFor(func() bool {
			return updates.Load() >= int64(len(kept)) && deletes.Load() >= int64(deleted)
		})
		peak := sampler.finish()
		b.StopTimer()
		b.ReportMetric(float64(synced-base), "cache-B")
		b.ReportMetric(float64(peak)-float64(synced), "relist-retained-B")
		stop()
		goruntime.KeepAlive(inf)
		b.StartTimer()
	}
	goruntime.KeepAlive(first)
	goruntime.KeepAlive(second)
}

func benchStalledHandler(b *testing.B, impl *Impl, events int) {
	const keys = 10_000
	list := &v1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range keys {
		list.Items = append(list.Items, *configMap(i, 10, "1"))
	}
	src := newSource(func() runtime.Object { return list.DeepCopy() })
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		var fast atomic.Int64
		var slow atomic.Int64
		release := make(chan struct{})
		inf := impl.NewInformer(src, &v1.ConfigMap{})
		count := func(c *atomic.Int64) Handler {
			return Handler{
				Update: func(_, _ interface{}) { c.Add(1) },
				Add:    func(_ interface{}, initial bool) { c.Add(1) },
				Delete: func(interface{}) { c.Add(1) },
			}
		}
		if err := inf.AddHandler(count(&fast)); err != nil {
			b.Fatal(err)
		}
		stalled := count(&slow)
		stalledUpdate := stalled.Update
		stalled.Update = func(o, n interface{}) {
			<-release
			stalledUpdate(o, n)
		}
		stalled.ExpectStall = true
		if err := inf.AddHandler(stalled); err != nil {
			b.Fatal(err)
		}
		stop := runInformer(b, inf)
		<-src.watched
		w := src.current()
		base := liveHeap()
		b.StartTimer()
		sampler := startPeakSampler()
		sent := sendChurn(w, events, keys)
		waitFor(func() bool { return fast.Load() >= int64(keys+sent) })
		peak := sampler.finish()
		close(release)
		b.StopTimer()
		b.ReportMetric(float64(peak)-float64(base), "stalled-peak-B")
		stop() // the released handler's backlog is dropped with the informer
		goruntime.KeepAlive(inf)
		b.StartTimer()
	}
}

// sendChurn sends events watch events over keys configmaps: updates, and every 100th event a
// delete followed by a re-create of the same key. It returns how many events it sent.
func sendChurn(w *watch.FakeWatcher, events, keys int) int {
	sent := 0
	for i := 0; sent < events; i++ {
		k := i % keys
		rv := strconv.Itoa(i + 2)
		if i%100 == 99 {
			w.Delete(configMap(k, 10, rv))
			w.Add(configMap(k, 10, rv))
			sent += 2
			continue
		}
		w.Modify(configMap(k, 10, rv))
		sent++
	}
	return sent
}
