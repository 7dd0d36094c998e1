package main

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The realistic workloads: a controller as people write them, over realistic pods, so that
// what a library does per object and per event is weighed against what a controller does
// anyway (decoding objects, reading the cache, computing, calling the API server).

const (
	controllerPods    = 10_000
	churnRate         = 2000 // changes per second offered by the cluster
	reconcileCPU      = 20 * time.Microsecond
	reconcileWait     = time.Millisecond // stands in for an API call
	hotPods           = 100              // 1% of the pods get half of the changes
	failEveryNth      = 100              // one reconcile in 100 fails and is retried rate-limited
	relistMaxDuration = 120 * time.Second
)

func init() {
	for _, workers := range []int{4, 16} {
		register(workload{
			group: "controller",
			name:  fmt.Sprintf("churn/workers=%d", workers),
			doc: fmt.Sprintf("an informer over %d realistic pods (~10 KB as JSON) whose handlers enqueue keys into a named, "+
				"rate-limited queue; %d workers each read the pod from the cache, spend %v of CPU (a fixed amount of work) and wait %v; the cluster "+
				"changes pods at %d/s (half of the changes to 1%% of the pods) for N changes (10k, 40k with -full); "+
				"cpu-ms/kchange is process CPU per 1000 changes, allocs/change likewise, p50-ms and p99-ms the latency "+
				"from a change to the cache read of the first reconcile that sees it, deliver-p50-ms and deliver-p99-ms from a change "+
				"to its handler call, heap-B and peak-B the live heap above the cluster's own objects after and at most during the churn",
				controllerPods, workers, reconcileCPU, reconcileWait, churnRate),
			heavy: true,
			run: func(b *testing.B, impl *Impl) {
				changes := 10_000
				if *flagFull {
					changes = 40_000
				}
				benchControllerChurn(b, impl, workers, changes)
			},
		})
	}
	register(workload{
		group: "controller",
		name:  "restart",
		doc: "a controller restarts: its informer lists N realistic controller pods (10k, 100k with -full) in pages of 500, " +
			"its handler enqueues every add; sync-ms is the time until the informer has synced and the handler has every add, " +
			"cpu-ms the process CPU in that time, peak-heap-B the most heap (live or garbage) above the start, sampled " +
			"every millisecond, heap-B what is live after; the pods are made before the clock starts (decoding is the client's cost)",
		heavy: true,
		run:   func(b *testing.B, impl *Impl) { benchControllerRestart(b, impl, scale(100_000)) },
	})
	register(workload{
		group: "controller",
		name:  "relist-under-load",
		doc: "the churn workload with 16 workers over N pods (10k, 100k with -full) relists (410 Gone) while the cluster " +
			"keeps changing: relist-s is the time until the next watch runs, retained-B the most live heap above the " +
			"synced controller's during the relist (GOGC=25), p99-ms the latency of the changes made during it, " +
			"before-p99-ms of those made in the second before it",
		heavy: true,
		run:   func(b *testing.B, impl *Impl) { benchRelistUnderLoad(b, impl, scale(100_000)) },
	})
}

// latency is the latency of one change: when it was made (ns since the cluster started) and
// how long until a reconcile saw it.
type latency struct{ sent, took int64 }

// controller is the controller under test.
type controller struct {
	c          *cluster
	inf        Informer
	q          KeyQueue
	seen       []int64 // per pod: the latest change a reconcile has seen; only workers touch it
	lats       [][]latency
	reconciles atomic.Int64
	changes    atomic.Int64 // changes seen by a reconcile
	stop       func()
	workers    sync.WaitGroup
	hlat       []float64
}

// startController starts an informer over c with a handler that enqueues the key of every
// added, changed or deleted pod, waits until it has synced, and starts the workers.
func startController(b *testing.B, impl *Impl, c *cluster, workers int) *controller {
	reconcileWork() // calibrated before anything runs
	ctl := &controller{c: c, inf: impl.NewInformer(c, &v1.Pod{}), q: impl.NewControllerQueue(),
		seen: make([]int64, len(c.orig)), lats: make([][]latency, workers)}
	for i := range ctl.seen {
		ctl.seen[i] = 1
	}
	enqueue := func(obj interface{}) {
		if p, ok := obj.(*v1.Pod); ok {
			ctl.q.Add(p.Namespace + "/" + p.Name)
		}
	}
	if err := ctl.inf.AddHandler(Handler{
		Add: func(obj interface{}, _ bool) { enqueue(obj) },
		Update: func(oldObj, newObj interface{}) {
			// As most controllers do: a relist's unchanged objects need no reconcile.
			o, ok1 := oldObj.(*v1.Pod)
			n, ok2 := newObj.(*v1.Pod)
			if ok1 && ok2 && o.ResourceVersion == n.ResourceVersion {
				return
			}
			if rv, err := strconv.ParseInt(n.ResourceVersion, 10, 64); err == nil && rv > 1 {
				ctl.hlat = append(ctl.hlat, float64(int64(time.Since(c.start))-c.sentAt[rv])/1e6)
			}
			enqueue(newObj)
		},
		Delete: enqueue,
	}); err != nil {
		b.Fatal(err)
	}
	ctl.stop = runInformer(b, ctl.inf)
	for w := range workers {
		ctl.workers.Go(func() { ctl.work(w) })
	}
	return ctl
}

