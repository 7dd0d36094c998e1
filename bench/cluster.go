package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// controllerPod is a realisticPod that kubectl apply created: it also carries the
// last-applied-configuration annotation, as pods of hand-applied manifests do, which brings
// it to about 10 KB as JSON.
func controllerPod(i int) *v1.Pod {
	p := realisticPod(i, 100, "1")
	spec, _ := json.Marshal(p.Spec)
	p.Annotations["kubectl.kubernetes.io/last-applied-configuration"] =
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + p.Name + `","namespace":"` + p.Namespace + `"},"spec":` + string(spec) + `}`
	return p
}

var (
	controllerPodsMu sync.Mutex
	podsMade         []*v1.Pod
)

// controllerPodSet returns n controllerPods at resource version 1, made once per process and
// shared by every run (they are never written to): the cluster's objects before any change.
func controllerPodSet(n int) []*v1.Pod {
	controllerPodsMu.Lock()
	defer controllerPodsMu.Unlock()
	for i := len(podsMade); i < n; i++ {
		podsMade = append(podsMade, controllerPod(i))
	}
	return podsMade[:n:n]
}

// cluster is an API server for n pods that change while informers watch them. Its LIST
// answers in pages of the reflector's limit from a snapshot taken at the first page, each page
// a fresh deep copy (as a decoding client gets); a watch starts at the snapshot and first
// replays the pods changed since. Changes are made by one goroutine (change), which also
// sends the watch events, so they reach the watch in order; a relist (breakWatch) ends the
// running watch with a 410 Gone, and the changes made until the next watch runs are replayed
// on it. Every change gets the next resource version; the record keeps, for every change,
// when it was made and the previous change of the same pod, so that a worker that reads a
// pod can tell which changes its reconcile is the first to see (see reconciled).
type cluster struct {
	orig []*v1.Pod // resource version 1; shared, never written

	mu   sync.Mutex
	cur  []*v1.Pod // the latest version of every pod
	snap []*v1.Pod // the LIST's snapshot, while a paged LIST runs
	w    *watch.FakeWatcher
	// replay lists the pods changed since the snapshot of the last LIST that the running
	// watch has not been sent yet; changed marks them.
	replay  []int
	changed []bool
	seq     int64 // resource version of the latest change; 1 before any
	snapRV  int64

	// watched is signalled when a watch starts.
	watched chan struct{}

	// The change record, indexed by resource version: written by change before the event is
	// sent, read by workers after they read the pod from the cache.
	sentAt []int64 // ns since start
	prev   []int64 // the pod's previous change (1: none)
	last   []int64 // per pod: its latest change
	start  time.Time
}

// newCluster returns a cluster of n controllerPods with room for the record of maxChanges
// changes.
func newCluster(n, maxChanges int) *cluster {
	c := &cluster{
		orig:    controllerPodSet(n),
		changed: make([]bool, n),
		seq:     1,
		watched: make(chan struct{}, 16),
		sentAt:  make([]int64, maxChanges+2),
		prev:    make([]int64, maxChanges+2),
		last:    make([]int64, n),
		start:   time.Now(),
	}
	c.cur = append([]*v1.Pod(nil), c.orig...)
	for i := range c.last {
		c.last[i] = 1
	}
	return c
}

func (c *cluster) List(options metav1.ListOptions) (runtime.Object, error) {
	c.mu.Lock()
	first := 0
	if options.Continue == "" {
		// A new LIST: its snapshot covers every change so far.
		c.snap = append(c.snap[:0], c.cur...)
		c.snapRV = c.seq
		for _, i := range c.replay {
			c.changed[i] = false
		}
		c.replay = c.replay[:0]
	} else {
		first, _ = strconv.Atoi(options.Continue)
	}
	end := len(c.snap)
	if options.Limit > 0 {
		end = min(end, first+int(options.Limit))
	}
	page := c.snap[first:end]
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(c.snapRV, 10)}}
	if end < len(c.snap) {
		list.Continue = strconv.Itoa(end)
	}
	c.mu.Unlock()
	list.Items = make([]v1.Pod, len(page))
	for i, p := range page {
		p.DeepCopyInto(&list.Items[i])
	}
	return list, nil
}

func (c *cluster) Watch(options metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(1024, false)
	c.mu.Lock()
	c.w = w
	c.mu.Unlock()
	select {
	case c.watched <- struct{}{}:
	default:
	}
	return w, nil
}

// IsWatchListSemanticsUnSupported makes both reflectors LIST and then watch.
func (c *cluster) IsWatchListSemanticsUnSupported() bool { return true }

// change makes the next change, to pod i, and sends it to the running watch (first replaying
// what the watch missed). Only one goroutine may call change and breakWatch.
func (c *cluster) change(i int) {
	c.mu.Lock()
	c.seq++
	rv := c.seq
	p := c.cur[i].DeepCopy()
	p.ResourceVersion = strconv.FormatInt(rv, 10)
	p.Status.Conditions[1].LastProbeTime = metav1.NewTime(c.start.Add(time.Duration(rv)))
	c.cur[i] = p
	c.prev[rv], c.last[i] = c.last[i], rv
	c.sentAt[rv] = int64(time.Since(c.start))
	w := c.w
	var replay []*v1.Pod
	if w == nil {
		if !c.changed[i] {
			c.changed[i] = true
			c.replay = append(c.replay, i)
		}
	} else if len(c.replay) > 0 {
		for _, k := range c.replay {
			replay = append(replay, c.cur[k])
			c.changed[k] = false
		}
		c.replay = c.replay[:0]
	}
	c.mu.Unlock()
	for _, r := range replay {
		w.Modify(r)
	}
	if w != nil && !c.inReplay(replay, p) {
		w.Modify(p)
	}
}

func (c *cluster) inReplay(replay []*v1.Pod, p *v1.Pod) bool {
	for _, r := range replay {
		if r == p {
			return true
		}
	}
	return false
}

// flush sends the running watch what it missed, waiting for a watch to run if none does.
// Only the goroutine that calls change may call it.
func (c *cluster) flush() {
	for {
		c.mu.Lock()
		w := c.w
		var replay []*v1.Pod
		if w != nil {
			for _, k := range c.replay {
				replay = append(replay, c.cur[k])
				c.changed[k] = false
			}
			c.replay = c.replay[:0]
		}
		c.mu.Unlock()
		if w != nil {
			for _, r := range replay {
				w.Modify(r)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// breakWatch ends the running watch with a 410 Gone, as a server does when the watch's
// resource version was compacted: the reflector lists again.
func (c *cluster) breakWatch() {
	c.mu.Lock()
	w := c.w
	c.w = nil
	c.mu.Unlock()
	if w != nil {
		w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
			Message: "bench: too old resource version"})
	}
}

// podIndex returns the pod number of a pod's cache key (namespace/pod-N).
func podIndex(key string) int {
	n, _ := strconv.Atoi(key[strings.LastIndexByte(key, '-')+1:])
	return n
}
