package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	fcache "github.com/kcache/cache/testing"
)

// rvTestWait starts wait in a goroutine and returns the channel its result arrives on.
func rvTestWait(ctx context.Context, w ResourceVersionWaiter, rv string) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- w.WaitForResourceVersion(ctx, rv) }()
	return ch
}

// rvTestPending fails the test unless the wait behind ch is still blocked. It must run in a
// synctest bubble: synctest.Wait lets every goroutine that can run do so first.
func rvTestPending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-ch:
		t.Fatalf("%s: wait returned %v, want it still waiting", what, err)
	default:
	}
}

// rvTestDone fails the test unless the wait behind ch has returned an error matching want (nil
// for success).
func rvTestDone(t *testing.T, ch <-chan error, want error, what string) {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-ch:
		if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
			t.Fatalf("%s: wait returned %v, want %v", what, err, want)
		}
	default:
		t.Fatalf("%s: wait still blocked", what)
	}
}

// TestResourceVersionTracker drives the tracker by hand: which versions release which waits,
// and every way a wait ends.
func TestResourceVersionTracker(t *testing.T) {
	t.Run("released at the version or past it, not before", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var tr resourceVersionTracker
			w := trackerWaiter{&tr}
			at10, at12 := rvTestWait(t.Context(), w, "10"), rvTestWait(t.Context(), w, "12")
			rvTestPending(t, at10, "nothing processed")
			tr.advance("9")
			rvTestPending(t, at10, "older version")
			tr.advance("10")
			rvTestDone(t, at10, nil, "own version")
			rvTestPending(t, at12, "wait for 12 after 10")
			tr.advance("100")
			rvTestDone(t, at12, nil, "newer version")
			if got := tr.lastProcessed(); got != "100" {
				t.Fatalf("lastProcessed = %q, want 100", got)
			}
			tr.advance("99") // older versions never move it back
			if got := tr.lastProcessed(); got != "100" {
				t.Fatalf("lastProcessed after an older version = %q, want 100", got)
			}
		})
	})
	t.Run("already processed returns at once, even with ctx done", func(t *testing.T) {
		var tr resourceVersionTracker
		tr.advance("50")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, rv := range []string{"1", "49", "50"} {
			if err := tr.wait(ctx, rv); err != nil {
				t.Fatalf("wait(%s) after 50 = %v, want nil", rv, err)
			}
		}
	})
	t.Run("context ends first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var tr resourceVersionTracker
			tr.advance("5")
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			start := time.Now()
			err := tr.wait(ctx, "6")
			if !errors.Is(err, ErrResourceVersionNotReached) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("wait = %v, want ErrResourceVersionNotReached and DeadlineExceeded", err)
			}
			if d := time.Since(start); d != 2*time.Second {
				t.Fatalf("wait returned after %v, want the 2s deadline", d)
			}
			if n := tr.waiters.Len(); n != 0 {
				t.Fatalf("%d waiters left behind after the timeout", n)
			}
			cctx, ccancel := context.WithCancelCause(t.Context())
			cause := errors.New("reconcile aborted")
			ccancel(cause)
			if err := tr.wait(cctx, "6"); !errors.Is(err, ErrResourceVersionNotReached) || !errors.Is(err, cause) {
				t.Fatalf("wait with a cancelled context = %v, want ErrResourceVersionNotReached and the cause", err)
			}
		})
	})
	t.Run("stop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var tr resourceVersionTracker
			tr.advance("5")
			pending := rvTestWait(t.Context(), trackerWaiter{&tr}, "7")
			rvTestPending(t, pending, "before stop")
			tr.stop()
			rvTestDone(t, pending, ErrInformerStopped, "pending at stop")
			if err := tr.wait(t.Context(), "8"); !errors.Is(err, ErrInformerStopped) {
				t.Fatalf("wait after stop = %v, want ErrInformerStopped", err)
			}
			if err := tr.wait(t.Context(), "5"); err != nil {
				t.Fatalf("wait after stop for a processed version = %v, want nil", err)
			}
		})
	})
	t.Run("not comparable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var tr resourceVersionTracker
			for _, rv := range []string{"", "0", "007", "abc"} {
				if err := tr.wait(t.Context(), rv); !errors.Is(err, ErrResourceVersionNotComparable) {
					t.Fatalf("wait(%q) = %v, want ErrResourceVersionNotComparable", rv, err)
				}
			}
			pending := rvTestWait(t.Context(), trackerWaiter{&tr}, "3")
			rvTestPending(t, pending, "nothing processed")
			tr.advance("opaque-1") // a server with opaque versions
			rvTestDone(t, pending, ErrResourceVersionNotComparable, "informer processed an opaque version")
			if err := tr.wait(t.Context(), "3"); !errors.Is(err, ErrResourceVersionNotComparable) {
				t.Fatalf("wait on an informer with opaque versions = %v, want ErrResourceVersionNotComparable", err)
			}
			if got := tr.lastProcessed(); got != "opaque-1" {
				t.Fatalf("lastProcessed = %q, want opaque-1", got)
			}
		})
	})
	t.Run("many concurrent waiters", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var tr resourceVersionTracker
			rng := rand.New(rand.NewSource(1))
			const n = 1000
			targets := make([]int, n)
			results := make([]<-chan error, n)
			for i := range targets {
				targets[i] = 1 + rng.Intn(500)
				results[i] = rvTestWait(t.Context(), trackerWaiter{&tr}, strconv.Itoa(targets[i]))
			}
			synctest.Wait()
			released := make([]bool, n)
			for v := 0; v <= 520; v += 1 + rng.Intn(20) {
				if v > 0 {
					tr.advance(strconv.Itoa(v))
				}
				synctest.Wait()
				for i, ch := range results {
					if released[i] {
						continue
					}
					select {
					case err := <-ch:
						if err != nil || targets[i] > v {
							t.Fatalf("wait for %d returned %v at %d", targets[i], err, v)
						}
						released[i] = true
					default:
						if targets[i] <= v {
							t.Fatalf("wait for %d still blocked at %d", targets[i], v)
						}
					}
				}
			}
			for i, r := range released {
				if !r {
					t.Fatalf("wait for %d never released", targets[i])
				}
			}
		})
	})
}

