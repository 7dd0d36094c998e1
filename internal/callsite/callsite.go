// Package callsite names the code that called into a package: the first frame of the calling
// goroutine outside a set of packages, as a Reflector's or a workqueue's default name.
package callsite

import (
	"fmt"
	"path"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// thisPackage is this package's import path.
const thisPackage = "github.com/kcache/cache/internal/callsite"

// Caller returns the closest frame of the calling goroutine whose function is in none of the
// packages skip (import paths), nor in this package or the Go runtime. ok is false when every
// frame is in one of them. It looks at most 32 frames deep.
func Caller(skip ...string) (f runtime.Frame, ok bool) {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for more := true; more; {
		f, more = frames.Next()
		pkg := Package(f.Function)
		if pkg != "" && pkg != "runtime" && pkg != thisPackage && !slices.Contains(skip, pkg) {
			return f, true
		}
	}
	return runtime.Frame{}, false
}

// Name returns "import/path/file.go:line" of the closest frame of the calling goroutine
// outside the packages skip (see Caller). When every frame is in them (a goroutine one of
// them started), it names the go statement that started the goroutine. It returns "????"
// when it finds neither, as client-go does.
//
// The file is named by its package's import path wherever its source lives on disk (module
// cache, vendor directory, or a checkout that a replace directive points at):
// "github.com/kcache/cache/informers/factory.go:317", as client-go's names read
// "k8s.io/client-go/informers/factory.go:160".
func Name(skip ...string) string {
	if f, ok := Caller(skip...); ok {
		return fmt.Sprintf("%s:%d", sourceName(f.Function, f.File), f.Line)
	}
	if m := goroutineCreator.FindSubmatch(debug.Stack()); m != nil {
		return sourceName(string(m[1]), string(m[2])) + ":" + string(m[3])
	}
	return "????"
}

// goroutineCreator finds the "created by" frame of a goroutine's stack trace: the creating
// function, its file and its line.
var goroutineCreator = regexp.MustCompile(`(?m)^created by (\S+)(?: in goroutine \d+)?\n\s+(.*):(\d+)(?: \+0x[[:xdigit:]]+)?$`)

// sourceName names file by the import path of function's package and the file's base name. A
// function of package main (whose import path the runtime does not record) or one whose name
// cannot be parsed falls back to the file's path with its machine-specific front (up to the
// module cache, a vendor directory or a GOPATH src directory) dropped.
func sourceName(function, file string) string {
	if pkg := Package(function); pkg != "" && pkg != "main" {
		return pkg + "/" + path.Base(file)
	}
	for _, marker := range []string{"/vendor/", "/pkg/mod/", "/src/"} {
		if i := strings.LastIndex(file, marker); i >= 0 {
			return file[i+len(marker):]
		}
	}
	return file
}

// Package returns the import path of the package a runtime function name belongs to:
// "github.com/kcache/cache/informers" for "github.com/kcache/cache/informers.(*factory).build.func1",
// "" if function has no package part.
func Package(function string) string {
	if i := strings.IndexByte(function, '['); i >= 0 { // type arguments, "[...]"
		function = function[:i]
	}
	slash := strings.LastIndexByte(function, '/')
	dot := strings.IndexByte(function[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	// The linker escapes dots in the last element of an import path ("yaml%2ev3").
	return strings.ReplaceAll(function[:slash+1+dot], "%2e", ".")
}
