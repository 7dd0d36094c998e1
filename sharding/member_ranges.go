package sharding

import (
	"slices"
	"sync"
)

// rangeMember is the concurrent shell around one member's rangeState: the hash-mode gates of
// all the member's resources enter it for every reconcile, the member's lease watcher feeds
// it epochs and acknowledgements, and it says when to acknowledge. It starts no goroutine.
type rangeMember struct {
	fence *fence

	// mu guards everything below.
	mu    sync.Mutex
	state rangeState
	// inflight counts the running reconciles in each segment.
	inflight [hashSegments]int
	// busy has the segments whose inflight count is not 0.
	busy segments
	// changed receives a signal (capacity 1) when an acknowledgement may have become due.
	changed chan struct{}
	// watchers are called, outside mu, whenever the active segments change.
	watchers []*rangeWatcher
}

// rangeWatcher is one subscriber to a member's owned ranges.
type rangeWatcher struct {
	notify func()
}

// newRangeMember returns the state of member, under fence f, before any epoch.
func newRangeMember(member string, f *fence) *rangeMember {
	return &rangeMember{fence: f, state: rangeState{member: member}, changed: make(chan struct{}, 1)}
}

// signal wakes the goroutine that acknowledges.
func (r *rangeMember) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// begin starts a reconcile of an object whose shard key hashes to h: it returns the done
// func to call when the reconcile returns, or ErrNotAssigned when the member does not
// reconcile h's segment now, or ErrFenced once the member may no longer act.
func (r *rangeMember) begin(h uint64) (func(), error) {
	seg := segmentOf(h)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.state.active.has(seg) {
		return nil, ErrNotAssigned
	}
	if !r.fence.enter() {
		return nil, ErrFenced
	}
	r.inflight[seg]++
	r.busy.add(seg)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.inflight[seg]--
			due := false
			if r.inflight[seg] == 0 {
				r.busy[seg/64] &^= 1 << (seg % 64)
				due = !r.state.owned.has(seg)
			}
			r.mu.Unlock()
			r.fence.exit()
			if due {
				r.signal()
			}
		})
	}, nil
}

// observe adopts e if it is newer, and activates the owned segments if every other member of
// the adopted epoch acknowledged it. It calls the range watchers if the active segments
// changed.
func (r *rangeMember) observe(e Epoch, acked func(member string) (uint64, bool)) {
	r.mu.Lock()
	before := r.state.active
	advanced := r.state.advance(e)
	r.state.activate(acked)
	changed := r.state.active != before
	watchers := slices.Clone(r.watchers)
	r.mu.Unlock()
	if advanced {
		r.signal()
	}
	if changed {
		for _, w := range watchers {
			w.notify()
		}
	}
}

// ackDue returns the epoch to acknowledge now, if one is due (see rangeState.ackDue).
func (r *rangeMember) ackDue() (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.ackDue(r.busy)
}

// acknowledged records that the acknowledgement of epoch n was written.
func (r *rangeMember) acknowledged(n uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state.acknowledged(n)
}

// active returns the segments the member reconciles now.
func (r *rangeMember) active() segments {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.active
}

// watch calls notify whenever the active ranges change, until the returned func is called.
func (r *rangeMember) watch(notify func()) (stop func()) {
	w := &rangeWatcher{notify: notify}
	r.mu.Lock()
	r.watchers = append(r.watchers, w)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.watchers = slices.DeleteFunc(r.watchers, func(x *rangeWatcher) bool { return x == w })
	}
}

// status returns the adopted epoch, the counts of owned and active segments and the last
// acknowledgement, for logs and tests.
func (r *rangeMember) status() (epoch uint64, owned, active int, acked uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.epoch.Number, r.state.owned.count(), r.state.active.count(), r.state.acked
}
