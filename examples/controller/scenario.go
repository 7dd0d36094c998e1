package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
	fcache "github.com/kcache/cache/testing"
)

// stepTimeout bounds how long the scenario waits for the controller after each step.
const stepTimeout = 30 * time.Second

var namespaces = []string{"team-a", "team-b", "team-c"}

// summary is what the run reports at the end.
type summary struct {
	counts
	widgets, workers int
	elapsed          time.Duration
	cacheSize        int
	sourceSize       int
	converged        bool
	byNamespace      map[string]int
}

// run seeds src, runs the controller against it, drives the scenario and returns a summary.
// It stops the informer and the workers before returning; if linger is not nil, it first calls
// linger with the summary while they still run (to keep the debug page showing them).
func run(ctx context.Context, src *fcache.FakeControllerSource, out *printer, widgets, workers int, linger func(*summary)) (*summary, error) {
	start := time.Now()
	for i := 0; i < widgets; i++ {
		src.Add(newWidget(namespaces[i%len(namespaces)], fmt.Sprintf("widget-%02d", i), 1+i%5))
	}
	out.plain("kcache example controller: %d widgets in %d namespaces on a fake API source, %d workers", widgets, len(namespaces), workers)

	// The typed view: handlers get *Widget, and the namespace index serves the lister's
	// namespaced List.
	informer := cache.NewTypedSharedIndexInformer[*Widget](
		cache.NewSharedIndexInformer(src, &Widget{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))
	ctrl := newController(informer, out)
	registration, err := informer.AddTypedEventHandler(ctrl.handler())
	if err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(runCtx) })
	wg.Go(func() { ctrl.run(runCtx, workers) })
	defer func() {
		cancel()
		wg.Wait()
	}()

	// Wait for the cache and for the handler to have seen the initial list.
	if !cache.WaitFor(runCtx, "", informer.HasSyncedChecker(), registration.HasSyncedChecker()) {
		return nil, fmt.Errorf("caches did not sync: %w", context.Cause(runCtx))
	}
	out.logf("informer", "synced: %d widgets in the cache, handler has seen them all", len(informer.GetStore().List()))
	if err := ctrl.restartDemo(runCtx, func() int {
		n := 0
		for i := 1; i <= 2 && i < widgets; i++ {
			src.Modify(newWidget(namespaces[i%len(namespaces)], fmt.Sprintf("widget-%02d", i), 99))
			n++
		}
		return n
	}); err != nil {
		return nil, err
	}

	want := func() map[string]string { return sourceState(src) }
	steps := []struct {
		name string
		do   func()
	}{
		{"create two widgets", func() {
			src.Add(newWidget("team-a", "widget-new-1", 2))
			src.Add(newWidget("team-b", "widget-new-2", 4))
		}},
		{"resize three widgets", func() {
			for i := 0; i < 3 && i < widgets; i++ {
				src.Modify(newWidget(namespaces[i%len(namespaces)], fmt.Sprintf("widget-%02d", i), 10+i))
			}
		}},
		{"delete two widgets", func() {
			src.Delete(newWidget("team-b", "widget-new-2", 0))
			if widgets > 4 {
				src.Delete(newWidget(namespaces[4%len(namespaces)], "widget-04", 0))
			}
		}},
		{"hide a delete and a resize from the watch, then force a relist", func() {
			src.DeleteDropWatch(newWidget("team-a", "widget-new-1", 0))
			if widgets > 5 {
				src.ModifyDropWatch(newWidget(namespaces[5%len(namespaces)], "widget-05", 42))
			}
			// The watch breaks and the history it would resume from is compacted away, so the
			// reflector must list again; the informer derives the missed changes from the list.
			src.Compact(src.ResourceVersion())
			src.CloseWatches()
		}},
	}
	if err := ctrl.waitCaughtUp(runCtx, want, stepTimeout); err != nil {
		return nil, err
	}
	for _, step := range steps {
		out.logf("source", "--- %s", step.name)
		step.do()
		if err := ctrl.waitCaughtUp(runCtx, want, stepTimeout); err != nil {
			return nil, fmt.Errorf("after %q: %w", step.name, err)
		}
	}

	s := &summary{widgets: widgets, workers: workers, elapsed: time.Since(start), byNamespace: map[string]int{}}
	ctrl.mu.Lock()
	s.counts = ctrl.counts
	ctrl.mu.Unlock()
	s.sourceSize = src.Len()
	s.cacheSize = len(informer.GetStore().List())
	s.converged = sameState(cacheState(informer.GetStore()), sourceState(src))
	for _, ns := range namespaces {
		widgets, err := listers.NewNamespaced(ctrl.lister, ns).List(labels.Everything())
		if err != nil {
			return nil, err
		}
		s.byNamespace[ns] = len(widgets)
	}
	if linger != nil {
		linger(s)
	}
	return s, nil
}

// sourceState maps each key in src to its resource version.
func sourceState(src *fcache.FakeControllerSource) map[string]string {
	list, err := src.List(metav1.ListOptions{})
	if err != nil {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	return stateOf(items)
}

// cacheState maps each key in the store to its resource version.
func cacheState(store cache.Store) map[string]string {
	return stateOfAny(store.List())
}

func sameState(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func (s *summary) print(out *printer) {
	ns := make([]string, 0, len(s.byNamespace))
	for _, n := range namespaces {
		ns = append(ns, fmt.Sprintf("%s=%d", n, s.byNamespace[n]))
	}
	sort.Strings(ns)
	verdict := "yes"
	if !s.converged {
		verdict = "NO"
	}
	out.plain("")
	out.plain("summary (%.2fs)", s.elapsed.Seconds())
	out.plain("  handler saw:   %d initial adds, %d adds, %d updates, %d deletes (%d as tombstones from the relist),",
		s.initialAdds, s.adds, s.updates, s.deletes, s.tombstones)
	out.plain("                 %d unchanged objects re-delivered by the relist", s.unchanged)
	out.plain("  workers did:   %d reconciles, %d retries after errors, %d keys given up", s.reconciles, s.retries, s.droppedKeys)
	out.plain("  cache:         %d widgets (%s); source has %d; cache equals source: %s",
		s.cacheSize, strings.Join(ns, " "), s.sourceSize, verdict)
}