// trackerWaiter exposes a tracker as a ResourceVersionWaiter for the test helpers.
type trackerWaiter struct{ t *resourceVersionTracker }

func (w trackerWaiter) LastProcessedResourceVersion() string { return w.t.lastProcessed() }
func (w trackerWaiter) WaitForResourceVersion(ctx context.Context, rv string) error {
	return w.t.wait(ctx, rv)
}

// rvTestInformer returns a running, synced informer over src (pods in namespace ns).
func rvTestInformer(t *testing.T, src *fcache.FakeControllerSource) (*sharedIndexInformer, func()) {
	inf := infTestNewInformer(src, 0)
	stop := infTestRun(t, inf)
	infTestWaitSynced(t, inf)
	return inf, stop
}

func rvTestCurrent(src *fcache.FakeControllerSource) string {
	return strconv.Itoa(src.ResourceVersion())
}

// TestInformerWaitForResourceVersion runs the waits against an informer on the fake API source.
func TestInformerWaitForResourceVersion(t *testing.T) {
	t.Run("a write's version is waited for", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := infTestSource("a")
			inf, _ := rvTestInformer(t, src)
			next := strconv.Itoa(src.ResourceVersion() + 1)
			pending := rvTestWait(t.Context(), inf, next)
			rvTestPending(t, pending, "before the write")
			src.Modify(infTestPod("ns", "a", ""))
			if got := rvTestCurrent(src); got != next {
				t.Fatalf("source at %s, want %s", got, next)
			}
			rvTestDone(t, pending, nil, "after the write")
			obj, exists, err := inf.GetIndexer().GetByKey("ns/a")
			if err != nil || !exists || obj.(*v1.Pod).ResourceVersion != next {
				t.Fatalf("store after the wait holds %v, %v, %v; want ns/a at %s", obj, exists, err, next)
			}
			if got := inf.LastProcessedResourceVersion(); got != next {
				t.Fatalf("LastProcessedResourceVersion = %q, want %s", got, next)
			}
			// Processed: returns at once, even with a context that has ended.
			done, cancel := context.WithCancel(t.Context())
			cancel()
			if err := WaitForResourceVersion(done, inf, next); err != nil {
				t.Fatalf("second wait = %v, want nil", err)
			}
		})
	})
	t.Run("deletes and bookmarks count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := infTestSource("a", "b")
			inf, _ := rvTestInformer(t, src)
			src.Delete(infTestPod("ns", "a", ""))
			if err := inf.WaitForResourceVersion(t.Context(), rvTestCurrent(src)); err != nil {
				t.Fatal(err)
			}
			if _, exists, _ := inf.GetIndexer().GetByKey("ns/a"); exists {
				t.Fatal("ns/a still stored after waiting for its delete")
			}
			// A write the informer never sees (another resource, or outside its selector).
			src.ModifyDropWatch(infTestPod("ns", "b", ""))
			hidden := rvTestCurrent(src)
			pending := rvTestWait(t.Context(), inf, hidden)
			rvTestPending(t, pending, "hidden write")
			src.Bookmark()
			rvTestDone(t, pending, nil, "bookmark past the hidden write")
			if got := inf.LastProcessedResourceVersion(); got != hidden {
				t.Fatalf("LastProcessedResourceVersion after the bookmark = %q, want %s", got, hidden)
			}
		})
	})
	t.Run("a version never seen is released by any later event", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := infTestSource("a")
			inf, _ := rvTestInformer(t, src)
			src.AddDropWatch(infTestPod("ns", "hidden", ""))
			pending := rvTestWait(t.Context(), inf, rvTestCurrent(src))
			rvTestPending(t, pending, "hidden write")
			src.Add(infTestPod("ns", "c", ""))
			rvTestDone(t, pending, nil, "a later event")
		})
	})
	t.Run("a version never seen times out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := infTestSource("a")
			inf, _ := rvTestInformer(t, src)
			src.ModifyDropWatch(infTestPod("ns", "a", ""))
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			err := inf.WaitForResourceVersion(ctx, rvTestCurrent(src))
			if !errors.Is(err, ErrResourceVersionNotReached) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("wait = %v, want ErrResourceVersionNotReached and DeadlineExceeded", err)
			}
			_, _, err = GetByKeyAtLeast(ctx, inf, "ns/a", rvTestCurrent(src))
			if !errors.Is(err, ErrResourceVersionNotReached) {
				t.Fatalf("GetByKeyAtLeast = %v, want ErrResourceVersionNotReached", err)
			}
		})
	})
	t.Run("a write outside the label selector", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
			selected := func(options metav1.ListOptions) metav1.ListOptions {
				options.LabelSelector = "app=mine"
				return options
			}
			lw := &ListWatch{
				ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
					return src.ListWithContext(ctx, selected(options))
				},
				WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
					return src.WatchWithContext(ctx, selected(options))
				},
			}
			mine := func(name, app string) *v1.Pod {
				p := infTestPod("ns", name, "")
				p.Labels = map[string]string{"app": app}
				return p
			}
			src.Add(mine("a", "mine"))
			inf := newSharedIndexInformer(lw, &v1.Pod{}, SharedIndexInformerOptions{}, clock.RealClock{})
			infTestRun(t, inf)
			infTestWaitSynced(t, inf)
			src.Add(mine("theirs", "other"))
			pending := rvTestWait(t.Context(), inf, rvTestCurrent(src))
			rvTestPending(t, pending, "write outside the selector")
			src.Modify(mine("a", "mine"))
			rvTestDone(t, pending, nil, "next selected event")
		})
	})
	t.Run("not synced yet: the initial list decides", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := infTestSource("a", "b")
			inf := infTestNewInformer(src, 0)
			pending := rvTestWait(t.Context(), inf, rvTestCurrent(src))
			rvTestPending(t, pending, "informer not started")
			if got := inf.LastProcessedResourceVersion(); got != "" {
				t.Fatalf("LastProcessedResourceVersion before the start = %q, want \"\"", got)
			}
			infTestRun(t, inf)
			rvTestDone(t, pending, nil, "after the initial list")
			if !inf.HasSynced() {
				t.Fatal("wait returned before the informer synced")
			}
		})
	})
	t.Run("stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := infTestSource("a")
			inf, stop := rvTestInformer(t, src)
			processed := rvTestCurrent(src)
			pending := rvTestWait(t.Context(), inf, strconv.Itoa(src.ResourceVersion()+1))
			rvTestPending(t, pending, "running")
			stop()
			rvTestDone(t, pending, ErrInformerStopped, "informer stopped")
			if err := inf.WaitForResourceVersion(t.Context(), "999"); !errors.Is(err, ErrInformerStopped) {
				t.Fatalf("wait on a stopped informer = %v, want ErrInformerStopped", err)
			}
			if err := inf.WaitForResourceVersion(t.Context(), processed); err != nil {
				t.Fatalf("wait on a stopped informer for a processed version = %v, want nil", err)
			}
		})
	})
}

