package cache

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
