package cache

// initialSync is the sync bookkeeping DeltaFIFO and RealFIFO share: whether the queue has
// been populated (by its first Replace, or by a write before it), how many deltas of that
// first Replace are still to be processed, and the channel closed once none is, which
// HasSynced and Done read. Both queues embed it; its fields are guarded by the queue's lock,
// except synced, which is only ever closed, so HasSynced takes no lock.
type initialSync struct {
	// name is the queue's name, for DoneChecker and its logger.
	name string
	// synced is closed once the initial population has been processed.
	synced chan struct{}
	// populated is set by the first Replace, or by an Add, Update or Delete before it.
	populated bool
	// initialPopulationCount is how many items of the first Replace are still to be
	// processed.
	initialPopulationCount int
	// syncedClosed records that synced was closed.
	syncedClosed bool
}

func newInitialSync(name string) initialSync {
	return initialSync{name: name, synced: make(chan struct{})}
}

// HasSyncedChecker returns a DoneChecker, named after the queue, that is done when HasSynced
// turns true.
func (s *initialSync) HasSyncedChecker() DoneChecker {
	return s
}

// Name returns the queue's name, for DoneChecker.
func (s *initialSync) Name() string {
	return s.name
}

// Done returns a channel that is closed when HasSynced turns true, for DoneChecker.
func (s *initialSync) Done() <-chan struct{} {
	return s.synced
}

// checkSyncedLocked closes synced once the initial population is processed. It must run after
// every change of populated or initialPopulationCount.
func (s *initialSync) checkSyncedLocked() {
	if s.populated && s.initialPopulationCount == 0 && !s.syncedClosed {
		s.syncedClosed = true
		close(s.synced)
	}
}

// populateLocked marks the queue populated: by a first Replace that queued n items, or (n = 0)
// by a write.
func (s *initialSync) populateLocked(n int) {
	if !s.populated {
		s.populated = true
		s.initialPopulationCount = n
	}
	s.checkSyncedLocked()
}

// countInitialProcessedLocked records that n items of the initial population were processed.
func (s *initialSync) countInitialProcessedLocked(n int) {
	if s.initialPopulationCount > 0 {
		s.initialPopulationCount = max(0, s.initialPopulationCount-n)
		s.checkSyncedLocked()
	}
}