// TestGetByKeyAtLeast reads one key at a version, untyped and typed.
func TestGetByKeyAtLeast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a", "b")
		inf, _ := rvTestInformer(t, src)
		typed := NewTypedSharedIndexInformer[*v1.Pod](inf)

		// The stored object is already at the version: no wait, even with an ended context.
		atNow := rvTestCurrent(src)
		ended, cancel := context.WithCancel(t.Context())
		cancel()
		if _, exists, err := GetByKeyAtLeast(ended, inf, "ns/b", atNow); err != nil || !exists {
			t.Fatalf("GetByKeyAtLeast(ns/b, %s) = %v, %v; want it at once", atNow, exists, err)
		}

		// A version not processed yet: the read waits for it and returns that state.
		next := strconv.Itoa(src.ResourceVersion() + 1)
		got := make(chan *v1.Pod, 1)
		go func() {
			p, _, err := TypedGetByKeyAtLeast(t.Context(), typed, "ns/a", next)
			if err != nil {
				t.Error(err)
			}
			got <- p
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("read returned before the write was processed")
		}
		p := infTestPod("ns", "a", "")
		p.Labels = map[string]string{"v": "2"}
		src.Modify(p)
		synctest.Wait()
		if p := <-got; p == nil || p.ResourceVersion != next || p.Labels["v"] != "2" {
			t.Fatalf("typed read = %v, want ns/a at %s", p, next)
		}
		typedWaiter := typed.(ResourceVersionWaiter)
		if err := typedWaiter.WaitForResourceVersion(t.Context(), next); err != nil {
			t.Fatal(err)
		}
		if got := typedWaiter.LastProcessedResourceVersion(); got != next {
			t.Fatalf("typed LastProcessedResourceVersion = %q, want %s", got, next)
		}

		// A deleted object reads as missing once its delete is processed.
		src.Delete(infTestPod("ns", "b", ""))
		if obj, exists, err := GetByKeyAtLeast(t.Context(), inf, "ns/b", rvTestCurrent(src)); err != nil || exists {
			t.Fatalf("GetByKeyAtLeast of a deleted key = %v, %v, %v; want not found", obj, exists, err)
		}

		// Wrong stored type, and informers of other implementations.
		wrong := NewTypedSharedIndexInformer[*v1.ConfigMap](inf)
		if _, _, err := TypedGetByKeyAtLeast(t.Context(), wrong, "ns/a", next); err == nil {
			t.Fatal("typed read of a *v1.Pod as a *v1.ConfigMap succeeded")
		}
		other := foreignInformer{inf}
		if err := WaitForResourceVersion(t.Context(), other, next); !errors.Is(err, ErrResourceVersionWaitUnsupported) {
			t.Fatalf("WaitForResourceVersion on a foreign informer = %v", err)
		}
		if _, _, err := GetByKeyAtLeast(t.Context(), other, "ns/a", next); !errors.Is(err, ErrResourceVersionWaitUnsupported) {
			t.Fatalf("GetByKeyAtLeast on a foreign informer = %v", err)
		}
		otherTyped := NewTypedSharedIndexInformer[*v1.Pod](other).(ResourceVersionWaiter)
		if err := otherTyped.WaitForResourceVersion(t.Context(), next); !errors.Is(err, ErrResourceVersionWaitUnsupported) {
			t.Fatalf("typed view of a foreign informer: %v", err)
		}
		if got := otherTyped.LastProcessedResourceVersion(); got != "" {
			t.Fatalf("typed view of a foreign informer: LastProcessedResourceVersion = %q", got)
		}
	})
}

