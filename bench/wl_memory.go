package main

import (
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func init() {
	for _, mode := range []string{paged, watchList, onePage} {
		for _, c := range []struct {
			name            string
			changed, delete int // per 1000 objects
		}{{"unchanged", 0, 0}, {"1%-changed-0.1%-deleted", 10, 1}} {
			if mode == onePage && c.changed > 0 {
				continue // the unchanged case shows what one response costs
			}
			register(workload{
				group: "memory",
				name:  "relist/" + mode + "/" + c.name,
				doc: "a synced informer over N realistic pods relists (410 Gone) through a " + mode +
					" source of fresh objects; cache-B is its live heap; retained/cache the most the relist adds " +
					"to it, sampled after forced GCs while the reflector waits for the source and at every quarter " +
					"of the handler's updates; gogc10-retained/cache the same from the live heap each GC marks at GOGC=10",
				heavy: true,
				run: func(b *testing.B, impl *Impl) {
					benchRelist(b, impl, mode, scale(100_000), c.changed, c.delete)
				},
			})
		}
	}
}

// liveReader reads the live heap that the last collection marked. Its samples are its own:
// use one per goroutine.
type liveReader [2]metrics.Sample

func newLiveReader() *liveReader {
	return &liveReader{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
}

// read returns the live heap the last collection marked, but never more than the bytes of all
// the objects in the heap, live or not yet swept. Go 1.26's live-heap figure sometimes exceeds
// that: in an initial sync of 10k pods, one forced collection in four or five read 2-4 MB
// above every object in the heap (GODEBUG=gctrace=1 shows it too, a live heap above the heap
// at the cycle's end), with either garbage collector, and the next collection read normally
// again; heap profiles taken at such a reading and at a normal one were the same to within
// 30 KB. Unclamped, that made the tenth-size initial-sync peaks swing between 1.3 and 4-6 MB.
func (r *liveReader) read() uint64 {
	metrics.Read(r[:])
	return min(r[0].Value.Uint64(), r[1].Value.Uint64())
}

// liveHeap returns the heap live after two forced collections.
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	return newLiveReader().read()
}

// peakSampler records the largest reading of a heap figure, taken every millisecond while it
// runs. startPeakSampler reads the live heap (as marked by the last GC) at GOGC=10: collections
// are then frequent, so this measures what is retained, not GC pacing. startPeakSamplerAt takes
// the percentage.
type peakSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak atomic.Uint64
	// restoreGC, if set, is the GC percentage finish restores.
	restoreGC *int
}

func startPeakSampler() *peakSampler { return startPeakSamplerAt(10) }

func startPeakSamplerAt(gcPercent int) *peakSampler {
	gc := debug.SetGCPercent(gcPercent)
	return startSampler(&gc, newLiveReader().read)
}

// startSampler samples read every millisecond until finish, which restores the GC percentage
// to *restoreGC if it is not nil.
func startSampler(restoreGC *int, read func() uint64) *peakSampler {
	s := &peakSampler{stop: make(chan struct{}), restoreGC: restoreGC}
	s.done.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > s.peak.Load() {
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
	if s.restoreGC != nil {
		debug.SetGCPercent(*s.restoreGC)
	}
	return s.peak.Load()
}

// forcedSampler records the largest live heap measured by a forced collection. The
// relist workloads call it from the source, while the reflector waits for it, so that nothing
// the reflector allocates during the collection is counted as live.
type forcedSampler struct {
	mu   sync.Mutex
	peak uint64
}

func (s *forcedSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	goruntime.GC()
	if v := newLiveReader().read(); v > s.peak {
		s.peak = v
		if *flagPeakProf != "" {
			writePeakProfile(*flagPeakProf)
		}
	}
}

// writePeakProfile writes the heap profile, which a forced collection has just brought up to
// date, to path (-peakprofile), replacing the one of an earlier, lower peak.
func writePeakProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -peakprofile:", err)
	}
}

