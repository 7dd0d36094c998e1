package cache_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// typedTestTimeout bounds every wait in the typed API tests. Inside a synctest bubble it is
// fake time.
const typedTestTimeout = 30 * time.Second

func typedTestPod(ns, name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func typedTestNode(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// typedTestSource returns a fake source of the list kind newList, holding objs.
func typedTestSource(newList func() runtime.Object, objs ...runtime.Object) *fcache.FakeControllerSource {
	src := fcache.New(fcache.Options{NewListFunc: newList})
	for _, o := range objs {
		src.Add(o)
	}
	return src
}

// typedTestRun runs inf until the test ends and waits for it to stop.
func typedTestRun(t *testing.T, inf cache.SharedInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// typedTestWaitSynced waits until inf and the registrations have synced.
func typedTestWaitSynced(t *testing.T, inf cache.SharedInformer, regs ...cache.ResourceEventHandlerRegistration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), typedTestTimeout)
	defer cancel()
	checkers := []cache.DoneChecker{inf.HasSyncedChecker()}
	for _, r := range regs {
		checkers = append(checkers, r.HasSyncedChecker())
	}
	if !cache.WaitFor(ctx, "", checkers...) {
		t.Fatal("informer or handlers did not sync")
	}
}

// typedEvent is one call of a typedRecorder.
type typedEvent[T cache.Object] struct {
	kind     string // "add", "update" or "delete"
	obj, old T
	initial  bool
	deleted  cache.DeletedObject[T]
}

// String is "add ns/a initial", "update ns/a", "delete ns/a" or "delete ns/a (tombstone)",
// using the DeletedObject's own key for deletes.
func (e typedEvent[T]) String() string {
	switch e.kind {
	case "add":
		s := "add " + typedKey(e.obj)
		if e.initial {
			s += " initial"
		}
		return s
	case "update":
		return "update " + typedKey(e.obj)
	default:
		s := "delete " + e.deleted.GetKey()
		if e.deleted.FinalStateUnknown != nil {
			s += " (tombstone)"
		}
		return s
	}
}

func typedKey[T cache.Object](obj T) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// typedRecorder is a TypedResourceEventHandler that records every call.
type typedRecorder[T cache.Object] struct {
	events chan typedEvent[T]
}

func newTypedRecorder[T cache.Object]() *typedRecorder[T] {
	return &typedRecorder[T]{events: make(chan typedEvent[T], 1000)}
}

func (r *typedRecorder[T]) OnAdd(obj T, initial bool) {
	r.events <- typedEvent[T]{kind: "add", obj: obj, initial: initial}
}

func (r *typedRecorder[T]) OnUpdate(oldObj, newObj T) {
	r.events <- typedEvent[T]{kind: "update", old: oldObj, obj: newObj}
}

func (r *typedRecorder[T]) OnDelete(obj cache.DeletedObject[T]) {
	r.events <- typedEvent[T]{kind: "delete", deleted: obj}
}

func (r *typedRecorder[T]) next(t *testing.T) typedEvent[T] {
	t.Helper()
	select {
	case e := <-r.events:
		return e
	case <-time.After(typedTestTimeout):
		t.Fatal("no event within the timeout")
		return typedEvent[T]{}
	}
}

// nextStrings returns the next n events as strings, in arrival order.
func (r *typedRecorder[T]) nextStrings(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = r.next(t).String()
	}
	return out
}

// reportedError is one call of utilruntime's error handlers.
type reportedError struct {
	err error
	msg string
	kv  []interface{}
}

func (r reportedError) String() string {
	return fmt.Sprintf("%s: %v %v", r.msg, r.err, r.kv)
}

// typedTestCaptureErrors replaces utilruntime.ErrorHandlers for the rest of the test with one
// that records each error and, if logThrough is set, logs it through the logger in its
// context (for HandleErrorWithLogger, the logger it was given).
func typedTestCaptureErrors(t *testing.T, logThrough bool) <-chan reportedError {
	t.Helper()
	ch := make(chan reportedError, 1000)
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(ctx context.Context, err error, msg string, kv ...interface{}) {
			ch <- reportedError{err: err, msg: msg, kv: kv}
			if logThrough {
				klog.FromContext(ctx).Error(err, msg, kv...)
			}
		},
	}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	return ch
}

// nextError returns the next reported error that mentions a typed event handler, skipping
// unrelated ones (such as a reflector's).
func nextError(t *testing.T, errs <-chan reportedError) reportedError {
	t.Helper()
	timeout := time.After(typedTestTimeout)
	for {
		select {
		case e := <-errs:
			if strings.Contains(fmt.Sprint(e.err), "typed event handler") {
				return e
			}
		case <-timeout:
			t.Fatal("no error reported within the timeout")
			return reportedError{}
		}
	}
}

// lineWriter sends each write (one log line for textlogger) to a channel.
type lineWriter struct {
	mu    sync.Mutex
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines <- string(p)
	return len(p), nil
}

// typedTestLogger returns a logger whose output lines arrive on the returned channel.
func typedTestLogger() (klog.Logger, <-chan string) {
	w := &lineWriter{lines: make(chan string, 1000)}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(w))), w.lines
}