// foreignInformer hides the ResourceVersionWaiter methods of the informer it wraps, like an
// implementation from another package.
type foreignInformer struct{ SharedIndexInformer }

// Example-style check that the error of a wait reads well.
func TestWaitErrorMessages(t *testing.T) {
	var tr resourceVersionTracker
	tr.advance("5")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := fmt.Sprint(tr.wait(ctx, "7"))
	want := `cache: resource version not processed yet: waiting for "7", last processed "5": context canceled`
	if got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
	tr.stop()
	got = fmt.Sprint(tr.wait(context.Background(), "7"))
	want = `cache: informer stopped (last processed resource version "5")`
	if got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
}

// TestWaitForDeletion waits for deletions an informer has or has not seen yet.
func TestWaitForDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := infTestSource("a", "b", "c")
		old := infTestPod("ns", "c", "")
		old.UID = "old"
		src.Modify(old)
		inf, _ := rvTestInformer(t, src)
		indexer := inf.GetIndexer()
		if err := inf.WaitForResourceVersion(t.Context(), rvTestCurrent(src)); err != nil {
			t.Fatal(err)
		}
		// Gone already: absent, another object under the name, marked for deletion.
		marked := infTestPod("ns", "b", "")
		marked.DeletionTimestamp = &metav1.Time{}
		src.Modify(marked)
		if err := inf.WaitForResourceVersion(t.Context(), rvTestCurrent(src)); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			key string
			uid types.UID
		}{{"ns/absent", ""}, {"ns/c", "new"}, {"ns/b", ""}} {
			if waited, err := WaitForDeletion(t.Context(), inf, indexer, tc.key, tc.uid); waited || err != nil {
				t.Errorf("WaitForDeletion(%s, %q) = %v, %v; want false, nil", tc.key, tc.uid, waited, err)
			}
		}
		// Still cached: the wait ends when the informer processes the deletion.
		type result struct {
			waited bool
			err    error
		}
		done := make(chan result, 1)
		go func() {
			waited, err := WaitForDeletion(t.Context(), inf, indexer, "ns/a", "")
			done <- result{waited, err}
		}()
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("WaitForDeletion returned %+v before the deletion", r)
		default:
		}
		src.Delete(infTestPod("ns", "a", ""))
		if r := <-done; !r.waited || r.err != nil {
			t.Fatalf("WaitForDeletion after the deletion = %+v, want waited, nil", r)
		}
		// A deletion the informer never sees: the context bounds the wait.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		waited, err := WaitForDeletion(ctx, inf, indexer, "ns/c", "old")
		if !waited || !errors.Is(err, ErrResourceVersionNotReached) {
			t.Fatalf("WaitForDeletion of an object never deleted = %v, %v; want true, ErrResourceVersionNotReached", waited, err)
		}
	})
}

func TestNextResourceVersion(t *testing.T) {
	for rv, want := range map[string]string{"": "1", "0": "0", "41": "42", "199": "200", "999": "1000", "x": "x"} {
		if got := nextResourceVersion(rv); got != want {
			t.Errorf("nextResourceVersion(%q) = %q, want %q", rv, got, want)
		}
	}
}
