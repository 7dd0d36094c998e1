package cache

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// RelistCounts counts the full listings a Reflector made after its first one, by cause.
//
// kcache extension.
type RelistCounts struct {
	// Expired counts the relists after the server answered 410 (the resource version the
	// watch or list asked for is gone).
	Expired uint64
	// WatchListFallback counts the LISTs made because a streaming watch-list failed.
	WatchListFallback uint64
	// Error counts the relists after any other failure: a list, or a watch that could not
	// start or ended with an error.
	Error uint64
}

// relistCause is why the next full listing is made.
type relistCause uint8

const (
	relistInitial relistCause = iota
	relistExpired
	relistWatchListFallback
	relistError
)

// reflectorStatus is what an informer's Reflector reports about itself for InformerStatuses:
// lists and their causes, watch restarts, the last errors, and the progress of the listing in
// flight. Its methods are called by the Reflector's goroutine, a few times per list or watch
// (and, during a listing, once per page or streamed event); snapshot reads it from any
// goroutine. A nil *reflectorStatus records nothing.
type reflectorStatus struct {
	clock    clock.PassiveClock
	resource string // what is listed, as it appears in the reasons: "pods" or the type

	// mu guards the fields below.
	mu sync.Mutex
	// lists counts full listings started; relists counts the ones after the first.
	lists   uint64
	relists RelistCounts
	// cause is the cause of the next listing.
	cause relistCause
	// listing is true while a listing (LIST or watch-list) is in flight.
	listing      bool
	listStreamed bool // the listing in flight is a watch-list
	listStart    time.Time
	listReceived int
	lastEvent    time.Time // of the watch-list in flight; zero before its first event
	// listErr is the last listing error, cleared by a successful listing; listErrSince is
	// when the current run of failures began, retryDelay the backoff before the next try.
	listErr      error
	listErrSince time.Time
	retryDelay   time.Duration
	// fallback is why the last watch-list gave way to a LIST, and fallbackAt when.
	fallback   error
	fallbackAt time.Time
	// watches counts the watches started; watch restarts are the ones after the first.
	watches uint64
	// watchErr is the last error a watch ended or failed to start with, at watchErrAt.
	watchErr   error
	watchErrAt time.Time
}

// reflectorStatusSnapshot is a consistent copy of a reflectorStatus.
type reflectorStatusSnapshot struct {
	lists         uint64
	relists       RelistCounts
	watchRestarts uint64
	watchErr      string
	watchErrAt    time.Time
	reason        string
}

func (s *reflectorStatus) now() time.Time { return s.clock.Now() }

// listStarted records the start of a full listing; streamed says it is a watch-list.
func (s *reflectorStatus) listStarted(streamed bool) {
	if s == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists > 0 {
		switch s.cause {
		case relistExpired:
			s.relists.Expired++
		case relistWatchListFallback:
			s.relists.WatchListFallback++
		default:
			s.relists.Error++
		}
	}
	s.lists++
	s.cause = relistError // unless a later report says otherwise
	s.listing, s.listStreamed, s.listStart, s.listReceived, s.lastEvent = true, streamed, now, 0, time.Time{}
}

// listReceivedItems adds n objects to the listing in flight; streamed events also record when
// the last one arrived (at, already read from the clock).
func (s *reflectorStatus) listReceivedItems(n int, at time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.listReceived += n
	if !at.IsZero() {
		s.lastEvent = at
	}
	s.mu.Unlock()
}

// listEnded records the end of a listing: err nil for success.
func (s *reflectorStatus) listEnded(err error) {
	if s == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing = false
	if err == nil {
		s.listErr, s.listErrSince, s.retryDelay = nil, time.Time{}, 0
		return
	}
	if s.listErr == nil {
		s.listErrSince = now
	}
	s.listErr = err
	s.cause = relistError
}

