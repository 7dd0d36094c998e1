package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
)

func TestReflectorTypeDescriptionAndGVK(t *testing.T) {
	deployment := &unstructured.Unstructured{}
	deployment.SetAPIVersion("apps/v1")
	deployment.SetKind("Deployment")
	cases := []struct {
		name         string
		expectedType interface{}
		option       string
		wantDesc     string
		wantGVK      string // "" means none
	}{
		{name: "nil", expectedType: nil, wantDesc: "<unspecified>"},
		{name: "typed", expectedType: &v1.Pod{}, wantDesc: "*v1.Pod"},
		{name: "unstructured with a GVK", expectedType: deployment, wantDesc: "apps/v1, Kind=Deployment", wantGVK: "apps/v1, Kind=Deployment"},
		{name: "unstructured without a GVK", expectedType: &unstructured.Unstructured{}, wantDesc: "*unstructured.Unstructured"},
		{name: "nil unstructured pointer", expectedType: (*unstructured.Unstructured)(nil), wantDesc: "*unstructured.Unstructured"},
		{name: "option wins", expectedType: &v1.Pod{}, option: "pods in kube-system", wantDesc: "pods in kube-system"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReflectorWithOptions(newReflTestSource("1").lw(), tc.expectedType, newReflTestStore(), ReflectorOptions{TypeDescription: tc.option})
			if got := r.TypeDescription(); got != tc.wantDesc {
				t.Errorf("TypeDescription = %q, want %q", got, tc.wantDesc)
			}
			gotGVK := ""
			if r.expectedGVK != nil {
				gotGVK = r.expectedGVK.String()
			}
			if gotGVK != tc.wantGVK {
				t.Errorf("expected GVK %q, want %q", gotGVK, tc.wantGVK)
			}
		})
	}
}

