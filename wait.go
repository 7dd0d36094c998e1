package cache

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

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

// InformerSynced reports whether an informer (or anything else) has synced. Where a
// DoneChecker is available (HasSyncedChecker), prefer it with WaitFor: waiting on an
// InformerSynced has to poll.
type InformerSynced func() bool

// syncedPollPeriod is how often WaitForCacheSync calls InformerSynced functions.
const syncedPollPeriod = 100 * time.Millisecond

// WaitForCacheSync waits until every cacheSyncs function returns true, checking at once and
// then every 100ms. It returns true when they all did, false if stopCh was closed first.
// Prefer WaitForNamedCacheSyncWithContext (it logs), or WaitFor (it does not poll).
func WaitForCacheSync(stopCh <-chan struct{}, cacheSyncs ...InformerSynced) bool {
	return waitForCacheSync(wait.ContextForChannel(stopCh), cacheSyncs)
}

func waitForCacheSync(ctx context.Context, cacheSyncs []InformerSynced) bool {
	allSynced := func(context.Context) (bool, error) {
		for _, synced := range cacheSyncs {
			if !synced() {
				return false, nil
			}
		}
		return true, nil
	}
	return wait.PollUntilContextCancel(ctx, syncedPollPeriod, true, allSynced) == nil
}

// WaitForNamedCacheSync is WaitForCacheSync that logs "Waiting for caches to sync" and then
// "Caches are synced" (or reports "Unable to sync caches" through utilruntime.HandleError),
// with controllerName in each message.
//
// Its log lines carry the caller's file and line, not this package's.
func WaitForNamedCacheSync(controllerName string, stopCh <-chan struct{}, cacheSyncs ...InformerSynced) bool {
	helper, logger := klog.Background().WithValues("controller", controllerName).WithCallStackHelper()
	helper()
	return waitForNamedCacheSync(klog.NewContext(wait.ContextForChannel(stopCh), logger), cacheSyncs)
}

// WaitForNamedCacheSyncWithContext is WaitForNamedCacheSync that stops when ctx ends and logs
// through the logger in ctx, at V(0). Store a logger with a higher verbosity threshold in ctx
// to make it quieter. Its log lines carry the caller's file and line, not this package's.
func WaitForNamedCacheSyncWithContext(ctx context.Context, cacheSyncs ...InformerSynced) bool {
	helper, logger := klog.FromContext(ctx).WithCallStackHelper()
	helper()
	return waitForNamedCacheSync(klog.NewContext(ctx, logger), cacheSyncs)
}

// waitForNamedCacheSync does the work of both named waits. The logger in ctx has already been
// made to skip the exported function; this function marks itself a call-stack helper too, so
// that the lines are attributed to the exported function's caller.
func waitForNamedCacheSync(ctx context.Context, cacheSyncs []InformerSynced) bool {
	helper, logger := klog.FromContext(ctx).WithCallStackHelper()
	helper()
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Waiting for caches to sync")
	if !waitForCacheSync(ctx, cacheSyncs) {
		utilruntime.HandleErrorWithContext(ctx, nil, "Unable to sync caches")
		return false
	}
	logger.Info("Caches are synced")
	return true
}

// WaitFor waits until every checker is done and returns true, or returns false once ctx ends
// first. It does not poll and starts no goroutine: it selects on the checkers' Done channels
// and ctx together, so it returns as soon as the last checker finishes. When ctx ends, each
// checker is looked at once more without blocking, so one that finished at the same moment
// still counts.
//
// If what is not empty, progress is logged at V(0) through the logger in ctx: "Waiting" with
// for=what, "Done waiting" per checker with its Name as instance, and, on failure, "Timed out
// waiting" with the sorted names of the unfinished checkers and context.Cause(ctx). The lines
// carry the caller's file and line: WaitFor marks itself a call-stack helper on the logger, as
// client-go's does.
func WaitFor(ctx context.Context, what string, checkers ...DoneChecker) bool {
	helper, logger := klog.FromContext(ctx).WithCallStackHelper()
	helper()
	if what != "" {
		logger.Info("Waiting", "for", what)
	}
	pending := slices.Clone(checkers)
	cases := make([]reflect.SelectCase, 0, len(pending)+1)
	for len(pending) > 0 {
		cases = append(cases[:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		for _, c := range pending {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.Done())})
		}
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			break
		}
		if what != "" {
			logger.Info("Done waiting", "for", what, "instance", pending[chosen-1].Name())
		}
		pending = slices.Delete(pending, chosen-1, chosen)
	}
	if len(pending) == 0 {
		return true
	}
	var unfinished []string
	for _, c := range pending {
		if IsDone(c) {
			if what != "" {
				logger.Info("Done waiting", "for", what, "instance", c.Name())
			}
			continue
		}
		unfinished = append(unfinished, c.Name())
	}
	if len(unfinished) == 0 {
		return true
	}
	if what != "" {
		slices.Sort(unfinished)
		logger.Info("Timed out waiting", "for", what, "cause", context.Cause(ctx), "instances", unfinished)
	}
	return false
}

// SyncResult is what a shared informer factory's WaitForCacheSyncWithContext returns: why
// waiting stopped and which informers synced. Note that an informer can be synced before the
// event handlers registered with it are; wait on the registrations' HasSyncedChecker for those.
type SyncResult struct {
	// Err is nil if every informer synced, otherwise why waiting stopped
	// (context.Cause of the context).
	Err error

	// Synced maps the type of each informer's objects to whether it synced.
	Synced map[reflect.Type]bool
}

// AsError returns nil if Err is nil, otherwise an error that names the unsynced types (sorted)
// and wraps Err.
func (c SyncResult) AsError() error {
	if c.Err == nil {
		return nil
	}
	unsynced := make([]string, 0, len(c.Synced))
	for t, synced := range c.Synced {
		if !synced {
			unsynced = append(unsynced, t.String())
		}
	}
	slices.Sort(unsynced)
	return fmt.Errorf("failed to sync all caches: %s: %w", strings.Join(unsynced, ", "), c.Err)
}
