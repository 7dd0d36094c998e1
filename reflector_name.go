package cache

import (
	"slices"
	"sync"

	"github.com/kcache/cache/internal/callsite"
)

// thisPackage is the import path of this package, as it appears in function names.
const thisPackage = "github.com/kcache/cache"

// reflectorNameSkips guards the packages whose frames a Reflector's default name skips.
var reflectorNameSkips struct {
	mu   sync.Mutex
	pkgs []string
}

// SkipPackageInReflectorNames makes the default name of a Reflector (see ReflectorOptions.Name)
// skip the frames of the package with import path pkg, as it skips this package's own. A
// package that runs informers on its users' behalf, such as an adapter that puts a
// SharedIndexInformer behind another interface, calls it from an init function, so that a
// Reflector is named after the user's code that runs the informer rather than after the
// adapter. Safe for concurrent use.
//
// kcache extension.
func SkipPackageInReflectorNames(pkg string) {
	reflectorNameSkips.mu.Lock()
	defer reflectorNameSkips.mu.Unlock()
	if !slices.Contains(reflectorNameSkips.pkgs, pkg) {
		reflectorNameSkips.pkgs = append(reflectorNameSkips.pkgs, pkg)
	}
}

// defaultReflectorName is the name of a Reflector built without one: "file:line" of the
// closest caller outside this package and the packages given to SkipPackageInReflectorNames,
// the file named by its package's import path (see callsite.Name). client-go matches file
// paths against "client-go/tools/cache/"; matching function names does not depend on where
// the module's source lives on disk.
func defaultReflectorName() string {
	reflectorNameSkips.mu.Lock()
	skip := append([]string{thisPackage}, reflectorNameSkips.pkgs...)
	reflectorNameSkips.mu.Unlock()
	return callsite.Name(skip...)
}
