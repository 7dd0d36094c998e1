package cache

import (
	"errors"
	"fmt"
	"strings"
)

// ErrResourceVersionNotComparable is returned (wrapped) by CompareResourceVersion and by the
// waits built on it when a resource version is not a decimal number without leading zeros,
// the form etcd-backed API servers issue. Servers that keep objects elsewhere (aggregated API
// servers, for example) may issue opaque versions that cannot be ordered; waiting for one of
// them fails at once with this error instead of guessing.
//
// kcache extension.
var ErrResourceVersionNotComparable = errors.New("cache: resource version is not comparable")

// CompareResourceVersion orders two resource versions issued by an etcd-backed API server: it
// returns -1 if a is older than b, 0 if they are equal and +1 if a is newer. A version is
// comparable if it is a non-empty string of decimal digits without a leading zero, of any
// length; anything else ("", "0", a leading zero, a non-digit) gives an error wrapping
// ErrResourceVersionNotComparable that quotes the offending version. O(len(a)+len(b)), no
// allocation unless it fails.
//
// It is the rule of CompareResourceVersion in k8s.io/apimachinery/pkg/util/resourceversion
// (apimachinery v0.35 and later), for programs held to older apimachinery versions.
//
// Resource versions of one etcd are a single counter shared by every resource it stores, so
// versions of different resources of one API server compare meaningfully as long as both are
// kept in the same etcd (an API server can keep some resources, typically Events, in another
// one with --etcd-servers-overrides; their versions are then a separate counter).
//
// kcache extension.
func CompareResourceVersion(a, b string) (int, error) {
	if !comparableResourceVersion(a) {
		return 0, fmt.Errorf("%w: %q", ErrResourceVersionNotComparable, a)
	}
	if !comparableResourceVersion(b) {
		return 0, fmt.Errorf("%w: %q", ErrResourceVersionNotComparable, b)
	}
	return compareComparableResourceVersions(a, b), nil
}

// comparableResourceVersion reports whether rv is a decimal number without a leading zero.
func comparableResourceVersion(rv string) bool {
	if rv == "" || rv[0] == '0' {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}

// compareComparableResourceVersions is CompareResourceVersion for two versions known to be
// comparable: without leading zeros the longer number is the larger, and numbers of one length
// order like their digits.
func compareComparableResourceVersions(a, b string) int {
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return strings.Compare(a, b)
}
