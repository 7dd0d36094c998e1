package callsite

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestPackage(t *testing.T) {
	cases := []struct{ function, want string }{
		{"github.com/kcache/cache.NewReflector", "github.com/kcache/cache"},
		{"github.com/kcache/cache.(*Reflector).RunWithContext", "github.com/kcache/cache"},
		{"github.com/kcache/cache.(*sharedIndexInformer).RunWithContext.func1", "github.com/kcache/cache"},
		{"github.com/kcache/cache_test.ExampleReflector", "github.com/kcache/cache_test"},
		{"github.com/kcache/cache/testing.New", "github.com/kcache/cache/testing"},
		{"example.com/bridge/generated.NewInformerFunc[...].func1", "example.com/bridge/generated"},
		{"example.com/lib.Run[go.shape.*example.com/x.T]", "example.com/lib"},
		{"github.com/kcache/cachex.Foo", "github.com/kcache/cachex"},
		{"gopkg.in/yaml%2ev3.(*decoder).unmarshal", "gopkg.in/yaml.v3"},
		{"main.main", "main"},
		{"runtime.goexit", "runtime"},
		{"nopackage", ""},
		{"", ""},
	}
	for _, tc := range cases {
		if got := Package(tc.function); got != tc.want {
			t.Errorf("Package(%q) = %q, want %q", tc.function, got, tc.want)
		}
	}
}

func TestSourceName(t *testing.T) {
	cases := []struct{ function, file, want string }{
		// A checkout that a replace directive points at: named by import path, not disk path.
		{"github.com/kcache/cache/informers.(*sharedInformerFactory).StartWithContext.func1", "/home/me/kcache/informers/factory.go",
			"github.com/kcache/cache/informers/factory.go"},
		{"example.com/app/ctrl.New", "/root/go/pkg/mod/example.com/app@v1.2.3/ctrl/ctrl.go", "example.com/app/ctrl/ctrl.go"},
		{"example.com/lib.Run[...]", "/srv/app/vendor/example.com/lib/x.go", "example.com/lib/x.go"},
		{"gopkg.in/yaml%2ev3.(*decoder).unmarshal", "/root/go/pkg/mod/gopkg.in/yaml.v3@v3.0.1/decode.go", "gopkg.in/yaml.v3/decode.go"},
		// Package main has no import path in function names: the path, trimmed as client-go does.
		{"main.main", "/home/me/go/src/example.com/app/main.go", "example.com/app/main.go"},
		{"main.main", "/srv/app/main.go", "/srv/app/main.go"},
		{"", "/root/go/pkg/mod/example.com/app@v1.2.3/main.go", "example.com/app@v1.2.3/main.go"},
	}
	for _, tc := range cases {
		if got := sourceName(tc.function, tc.file); got != tc.want {
			t.Errorf("sourceName(%q, %q) = %q, want %q", tc.function, tc.file, got, tc.want)
		}
	}
}

// callThrough calls f from a frame of package skipped, as seen by Caller: this package's own.
func callThrough(f func() string) string { return f() }

func TestName(t *testing.T) {
	// Every frame up to the test runner is this package's: the name is the testing package's.
	if got := Name(); !strings.HasPrefix(got, "testing/testing.go:") {
		t.Errorf("Name() from this package's tests = %q, want the testing package's frame", got)
	}
	// Skipping the testing package too leaves only the go statement that started the test.
	if got := Name("testing"); !strings.HasPrefix(got, "testing/testing.go:") {
		t.Errorf(`Name("testing") = %q, want the go statement in the testing package`, got)
	}
	// On a goroutine with only skipped frames, the name is the go statement that started it.
	names := make(chan string)
	_, _, line, _ := runtime.Caller(0)
	go func() { names <- callThrough(func() string { return Name() }) }()
	if got, want := <-names, fmt.Sprintf("github.com/kcache/cache/internal/callsite/callsite_test.go:%d", line+1); got != want {
		t.Errorf("Name() on a goroutine of this package = %q, want the go statement %q", got, want)
	}
}

func TestCaller(t *testing.T) {
	f, ok := Caller()
	if !ok || Package(f.Function) != "testing" {
		t.Errorf("Caller() = %v, %v; want a frame of the testing package", f.Function, ok)
	}
	if f, ok := Caller("testing"); ok {
		t.Errorf(`Caller("testing") = %v, want none: every other frame is this package's or the runtime's`, f.Function)
	}
}
