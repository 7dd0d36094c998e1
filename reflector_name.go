package cache

import (
	"fmt"
	"path"
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
// The file is named by its package's import path, "github.com/kcache/cache/informers/factory.go:317",
// wherever the source lives on disk (module cache, vendor directory, or a checkout that a replace
// directive points at), as client-go's names read "k8s.io/client-go/informers/factory.go:160".
// client-go matches file paths against "client-go/tools/cache/"; kcache matches function names
// instead, which does not depend on where the module's source lives on disk.
func nameFromCallsite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !inThisPackage(f.Function) && !strings.HasPrefix(f.Function, "runtime.") {
			return sourceName(f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	if m := goroutineCreator.FindSubmatch(debug.Stack()); m != nil {
		return sourceName(string(m[1]), string(m[2]), 0) + ":" + string(m[3])
	}
	return "????"
}

// goroutineCreator finds the "created by" frame of a goroutine's stack trace: the creating
// function, its file and its line.
var goroutineCreator = regexp.MustCompile(`(?m)^created by (\S+)(?: in goroutine \d+)?\n\s+(.*):(\d+)(?: \+0x[[:xdigit:]]+)?$`)

// bridgePackage is the import path of the clientgo bridge, whose informers call this package's
// on their user's behalf: its frames are skipped like this package's, so that a Reflector is
// named after the code that runs a bridge informer, as client-go names it.
const bridgePackage = thisPackage + "/clientgo"

// inThisPackage reports whether function (a runtime function name) belongs to this package or
// to the clientgo bridge. Other subpackages (github.com/kcache/cache/testing…) and the
// external test packages (cache_test, clientgo_test) do not.
func inThisPackage(function string) bool {
	for _, pkg := range []string{thisPackage, bridgePackage} {
		if rest, ok := strings.CutPrefix(function, pkg); ok && strings.HasPrefix(rest, ".") {
			return true
		}
	}
	return false
}

// sourceName names a source line by the import path of function's package and file's base
// name. A function of package main (whose import path the runtime does not record) or one
// whose name cannot be parsed falls back to the file's path with its machine-specific front
// dropped. line 0 is left out.
func sourceName(function, file string, line int) string {
	name := trimSourcePath(file)
	if pkg := packageOf(function); pkg != "" && pkg != "main" {
		name = pkg + "/" + path.Base(file)
	}
	if line == 0 {
		return name
	}
	return fmt.Sprintf("%s:%d", name, line)
}

// packageOf returns the import path of the package a runtime function name belongs to:
// "github.com/kcache/cache/informers" for "github.com/kcache/cache/informers.(*factory).build.func1".
func packageOf(function string) string {
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

// trimSourcePath drops the machine-specific front of a source path: everything up to the module
// cache, a vendor directory or a GOPATH src directory, keeping the import path.
func trimSourcePath(file string) string {
	for _, marker := range []string{"/vendor/", "/pkg/mod/", "/src/"} {
		if i := strings.LastIndex(file, marker); i >= 0 {
			return file[i+len(marker):]
		}
	}
	return file
}
