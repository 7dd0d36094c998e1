package cache

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
)

// reflTestMetrics records every reflector metric by "<name>/<metric>".
type reflTestMetrics struct {
	mu     sync.Mutex // mu guards values and off
	values map[string][]float64
	// off stops the recording (the process-wide provider outlives its test).
	off bool
}

func newReflTestMetrics() *reflTestMetrics { return &reflTestMetrics{values: map[string][]float64{}} }

type reflTestMetric struct {
	p   *reflTestMetrics
	key string
}

func (m reflTestMetric) record(v float64) {
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	if !m.p.off {
		m.p.values[m.key] = append(m.p.values[m.key], v)
	}
}
func (m reflTestMetric) Inc()              { m.record(1) }
func (m reflTestMetric) Observe(v float64) { m.record(v) }
func (m reflTestMetric) Set(v float64)     { m.record(v) }

func (p *reflTestMetrics) m(name, metric string) reflTestMetric {
	return reflTestMetric{p, name + "/" + metric}
}
func (p *reflTestMetrics) NewListsMetric(n string) CounterMetric { return p.m(n, "lists") }
func (p *reflTestMetrics) NewListDurationMetric(n string) SummaryMetric {
	return p.m(n, "list_duration")
}
func (p *reflTestMetrics) NewItemsInListMetric(n string) SummaryMetric {
	return p.m(n, "items_in_list")
}
func (p *reflTestMetrics) NewWatchesMetric(n string) CounterMetric { return p.m(n, "watches") }
func (p *reflTestMetrics) NewShortWatchesMetric(n string) CounterMetric {
	return p.m(n, "short_watches")
}
func (p *reflTestMetrics) NewWatchDurationMetric(n string) SummaryMetric {
	return p.m(n, "watch_duration")
}
func (p *reflTestMetrics) NewItemsInWatchMetric(n string) SummaryMetric {
	return p.m(n, "items_in_watch")
}
func (p *reflTestMetrics) NewLastResourceVersionMetric(n string) GaugeMetric {
	return p.m(n, "last_rv")
}

// dump formats the recorded values, sorted by key.
func (p *reflTestMetrics) dump() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lines []string
	for k, v := range p.values {
		lines = append(lines, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, " ")
}

func TestReflectorRecordsMetrics(t *testing.T) {
	cases := []struct {
		name      string
		watchList bool
		want      string
	}{
		{name: "list", want: "r/items_in_list=[2] r/items_in_watch=[2 0] r/last_rv=[10 11 12] r/list_duration=[0] " +
			"r/lists=[1] r/short_watches=[1] r/watch_duration=[10 0] r/watches=[1 1]"},
		{name: "watch-list", watchList: true, want: "r/items_in_list=[2] r/items_in_watch=[2 0] r/last_rv=[10 11 12] r/list_duration=[3] " +
			"r/lists=[1] r/short_watches=[1] r/watch_duration=[10 0] r/watches=[1 1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newReflTestSource("10")
				src.lists = []reflTestListResult{{obj: reflTestPodList("10", reflTestPod("a", "1"), reflTestPod("b", "2"))}}
				r, c := reflTestNew(t, src, newReflTestStore())
				r.useWatchList = tc.watchList
				p := newReflTestMetrics()
				r.metrics = newReflectorMetricsFrom(p, "r")
				stop := reflTestRun(t, func(ctx context.Context) { _ = r.ListAndWatchWithContext(ctx) })
				defer stop()
				synctest.Wait()
				if tc.watchList {
					w := src.watcher(t, 0)
					w.Add(reflTestPod("a", "1"))
					w.Add(reflTestPod("b", "2"))
					reflTestStep(c, 3*time.Second)
					w.Action("BOOKMARK", reflTestBookmark("10", true))
					synctest.Wait()
				}
				w := src.watcher(t, 0)
				w.Add(reflTestPod("c", "11"))
				reflTestStep(c, 10*time.Second)
				w.Modify(reflTestPod("c", "12"))
				w.Stop() // ends after 10s with 2 events: resumed at once
				synctest.Wait()
				src.watcher(t, 1).Stop() // ends at once without events: a short watch
				synctest.Wait()
				if got := p.dump(); got != tc.want {
					t.Fatalf("metrics\n got %s\nwant %s", got, tc.want)
				}
			})
		})
	}
}

func TestReflectorLastResourceVersionMetric(t *testing.T) {
	cases := []struct {
		rv   string
		want []float64
	}{
		{rv: "12345", want: []float64{12345}},
		{rv: "1234567890123456789", want: []float64{567890123456789}},
		{rv: "not-a-number"},
		{rv: ""},
	}
	for _, tc := range cases {
		t.Run(tc.rv, func(t *testing.T) {
			p := newReflTestMetrics()
			m := newReflectorMetricsFrom(p, "r")
			m.setLastResourceVersion(tc.rv)
			if got := p.values["r/last_rv"]; !slices.Equal(got, tc.want) {
				t.Fatalf("gauge %v, want %v", got, tc.want)
			}
		})
	}
}

// reflTestResetMetricsProvider puts the process-wide reflector metrics provider back in its
// first-use state (no provider, SetReflectorMetricsProvider not yet called) now and when the
// test ends, so that a test that sets it can run again (-count) and leaves nothing behind.
func reflTestResetMetricsProvider(t *testing.T) {
	reset := func() {
		reflectorMetricsFactory.mu.Lock()
		defer reflectorMetricsFactory.mu.Unlock()
		reflectorMetricsFactory.once = sync.Once{}
		reflectorMetricsFactory.provider = noopMetricsProvider{}
	}
	reset()
	t.Cleanup(reset)
}

func TestSetReflectorMetricsProvider(t *testing.T) {
	reflTestResetMetricsProvider(t)
	before := NewNamedReflector("before", newReflTestSource("1").lw(), &v1.Pod{}, newReflTestStore(), 0)
	p := newReflTestMetrics()
	SetReflectorMetricsProvider(p)
	t.Cleanup(func() {
		// Reflectors created during the test keep p; make it record nothing more.
		p.mu.Lock()
		p.off = true
		p.mu.Unlock()
	})
	SetReflectorMetricsProvider(newReflTestMetrics()) // ignored: the first call wins
	after := NewNamedReflector("after", newReflTestSource("1").lw(), &v1.Pod{}, newReflTestStore(), 0)
	before.metrics.lists.Inc()
	after.metrics.lists.Inc()
	if got, want := p.dump(), "after/lists=[1]"; got != want {
		t.Fatalf("recorded %q, want %q (only reflectors created after the call)", got, want)
	}
}
