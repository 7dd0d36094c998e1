package cache

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// thisPackage is the import path of this package, as it appears in function names.
const thisPackage = "github.com/kcache/cache"

// nameFromCallsite returns "file:line" of the closest caller outside this package (and outside
// the Go runtime), the default name of a Reflector. When every frame of the goroutine is in this
// package (a Reflector built on a goroutine this package started), it names the code that
// started the goroutine. It returns "????" when it finds nothing.
//
// client-go matches file paths against "client-go/tools/cache/"; kcache matches function names
// instead, which does not depend on where the module's source lives on disk.
func nameFromCallsite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !inThisPackage(f.Function) && !strings.HasPrefix(f.Function, "runtime.") {
			return shortFileLine(f.File, f.Line)
		}
		if !more {
			break
		}
	}
	if m := goroutineCreator.FindSubmatch(debug.Stack()); m != nil {
		return shortFileLine(string(m[1]), 0) + ":" + string(m[2])
	}
	return "????"
}

// goroutineCreator finds the "created by" frame of a goroutine's stack trace.
var goroutineCreator = regexp.MustCompile(`(?m)^created by .*\n\s+(.*):(\d+)(?: \+0x[[:xdigit:]]+)?$`)

// inThisPackage reports whether function (a runtime function name) belongs to this package.
// Subpackages (github.com/kcache/cache/testing…) and the external test package cache_test do
// not.
func inThisPackage(function string) bool {
	rest, ok := strings.CutPrefix(function, thisPackage)
	return ok && strings.HasPrefix(rest, ".")
}

// shortFileLine drops the machine-specific front of a source path: everything up to the module
// cache or GOPATH src directory, keeping the import path. line 0 is left out.
func shortFileLine(file string, line int) string {
	for _, marker := range []string{"/vendor/", "/pkg/mod/", "/src/"} {
		if i := strings.LastIndex(file, marker); i >= 0 {
			file = file[i+len(marker):]
			break
		}
	}
	if line == 0 {
		return file
	}
	return fmt.Sprintf("%s:%d", file, line)
}
