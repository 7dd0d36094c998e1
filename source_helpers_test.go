package cache

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	fcache "github.com/kcache/cache/testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kcache/cache/internal/features"
)

// reflTestPod returns a pod in namespace "ns".
func reflTestPod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID("uid-ns-" + name)}}
}

// reflTestPodList returns a PodList at rv holding pods.
func reflTestPodList(rv string, pods ...*v1.Pod) *v1.PodList {
	l := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// reflTestBookmark returns a bookmark event object at rv; initialEnd marks the end of a
// watch-list's initial events.
func reflTestBookmark(rv string, initialEnd bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if initialEnd {
		p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return p
}

// reflTestStore is a ReflectorStore that records what the reflector does to it.
type reflTestStore struct {
	mu        sync.Mutex // mu guards the fields below
	objs      map[string]interface{}
	ops       []string
	replaceRV string
	resyncErr error
	addErr    error
}

func newReflTestStore() *reflTestStore {
	return &reflTestStore{objs: map[string]interface{}{}}
}

func (s *reflTestStore) record(op string, obj interface{}) string {
	key, err := MetaNamespaceKeyFunc(obj)
	if err != nil {
		key = "<" + err.Error() + ">"
	}
	s.ops = append(s.ops, op+" "+key)
	return key
}

func (s *reflTestStore) Add(obj interface{}) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addErr != nil {
		return s.addErr
	}
	s.objs[s.record("add", obj)] = obj
	return nil
}

func (s *reflTestStore) Update(obj interface{}) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[s.record("update", obj)] = obj
	return nil
}

func (s *reflTestStore) Delete(obj interface{}) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, s.record("delete", obj))
	return nil
}

func (s *reflTestStore) Replace(list []interface{}, rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = map[string]interface{}{}
	for _, obj := range list {
		key, _ := MetaNamespaceKeyFunc(obj)
		s.objs[key] = obj
	}
	s.replaceRV = rv
	s.ops = append(s.ops, fmt.Sprintf("replace %d@%s", len(list), rv))
	return nil
}

func (s *reflTestStore) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, "resync")
	return s.resyncErr
}

// keys returns the sorted keys of the stored objects.
func (s *reflTestStore) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.objs))
	for k := range s.objs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// takeOps returns the recorded operations and forgets them.
func (s *reflTestStore) takeOps() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ops := s.ops
	s.ops = nil
	return ops
}

// reflTestBookmarkStore also hears bookmarks and resource-version updates.
type reflTestBookmarkStore struct {
	*reflTestStore
}

func (s reflTestBookmarkStore) Bookmark(rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, "bookmark "+rv)
	return nil
}

func (s reflTestBookmarkStore) UpdateResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, "rv "+rv)
}

// reflTestListResult is one scripted answer of reflTestSource.List.
type reflTestListResult struct {
	obj runtime.Object
	err error
}

// reflTestSource is a scripted ListerWatcher: each List and Watch call takes the next scripted
// answer, or a default one (an empty pod list at listRV; a new FakeWatcher).
type reflTestSource struct {
	mu         sync.Mutex // mu guards the fields below
	listRV     string
	lists      []reflTestListResult
	watchErrs  []error
	listCalls  []metav1.ListOptions
	watchCalls []metav1.ListOptions
	watchers   []*watch.FakeWatcher
	// panicOnList makes List panic with this value.
	panicOnList interface{}
}

func newReflTestSource(listRV string) *reflTestSource {
	return &reflTestSource{listRV: listRV}
}

func (s *reflTestSource) list(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	s.listCalls = append(s.listCalls, opts)
	if s.panicOnList != nil {
		p := s.panicOnList
		s.mu.Unlock()
		panic(p)
	}
	defer s.mu.Unlock()
	if len(s.lists) > 0 {
		res := s.lists[0]
		s.lists = s.lists[1:]
		return res.obj, res.err
	}
	return reflTestPodList(s.listRV), nil
}

func (s *reflTestSource) watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchCalls = append(s.watchCalls, opts)
	if len(s.watchErrs) > 0 {
		err := s.watchErrs[0]
		s.watchErrs = s.watchErrs[1:]
		return nil, err
	}
	w := watch.NewFake()
	s.watchers = append(s.watchers, w)
	return w, nil
}

// lw returns the source as a ListWatch.
func (s *reflTestSource) lw() *ListWatch {
	return &ListWatch{ListWithContextFunc: s.list, WatchFuncWithContext: s.watch}
}

func (s *reflTestSource) listOptions() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.listCalls...)
}

func (s *reflTestSource) watchOptions() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.watchCalls...)
}

// watcher returns the i-th watcher handed out (negative counts from the end).
func (s *reflTestSource) watcher(t *testing.T, i int) *watch.FakeWatcher {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 {
		i += len(s.watchers)
	}
	if i < 0 || i >= len(s.watchers) {
		t.Fatalf("watcher %d requested, %d handed out", i, len(s.watchers))
	}
	return s.watchers[i]
}

// reflTestRun starts fn on its own goroutine and returns a function that cancels ctx and waits
// for fn to return.
func reflTestRun(t *testing.T, fn func(ctx context.Context)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// reflTestNoErrorBackoff drops apimachinery's error-rate limiter (a 1ms time.Sleep after every
// HandleError) until the end of the test: inside a synctest bubble that sleep, measured
// against an error time recorded outside the bubble, would last for years of bubble time.
// Errors are still logged.
func reflTestNoErrorBackoff(t *testing.T) {
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(ctx context.Context, err error, msg string, kv ...interface{}) {
			klog.FromContext(ctx).Error(err, msg, kv...)
		},
	}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
}

// reflTestNew returns a reflector over src into store with a fake clock, the watch-list gate
// off unless the test turns it on.
func reflTestNew(t *testing.T, src *reflTestSource, store ReflectorStore) (*Reflector, *clocktesting.FakeClock) {
	t.Helper()
	features.SetForTesting(t, features.WatchListClient, false)
	reflTestNoErrorBackoff(t)
	c := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r := NewReflectorWithOptions(src.lw(), &v1.Pod{}, store, ReflectorOptions{Name: "refl-test", Clock: c})
	return r, c
}

// reflTestStepUntil steps the fake clock by d once something waits on it, then lets the
// bubble settle. It must run inside a synctest bubble.
func reflTestStep(c *clocktesting.FakeClock, d time.Duration) {
	synctest.Wait()
	c.Step(d)
	synctest.Wait()
}

// reflTestGone returns a 410 Gone error, what servers before 1.18 sent for an expired
// resource version (apierrors.NewGone is deprecated).
func reflTestGone() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonGone, Message: "gone"}}
}

// reflTestJoin formats ops for comparisons.
func reflTestJoin(ops []string) string { return strings.Join(ops, "; ") }

// infTestSource returns a fake source holding the given pods (namespace "ns").
func infTestSource(names ...string) *fcache.FakeControllerSource {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	for _, n := range names {
		src.Add(infTestPod("ns", n, ""))
	}
	return src
}

func infTestPod(ns, name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}