// watchListFellBack records that a watch-list failed with err and a LIST follows.
func (s *reflectorStatus) watchListFellBack(err error) {
	if s == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing = false
	s.fallback, s.fallbackAt = err, now
	s.cause = relistWatchListFallback
}

// watchStarted records a new watch.
func (s *reflectorStatus) watchStarted() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.watches++
	s.mu.Unlock()
}

// watchFailed records err, with which a watch ended or failed to start; the next listing, if
// any, is a relist because of it.
func (s *reflectorStatus) watchFailed(err error) {
	if s == nil || err == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchErr, s.watchErrAt = err, now
	if isExpiredError(err) {
		s.cause = relistExpired
	} else {
		s.cause = relistError
	}
}

// backingOff records the delay before the next attempt.
func (s *reflectorStatus) backingOff(d time.Duration) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.retryDelay = d
	s.mu.Unlock()
}

// snapshot copies the status; synced says whether the informer has synced, which decides
// whether a reason is given.
func (s *reflectorStatus) snapshot(synced bool) reflectorStatusSnapshot {
	if s == nil {
		return reflectorStatusSnapshot{}
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := reflectorStatusSnapshot{lists: s.lists, relists: s.relists, watchErrAt: s.watchErrAt}
	if s.watches > 1 {
		out.watchRestarts = s.watches - 1
	}
	if s.watchErr != nil {
		out.watchErr = s.watchErr.Error()
	}
	if !synced {
		out.reason = s.reasonLocked(now)
	}
	return out
}

// reasonLocked says why the informer has not synced yet, in words a user can act on.
func (s *reflectorStatus) reasonLocked(now time.Time) string {
	switch {
	case s.listing && s.listStreamed:
		quietSince := s.lastEvent
		if quietSince.IsZero() {
			quietSince = s.listStart
		}
		if quiet := now.Sub(quietSince); quiet >= time.Second {
			return fmt.Sprintf("watch-list stream quiet for %s without its end bookmark (%s objects received): falling back to LIST at %s",
				roundDuration(quiet), groupDigits(s.listReceived), roundDuration(initialEventsEndTimeout))
		}
		return fmt.Sprintf("initial watch-list in progress: %s objects received in %s",
			groupDigits(s.listReceived), roundDuration(now.Sub(s.listStart)))
	case s.listing && s.listErr == nil:
		what := "initial list"
		if s.lists > 1 {
			what = "relist"
		}
		if s.listReceived == 0 {
			return fmt.Sprintf("%s in progress for %s", what, roundDuration(now.Sub(s.listStart)))
		}
		return fmt.Sprintf("%s in progress: %s objects received in %s", what, groupDigits(s.listReceived), roundDuration(now.Sub(s.listStart)))
	case s.listErr != nil:
		msg := fmt.Sprintf("LIST failing: %s since %s", describeListError(s.listErr, s.resource), s.listErrSince.Format(time.TimeOnly))
		if s.retryDelay > 0 {
			msg += fmt.Sprintf(", retrying every %s", roundDuration(s.retryDelay))
		}
		if s.fallback != nil {
			msg += fmt.Sprintf(" (after the watch-list failed: %v)", s.fallback)
		}
		return msg
	case s.fallback != nil && s.lists > 0:
		return fmt.Sprintf("watch-list failed at %s (%v): falling back to LIST", s.fallbackAt.Format(time.TimeOnly), s.fallback)
	case s.lists == 0:
		return "not listed yet: the list has not started"
	}
	return "listed: waiting for the informer to process the list"
}

// describeListError names a list error as the API server's status says it ("403 Forbidden
// for pods: <message>"), or gives its text.
func describeListError(err error, resource string) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		if st.Code != 0 {
			return fmt.Sprintf("%d %s for %s: %s", st.Code, st.Reason, resource, st.Message)
		}
	}
	return err.Error()
}

// roundDuration rounds d for a message: to the second from ten seconds up, to 100 ms below.
func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// groupDigits writes n with a comma between groups of three digits: 41,210.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
