package cache

// DoneChecker is something that finishes once, such as an informer's initial sync, and can be
// waited for without polling.
type DoneChecker interface {
	// Name describes what is being waited for, for logs. It may be computed: call it outside
	// hot paths.
	Name() string

	// Done returns a channel that is closed once the activity has finished.
	Done() <-chan struct{}
}

// IsDone reports, without blocking, whether checker is done.
func IsDone(checker DoneChecker) bool {
	select {
	case <-checker.Done():
		return true
	default:
		return false
	}
}
