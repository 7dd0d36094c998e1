package cache

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// callerLog records, for every line logged through it, the file:line it is attributed to.
type callerLog struct {
	mu    sync.Mutex
	lines []string // "file.go:NN message"
	// helpers holds the functions that marked themselves call-stack helpers.
	helpers map[string]bool
}

func (c *callerLog) record(site, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, site+" "+msg)
}

func (c *callerLog) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// depthSink attributes a line the way klog does: by skipping a fixed number of frames that
// grows with WithCallDepth.
type depthSink struct {
	log   *callerLog
	depth int
}

var _ logr.CallDepthLogSink = depthSink{}

func (s depthSink) Init(logr.RuntimeInfo) {}
func (s depthSink) Enabled(int) bool      { return true }

func (s depthSink) Info(_ int, msg string, _ ...any) {
	// Frame 0 is this method, 1 is logr.Logger's method, 2 the caller of that method.
	_, file, line, _ := runtime.Caller(2 + s.depth)
	s.log.record(fmt.Sprintf("%s:%d", filepath.Base(file), line), msg)
}

func (s depthSink) Error(_ error, msg string, _ ...any) {
	_, file, line, _ := runtime.Caller(2 + s.depth)
	s.log.record(fmt.Sprintf("%s:%d", filepath.Base(file), line), msg)
}

func (s depthSink) WithValues(...any) logr.LogSink   { return s }
func (s depthSink) WithName(string) logr.LogSink     { return s }
func (s depthSink) WithCallDepth(d int) logr.LogSink { s.depth += d; return s }

// helperSink attributes a line the way testing.T does: to the first frame that is neither a
// marked helper nor inside logr or apimachinery's error handling.
type helperSink struct{ log *callerLog }

var _ logr.CallStackHelperLogSink = helperSink{}

func (s helperSink) Init(logr.RuntimeInfo)               {}
func (s helperSink) Enabled(int) bool                    { return true }
func (s helperSink) Error(_ error, msg string, _ ...any) { s.attribute(msg) }
func (s helperSink) WithValues(...any) logr.LogSink      { return s }
func (s helperSink) WithName(string) logr.LogSink        { return s }

func (s helperSink) GetCallStackHelper() func() {
	return func() {
		pc, _, _, _ := runtime.Caller(1)
		s.log.mu.Lock()
		defer s.log.mu.Unlock()
		if s.log.helpers == nil {
			s.log.helpers = map[string]bool{}
		}
		s.log.helpers[runtime.FuncForPC(pc).Name()] = true
	}
}

func (s helperSink) Info(_ int, msg string, _ ...any) { s.attribute(msg) }

// attribute records msg at the first frame above the logr method that is not skipped.
func (s helperSink) attribute(msg string) {
	pcs := make([]uintptr, 64)
	// Skip runtime.Callers, attribute and the sink method that called it.
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	s.log.mu.Lock()
	helpers := maps.Clone(s.log.helpers)
	s.log.mu.Unlock()
	for {
		f, more := frames.Next()
		skip := helpers[f.Function] || strings.HasPrefix(f.Function, "github.com/go-logr/logr.") ||
			strings.HasPrefix(f.Function, "k8s.io/apimachinery/pkg/util/runtime.")
		if !skip || !more {
			s.log.record(fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line), msg)
			return
		}
	}
}

// callSite returns the file:line of its own call; wrap a call in it to learn that call's line.
func callSite(...any) string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// TestWaitLogsCallerLocation checks that the lines WaitFor, the named cache-sync waits and the
// AddEventHandler methods log on behalf of their caller are attributed to the caller's file and line, for loggers that
// skip frames by depth (klog) and for loggers that skip marked helpers (testing.T, ktesting).
func TestWaitLogsCallerLocation(t *testing.T) {
	doneChecker := newInfTestChecker("ready")
	doneChecker.finish()
	notDone := newInfTestChecker("never")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	synced := func() bool { return true }
	unsynced := func() bool { return false }

	type call func(ctx context.Context) string // makes the call, returns its own file:line
	calls := []struct {
		name  string
		call  call
		lines int
		// global: the call logs through klog's global logger, which forwards by call depth
		// and so cannot honour helper marks; only the depth-based sink applies.
		global bool
	}{
		{"WaitFor done", func(ctx context.Context) string {
			return callSite(WaitFor(ctx, "caches", doneChecker))
		}, 2, false},
		{"WaitFor timed out", func(ctx context.Context) string {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return callSite(WaitFor(ctx, "caches", notDone))
		}, 2, false},
		{"WaitForNamedCacheSyncWithContext", func(ctx context.Context) string {
			return callSite(WaitForNamedCacheSyncWithContext(ctx, synced))
		}, 2, false},
		{"WaitForNamedCacheSyncWithContext unsynced", func(ctx context.Context) string {
			ctx = klog.NewContext(cancelled, klog.FromContext(ctx))
			return callSite(WaitForNamedCacheSyncWithContext(ctx, unsynced))
		}, 2, false},
		{"AddEventHandlerWithOptions with a too small resync period", func(ctx context.Context) string {
			inf := infTestNewInformer(infTestSource(), time.Minute)
			logger := klog.FromContext(ctx)
			period := time.Millisecond
			return callSite(inf.AddEventHandlerWithOptions(newInfTestRecorder(), HandlerOptions{Logger: &logger, ResyncPeriod: &period}))
		}, 1, false},
		{"AddEventHandlerWithResyncPeriod too small", func(ctx context.Context) string {
			klog.SetLogger(klog.FromContext(ctx))
			defer klog.ClearLogger()
			inf := infTestNewInformer(infTestSource(), time.Minute)
			return callSite(inf.AddEventHandlerWithResyncPeriod(newInfTestRecorder(), time.Millisecond))
		}, 1, true},
		{"WaitForNamedCacheSync", func(ctx context.Context) string {
			klog.SetLogger(klog.FromContext(ctx))
			defer klog.ClearLogger()
			return callSite(WaitForNamedCacheSync("ctrl", make(chan struct{}), synced))
		}, 2, true},
	}
	sinks := []struct {
		name    string
		logger  func(*callerLog) logr.Logger
		helpers bool
	}{
		{"call depth", func(l *callerLog) logr.Logger { return logr.New(depthSink{log: l}) }, false},
		{"call-stack helper", func(l *callerLog) logr.Logger { return logr.New(helperSink{log: l}) }, true},
	}
	for _, sink := range sinks {
		for _, c := range calls {
			if c.global && sink.helpers {
				continue
			}
			t.Run(sink.name+"/"+c.name, func(t *testing.T) {
				log := &callerLog{}
				ctx := klog.NewContext(context.Background(), sink.logger(log))
				want := c.call(ctx)
				got := log.snapshot()
				if len(got) != c.lines {
					t.Fatalf("got %d lines %q, want %d", len(got), got, c.lines)
				}
				for _, l := range got {
					if !strings.HasPrefix(l, want+" ") {
						t.Errorf("line %q is not attributed to the caller %s", l, want)
					}
				}
			})
		}
	}
}