func benchRelist(b *testing.B, impl *Impl, mode string, n, changedPer1000, deletedPer1000 int) {
	first := &podSet{n: n, rv: "1", pod: func(i int) *v1.Pod { return realisticPod(i, 100, "1") }}
	second := &podSet{n: n, rv: "2", pod: func(i int) *v1.Pod {
		if deletedPer1000 > 0 && i%1000 < deletedPer1000 {
			return nil
		}
		p := realisticPod(i, 100, "1")
		if i%1000 < deletedPer1000+changedPer1000 {
			p.ResourceVersion = "2"
			p.Status.Conditions[1].Status = v1.ConditionFalse
		}
		return p
	}}
	kept, deleted, last := 0, 0, 0
	for i := range n {
		if i%1000 < deletedPer1000 {
			deleted++
			continue
		}
		kept, last = kept+1, i
	}
	// The sentinel is a watch event sent after the relist: once the handler has it, every
	// notification of the relist has been delivered, whatever the implementation sends for
	// unchanged objects.
	sentinel := second.pod(last)
	sentinel.ResourceVersion = "3"
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		var current atomic.Pointer[podSet]
		current.Store(first)
		src := newPodSource(mode, current.Load)
		base := liveHeap()
		inf := impl.NewInformer(src, &v1.Pod{})
		var updates, deletes atomic.Int64
		every := int64(max(1, kept/4))
		var sawSentinel atomic.Bool
		if err := inf.AddHandler(Handler{
			Update: func(_, obj interface{}) {
				if p, ok := obj.(*v1.Pod); ok && p.ResourceVersion == "3" {
					sawSentinel.Store(true)
					return
				}
				if n := updates.Add(1); n%every == 0 {
					// The handler runs behind the queue: what the relist queued is still held.
					src.sample()
				}
			},
			Delete: func(interface{}) { deletes.Add(1) },
		}); err != nil {
			b.Fatal(err)
		}
		stop := runInformer(b, inf)
		<-src.watched
		synced := liveHeap()
		current.Store(second)
		var forced forcedSampler
		src.setSample(forced.sample, max(1, n/500/8))
		b.StartTimer()
		sampler := startPeakSampler()
		src.relist()
		<-src.watched // the relist is listed (or streamed) and the next watch runs
		src.current().Modify(sentinel.DeepCopy())
		waitUntil(b, "the relist's notifications", func() bool { return sawSentinel.Load() })
		peak := sampler.finish()
		b.StopTimer()
		src.setSample(nil, 0)
		checkRelisted(b, inf.Indexer(), second, kept, sentinel)
		if u, d := updates.Load(), deletes.Load(); u != int64(kept) || d != int64(deleted) {
			// Both libraries send an update for every object still present and a delete for
			// every vanished one; say so if that ever changes.
			fmt.Fprintf(os.Stderr, "bench: %s relist/%s: %d updates and %d deletes, want %d and %d\n",
				impl.Name, mode, u, d, kept, deleted)
		}
		cache := float64(synced) - float64(base)
		b.ReportMetric(cache, "cache-B")
		b.ReportMetric((float64(forced.peak)-float64(synced))/cache, "retained/cache")
		b.ReportMetric((float64(peak)-float64(synced))/cache, "gogc10-retained/cache")
		stop()
		goruntime.KeepAlive(inf)
		b.StartTimer()
	}
}

// checkRelisted fails b unless the informer's cache holds exactly want's kept pods (the
// sentinel's at its resource version).
func checkRelisted(b *testing.B, idx Indexer, want *podSet, kept int, sentinel *v1.Pod) {
	if got := len(idx.ListKeys()); got != kept {
		b.Fatalf("%d objects cached after the relist, want %d", got, kept)
	}
	for i := range want.n {
		p := want.pod(i)
		if p == nil {
			continue
		}
		obj, ok, err := idx.GetByKey(p.Namespace + "/" + p.Name)
		if err != nil || !ok {
			b.Fatalf("%s/%s missing after the relist (%v)", p.Namespace, p.Name, err)
		}
		rv := p.ResourceVersion
		if p.Name == sentinel.Name && p.Namespace == sentinel.Namespace {
			rv = sentinel.ResourceVersion
		}
		if got := obj.(*v1.Pod).ResourceVersion; got != rv {
			b.Fatalf("%s/%s at resourceVersion %s after the relist, want %s", p.Namespace, p.Name, got, rv)
		}
	}
}

// waitUntil polls until cond holds, and fails b if it does not within 10 minutes.
func waitUntil(b *testing.B, what string, cond func() bool) {
	deadline := time.Now().Add(10 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}
