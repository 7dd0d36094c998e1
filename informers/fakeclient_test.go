package informers_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/kcache/cache/informers"
	fcache "github.com/kcache/cache/testing"
)

// clientGoFakePods behaves like a typed client of client-go's fake clientset: it lists, but
// its watches ignore SendInitialEvents, so a watch-list never ends its initial events. Like
// client-go's (which embed *testing.Fake) it has a ClearActions method.
type clientGoFakePods struct {
	*fcache.Client[*v1.PodList]
}

func (c clientGoFakePods) Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return watch.NewFake(), nil // never a bookmark, never closed
	}
	return c.Client.Watch(ctx, options)
}

func (clientGoFakePods) ClearActions() {}

// An informer over one of client-go's fake typed clients syncs without
// WithWatchListSemanticsOf, by LIST, without trying a watch-list first.
func TestFactoryListsOverClientGoFakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, pods := podSource("default/a", "default/b")
		f := informers.NewSharedInformerFactory(0)
		podInformer := informers.For[*v1.Pod](f, func(ns string) clientGoFakePods { return clientGoFakePods{pods(ns)} })
		ctx := run(t, f)
		mustSync(t, ctx, f)
		if got, _ := podInformer.Lister().List(labels.Everything()); len(got) != 2 {
			t.Fatalf("lister holds %d pods, want 2", len(got))
		}
		for _, r := range src.Requests() {
			if r.Options.SendInitialEvents != nil {
				t.Fatalf("request %+v: a watch-list was tried over a client-go fake", r)
			}
		}
	})
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Factory reflectors are named by import path wherever kcache's source is on disk (a replace
// directive may point at a checkout), and every key appears once on each of their log lines.
func TestFactoryReflectorLogLines(t *testing.T) {
	var out syncBuffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&out), textlogger.Verbosity(4)))
	_, pods := podSource("default/a")
	f := informers.NewSharedInformerFactory(0)
	informers.For[*v1.Pod](f, pods)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.LoggerWithName(logger, "controller")))
	f.StartWithContext(ctx)
	f.WaitForCacheSyncWithContext(ctx)
	cancel()
	f.Shutdown()

	name := regexp.MustCompile(`reflector="([^"]*)"`)
	key := regexp.MustCompile(` ([A-Za-z][A-Za-z0-9_]*)=`)
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		m := name.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		lines++
		if !regexp.MustCompile(`^github\.com/kcache/cache/informers/factory\.go:\d+$`).MatchString(m[1]) {
			t.Errorf("reflector name %q, want github.com/kcache/cache/informers/factory.go:LINE", m[1])
		}
		seen := map[string]bool{}
		for _, k := range key.FindAllStringSubmatch(line, -1) {
			if seen[k[1]] {
				t.Errorf("key %q twice in %s", k[1], line)
			}
			seen[k[1]] = true
		}
		if want := `logger="controller.` + m[1] + `"`; !strings.Contains(line, want) {
			t.Errorf("line %s lacks %s", line, want)
		}
	}
	if lines < 3 {
		t.Fatalf("%d reflector lines logged at V(4), want the start, the list and the sync:\n%s", lines, out.String())
	}
}