func (ctl *controller) work(w int) {
	idx := ctl.inf.Indexer()
	for {
		key, shutdown := ctl.q.Get()
		if shutdown {
			return
		}
		ctl.reconciles.Add(1)
		obj, ok, err := idx.GetByKey(key)
		// The reconcile sees what this read returns: a change counts as seen from here.
		now := int64(time.Since(ctl.c.start))
		var rv int64
		if ok && err == nil {
			p := obj.(*v1.Pod)
			rv, _ = strconv.ParseInt(p.ResourceVersion, 10, 64)
			i := podIndex(key)
			n := int64(0)
			for s := rv; s > ctl.seen[i]; s = ctl.c.prev[s] {
				ctl.lats[w] = append(ctl.lats[w], latency{ctl.c.sentAt[s], now - ctl.c.sentAt[s]})
				n++
			}
			ctl.seen[i] = max(ctl.seen[i], rv)
			if n > 0 {
				ctl.changes.Add(n)
			}
		}
		spin(reconcileWork())
		time.Sleep(reconcileWait)
		if rv%failEveryNth == 0 {
			ctl.q.AddRateLimited(key)
		} else {
			ctl.q.Forget(key)
		}
		ctl.q.Done(key)
	}
}

// reconcileWork is the number of spin iterations that take reconcileCPU on this machine,
// measured once per process (the fastest of several tries, when nothing else runs): a
// reconcile then costs the same CPU whatever the load, where a loop that spins for a time
// would burn less CPU when the machine is busy and it is descheduled in between.
var reconcileWork = sync.OnceValue(func() int {
	const n = 100_000
	best := time.Duration(1 << 62)
	for range 20 {
		start := time.Now()
		spin(n)
		best = min(best, time.Since(start))
	}
	return max(1, int(int64(n)*int64(reconcileCPU)/int64(max(best, 1))))
})

var spinSink atomic.Uint64

// spin does n rounds of integer mixing.
func spin(n int) {
	x := uint64(n)
	for i := range n {
		x = (x ^ uint64(i)) * 0x9e3779b97f4a7c15
		x ^= x >> 29
	}
	spinSink.Store(x)
}

// shutdown stops the workers, then the informer.
func (ctl *controller) shutdown() {
	ctl.q.ShutDown()
	ctl.workers.Wait()
	ctl.stop()
}

// latencies returns the latencies of the changes made in [from, to) (ns since the cluster
// started), in ms, sorted.
func (ctl *controller) latencies(from, to int64) []float64 {
	var out []float64
	for _, ls := range ctl.lats {
		for _, l := range ls {
			if l.sent >= from && l.sent < to {
				out = append(out, float64(l.took)/1e6)
			}
		}
	}
	slices.Sort(out)
	return out
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// churn makes changes at churnRate until it has made limit or stop is closed, skewed so that
// half of them go to the first hotPods pods; before change number relistAt it calls relisting
// and breaks the watch. It returns the number of changes made once it has stopped and flushed
// what the watch missed.
func churn(c *cluster, limit int, stop <-chan struct{}, relistAt int, relisting func()) int {
	rng := rand.New(rand.NewPCG(1, 2))
	interval := time.Second / churnRate
	next := time.Now()
	k := 0
	for ; k < limit; k++ {
		select {
		case <-stop:
			c.flush()
			return k
		default:
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(interval)
		if k == relistAt && relisting != nil {
			relisting()
			c.breakWatch()
		}
		i := rng.IntN(len(c.orig))
		if rng.IntN(2) == 0 {
			i = rng.IntN(hotPods)
		}
		c.change(i)
	}
	c.flush()
	return k
}

// startHeapSampler records the largest heap (live objects and garbage not yet swept) every
// millisecond while it runs: what the process needs, under the default GC pacing.
func startHeapSampler() *peakSampler {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	return startSampler(nil, func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	})
}

func benchControllerChurn(b *testing.B, impl *Impl, workers, changes int) {
	for range b.N {
		b.StopTimer()
		c := newCluster(controllerPods, changes)
		base := liveHeap()
		ctl := startController(b, impl, c, workers)
		waitUntil(b, "the initial reconciles", func() bool { return ctl.reconciles.Load() >= controllerPods && ctl.q.Len() == 0 })
		var ms0, ms1 goruntime.MemStats
		goruntime.ReadMemStats(&ms0)
		b.StartTimer()
		cpu := startCPU()
		sampler := startPeakSamplerAt(100)
		made := churn(c, changes, nil, -1, nil)
		waitUntil(b, "every change reconciled", func() bool { return ctl.changes.Load() >= int64(made) })
		peak := sampler.finish()
		end, _, _ := processCPUTime()
		b.StopTimer()
		goruntime.ReadMemStats(&ms1)
		lats := ctl.latencies(0, 1<<62)
		live := liveHeap()
		b.ReportMetric(float64(end-cpu.start)/1e6/float64(made)*1000, "cpu-ms/kchange")
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(made), "allocs/change")
		b.ReportMetric(percentile(lats, 0.5), "p50-ms")
		b.ReportMetric(percentile(lats, 0.99), "p99-ms")
		slices.Sort(ctl.hlat)
		b.ReportMetric(percentile(ctl.hlat, 0.5), "deliver-p50-ms")
		b.ReportMetric(percentile(ctl.hlat, 0.99), "deliver-p99-ms")
		b.ReportMetric(float64(live)-float64(base), "heap-B")
		b.ReportMetric(float64(peak)-float64(base), "peak-B")
		ctl.shutdown()
		goruntime.KeepAlive(c)
		b.StartTimer()
	}
}

