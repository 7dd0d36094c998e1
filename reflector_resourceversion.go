package cache

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The resource-version rules. A Reflector remembers the newest resource version its store
// reflects (lastSyncResourceVersion) and whether the server refused it (410 Expired/Gone, or
// "too large") the last time it was used.
//
//   - A LIST asks for "0" when nothing was listed yet (any cached state is fine, so the server
//     answers from its watch cache), the last resource version afterwards (data at least that
//     new: the cache never goes back in time), and "" (a consistent read, the newest data) once
//     the last one was refused.
//   - A streaming watch-list asks for the last resource version, or "" when there is none or
//     it was refused.
//   - A watch resumes from the last resource version.

// setLastSyncResourceVersion records v as the resource version the store reflects.
func (r *Reflector) setLastSyncResourceVersion(v string) {
	r.rvMu.Lock()
	r.lastSyncResourceVersion = v
	r.rvMu.Unlock()
	r.metrics.setLastResourceVersion(v)
}

// relistResourceVersion is the resource version a LIST asks for.
func (r *Reflector) relistResourceVersion() string {
	r.rvMu.RLock()
	defer r.rvMu.RUnlock()
	switch {
	case r.isLastSyncResourceVersionUnavailable:
		return ""
	case r.lastSyncResourceVersion == "":
		return "0"
	}
	return r.lastSyncResourceVersion
}

// rewatchResourceVersion is the resource version a streaming watch-list asks for.
func (r *Reflector) rewatchResourceVersion() string {
	r.rvMu.RLock()
	defer r.rvMu.RUnlock()
	if r.isLastSyncResourceVersionUnavailable {
		return ""
	}
	return r.lastSyncResourceVersion
}

// setIsLastSyncResourceVersionUnavailable records whether the server refused the last resource
// version.
func (r *Reflector) setIsLastSyncResourceVersionUnavailable(unavailable bool) {
	r.rvMu.Lock()
	defer r.rvMu.Unlock()
	r.isLastSyncResourceVersionUnavailable = unavailable
}

// isExpiredError reports whether err says the requested resource version is no longer
// available (410: Expired, or Gone from servers before 1.18).
func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// tooLargeResourceVersionMessage is how servers 1.17.0–1.18.5 (as a timeout cause) and older
// ones (in the message) say a resource version is newer than what they have.
const tooLargeResourceVersionMessage = "Too large resource version"

// isTooLargeResourceVersionError reports whether err says the requested resource version is
// newer than the server knows (typically a server that restarted from an older backup, or a
// cache that has not caught up yet).
func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	if !apierrors.IsTimeout(err) {
		return false
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status == nil {
		return false
	}
	s := status.Status()
	if s.Details == nil {
		return false
	}
	for _, cause := range s.Details.Causes {
		if cause.Message == tooLargeResourceVersionMessage {
			return true
		}
	}
	return strings.Contains(s.Message, tooLargeResourceVersionMessage)
}