func TestReflectorOptionsDefaults(t *testing.T) {
	custom := wait.Backoff{Duration: time.Second, Factor: 3, Steps: 5, Cap: time.Minute}
	cases := []struct {
		name       string
		opts       ReflectorOptions
		wantMin    time.Duration
		wantName   string
		wantDelays []time.Duration // first backoff delays, jitter-free cases only
	}{
		{name: "defaults", opts: ReflectorOptions{Name: "n"}, wantMin: 5 * time.Minute, wantName: "n"},
		{name: "short MinWatchTimeout is raised", opts: ReflectorOptions{MinWatchTimeout: time.Minute}, wantMin: 5 * time.Minute},
		{name: "long MinWatchTimeout is kept", opts: ReflectorOptions{MinWatchTimeout: 10 * time.Minute}, wantMin: 10 * time.Minute},
		{name: "custom backoff", opts: ReflectorOptions{Backoff: &custom}, wantMin: 5 * time.Minute,
			wantDelays: []time.Duration{time.Second, 3 * time.Second, 9 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReflectorWithOptions(newReflTestSource("1").lw(), &v1.Pod{}, newReflTestStore(), tc.opts)
			if r.minWatchTimeout != tc.wantMin || r.maxWatchTimeout != 2*tc.wantMin {
				t.Errorf("watch timeouts [%v, %v], want [%v, %v]", r.minWatchTimeout, r.maxWatchTimeout, tc.wantMin, 2*tc.wantMin)
			}
			for range 20 {
				if s := *r.watchTimeoutSeconds(); s < int64(tc.wantMin.Seconds()) || s > int64(2*tc.wantMin.Seconds()) {
					t.Fatalf("watch timeout %ds outside [%v, %v]", s, tc.wantMin, 2*tc.wantMin)
				}
			}
			if tc.wantName != "" && r.Name() != tc.wantName {
				t.Errorf("Name = %q, want %q", r.Name(), tc.wantName)
			}
			if _, ok := r.clock.(clock.RealClock); !ok {
				t.Errorf("clock %T, want clock.RealClock by default", r.clock)
			}
			for i, want := range tc.wantDelays {
				if got := r.delayHandler(); got != want {
					t.Errorf("delay %d = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestReflectorDefaultBackoff(t *testing.T) {
	r := NewReflectorWithOptions(newReflTestSource("1").lw(), &v1.Pod{}, newReflTestStore(), ReflectorOptions{})
	// Each step d is drawn from [d, 2d): 0.8, 1.6, 3.2, … capped at 30s (so at most 60s).
	base := 800 * time.Millisecond
	for i := range 12 {
		got := r.delayHandler()
		if got < base || got >= 2*base {
			t.Fatalf("delay %d = %v, want within [%v, %v)", i, got, base, 2*base)
		}
		base = min(2*base, 30*time.Second)
	}
}

func TestReflectorDefaultName(t *testing.T) {
	// Called from this package's tests only, the name comes from the testing package.
	runner := defaultReflectorName()
	if !strings.HasPrefix(runner, "testing/testing.go:") {
		t.Errorf("defaultReflectorName from package tests = %q, want the testing package's frame", runner)
	}
	// A skipped package's frames are passed over like this package's: here every frame up to
	// the go statement that started the test.
	SkipPackageInReflectorNames("testing")
	defer func() {
		reflectorNameSkips.mu.Lock()
		reflectorNameSkips.pkgs = slices.DeleteFunc(reflectorNameSkips.pkgs, func(p string) bool { return p == "testing" })
		reflectorNameSkips.mu.Unlock()
	}()
	if got := defaultReflectorName(); !strings.HasPrefix(got, "testing/testing.go:") || got == runner {
		t.Errorf("defaultReflectorName skipping the testing package = %q, want the go statement that started the test", got)
	}
	// On a goroutine with only this package's frames, the name is where it was started.
	names := make(chan string)
	_, _, line, _ := runtime.Caller(0)
	go func() { names <- NewReflector(newReflTestSource("1").lw(), nil, newReflTestStore(), 0).Name() }()
	if got, want := <-names, fmt.Sprintf("github.com/kcache/cache/reflector_options_test.go:%d", line+1); got != want {
		t.Errorf("name of a reflector built on a goroutine of this package = %q, want the go statement (%s)", got, want)
	}
}

func TestDefaultWatchErrorHandler(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // substring of the log at verbosity 3; "" for nothing
	}{
		{name: "expired is V(4)", err: apierrors.NewResourceExpired("old"), want: ""},
		{name: "gone is V(4)", err: reflTestGone(), want: ""},
		{name: "EOF is silent", err: io.EOF, want: ""},
		{name: "unexpected EOF is V(1)", err: io.ErrUnexpectedEOF, want: "Watch closed with unexpected EOF"},
		{name: "anything else is an error", err: errors.New("boom"), want: "Failed to watch"},
		{name: "wrapped EOF is an error", err: fmt.Errorf("x: %w", io.EOF), want: "Failed to watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(3), ktesting.BufferLogs(true)))
			ctx := klog.NewContext(context.Background(), logger)
			r := NewNamedReflector("handler-test", newReflTestSource("1").lw(), &v1.Pod{}, newReflTestStore(), 0)
			DefaultWatchErrorHandler(ctx, r, tc.err)
			out := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			if tc.want == "" && out != "" || tc.want != "" && !strings.Contains(out, tc.want) {
				t.Fatalf("log %q, want %q", out, tc.want)
			}
			if tc.want != "" && !strings.Contains(out, "handler-test") {
				t.Fatalf("log %q does not name the reflector", out)
			}
		})
	}
}

func TestVeryShortWatchErrorText(t *testing.T) {
	err := error(&VeryShortWatchError{Name: "r1"})
	want := "very short watch: r1: Unexpected watch close - watch lasted less than a second and no items received"
	if err.Error() != want {
		t.Fatalf("Error() = %q, want client-go's %q", err.Error(), want)
	}
	var target *VeryShortWatchError
	if !errors.As(fmt.Errorf("wrapped: %w", err), &target) || target.Name != "r1" {
		t.Fatalf("errors.As did not find the VeryShortWatchError")
	}
}

func TestReflectorLoggerOption(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(4), ktesting.BufferLogs(true)))
	src := newReflTestSource("1")
	src.lists = []reflTestListResult{{err: errors.New("down")}}
	r := NewReflectorWithOptions(src.lw(), &v1.Pod{}, newReflTestStore(), ReflectorOptions{Name: "named", Logger: &logger})
	r.useWatchList = false
	if err := r.ListAndWatchWithContext(context.Background()); err == nil {
		t.Fatalf("ListAndWatch succeeded, want the list error")
	}
	out := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if !strings.Contains(out, "Listing and watching") || !strings.Contains(out, "named") {
		t.Fatalf("the Logger option did not receive the reflector's logs: %q", out)
	}
}

func TestNewNamespaceKeyedIndexerAndReflector(t *testing.T) {
	indexer, r := NewNamespaceKeyedIndexerAndReflector(newReflTestSource("1").lw(), &v1.Pod{}, time.Minute)
	if err := indexer.Add(reflTestPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	if keys := indexer.ListKeys(); len(keys) != 1 || keys[0] != "ns/a" {
		t.Fatalf("keys %v, want ns/a", keys)
	}
	if got, err := indexer.ByIndex(NamespaceIndex, "ns"); err != nil || len(got) != 1 {
		t.Fatalf("ByIndex(namespace, ns) = %v, %v; want the pod", got, err)
	}
	if r.store != ReflectorStore(indexer) || r.resyncPeriod != time.Minute {
		t.Fatalf("the reflector does not fill the indexer with the resync period")
	}
}