func benchControllerRestart(b *testing.B, impl *Impl, n int) {
	for range b.N {
		b.StopTimer()
		src, _ := prebuiltPodSourceOf(paged, n, func(i int) *v1.Pod { return controllerPod(i) })
		base := liveHeap()
		b.StartTimer()
		cpu := startCPU()
		heap := startHeapSampler()
		start := time.Now()
		inf := impl.NewInformer(src, &v1.Pod{})
		q := impl.NewControllerQueue()
		var adds atomic.Int64
		if err := inf.AddHandler(Handler{Add: func(obj interface{}, _ bool) {
			p := obj.(*v1.Pod)
			q.Add(p.Namespace + "/" + p.Name)
			adds.Add(1)
		}}); err != nil {
			b.Fatal(err)
		}
		stop := runInformer(b, inf)
		waitUntil(b, "every initial add", func() bool { return adds.Load() >= int64(n) })
		took := time.Since(start)
		end, _, _ := processCPUTime()
		peakHeap := heap.finish()
		b.StopTimer()
		after := liveHeap()
		b.ReportMetric(float64(took.Microseconds())/1e3, "sync-ms")
		b.ReportMetric(float64(end-cpu.start)/1e6, "cpu-ms")
		b.ReportMetric(float64(peakHeap)-float64(base), "peak-heap-B")
		b.ReportMetric(float64(after)-float64(base), "heap-B")
		q.ShutDown()
		stop()
		goruntime.KeepAlive(src)
		b.StartTimer()
	}
}

func benchRelistUnderLoad(b *testing.B, impl *Impl, n int) {
	const workers = 16
	maxChanges := churnRate * int(relistMaxDuration/time.Second)
	for range b.N {
		b.StopTimer()
		c := newCluster(n, maxChanges)
		ctl := startController(b, impl, c, workers)
		waitUntil(b, "the initial reconciles", func() bool { return ctl.reconciles.Load() >= int64(n) && ctl.q.Len() == 0 })
		before := liveHeap()
		b.StartTimer()
		var broke, relisted atomic.Int64
		var sampler *peakSampler
		stopChurn := make(chan struct{})
		var churner sync.WaitGroup
		var made int
		churner.Go(func() {
			made = churn(c, maxChanges, stopChurn, churnRate, func() {
				sampler = startPeakSamplerAt(25)
				broke.Store(int64(time.Since(c.start)))
			})
		})
		// The relist starts after a second of changes; it is over when the next watch runs.
		for {
			<-c.watched
			if broke.Load() != 0 {
				break
			}
		}
		relisted.Store(int64(time.Since(c.start)))
		time.Sleep(time.Second)
		close(stopChurn)
		churner.Wait()
		waitUntil(b, "every change reconciled", func() bool { return ctl.changes.Load() >= int64(made) })
		peak := sampler.finish()
		b.StopTimer()
		from, to := broke.Load(), relisted.Load()
		during := ctl.latencies(from, to)
		prior := ctl.latencies(from-int64(time.Second), from)
		b.ReportMetric(float64(to-from)/1e9, "relist-s")
		b.ReportMetric(float64(peak)-float64(before), "retained-B")
		b.ReportMetric(percentile(during, 0.99), "p99-ms")
		b.ReportMetric(percentile(prior, 0.99), "before-p99-ms")
		ctl.shutdown()
		goruntime.KeepAlive(c)
		b.StartTimer()
	}
}
