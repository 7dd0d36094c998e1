package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// reflTestEnableConsistencyCheck turns the watch-list consistency detector on for the test.
func reflTestEnableConsistencyCheck(t *testing.T) {
	saved := watchListConsistencyCheckEnabled
	watchListConsistencyCheckEnabled = true
	t.Cleanup(func() { watchListConsistencyCheckEnabled = saved })
}

func TestWatchListConsistencyCheck(t *testing.T) {
	streamed := []interface{}{reflTestPod("b", "2"), reflTestPod("a", "1")}
	cases := []struct {
		name      string
		rv        string
		lists     []reflTestListResult
		transform TransformFunc
		wantPanic string // substring; "" means no panic
		wantLists int
	}{
		{name: "same objects in another order", rv: "5",
			lists: []reflTestListResult{{obj: reflTestPodList("5", reflTestPod("a", "1"), reflTestPod("b", "2"))}}, wantLists: 1},
		{name: "an object missing from the stream", rv: "5",
			lists:     []reflTestListResult{{obj: reflTestPodList("5", reflTestPod("a", "1"), reflTestPod("b", "2"), reflTestPod("c", "3"))}},
			wantPanic: "data inconsistency detected for consistency", wantLists: 1},
		{name: "a different version", rv: "5",
			lists:     []reflTestListResult{{obj: reflTestPodList("5", reflTestPod("a", "1"), reflTestPod("b", "9"))}},
			wantPanic: "data inconsistency detected", wantLists: 1},
		{name: "failed lists are retried every second", rv: "5",
			lists: []reflTestListResult{{err: errors.New("down")}, {err: errors.New("down")}, {obj: reflTestPodList("5", reflTestPod("a", "1"), reflTestPod("b", "2"))}}, wantLists: 3},
		{name: "listed objects are transformed like the streamed ones", rv: "5",
			lists: []reflTestListResult{{obj: reflTestPodList("5", reflTestPod("a", "x"), reflTestPod("b", "x"))}},
			transform: func(obj interface{}) (interface{}, error) {
				p := obj.(runtime.Object).DeepCopyObject()
				m, _ := p.(metav1.Object)
				m.SetResourceVersion(map[string]string{"a": "1", "b": "2"}[m.GetName()])
				return p, nil
			}, wantLists: 1},
		{name: "a failing transform panics", rv: "5",
			lists:     []reflTestListResult{{obj: reflTestPodList("5", reflTestPod("a", "1"))}},
			transform: func(interface{}) (interface{}, error) { return nil, errors.New("bad transform") },
			wantPanic: "bad transform", wantLists: 1},
		{name: "RV 0 cannot be listed exactly: skipped", rv: "0", wantLists: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reflTestEnableConsistencyCheck(t)
				src := newReflTestSource("5")
				src.lists = tc.lists
				r, c := reflTestNew(t, src, newReflTestStore())
				r.name = "consistency"
				panicked := make(chan interface{}, 1)
				go func() {
					defer func() { panicked <- recover() }()
					r.checkWatchListConsistencyIfRequested(context.Background(), tc.rv, tc.transform, streamed)
				}()
				for range 5 {
					reflTestStep(c, time.Second)
				}
				got := <-panicked
				if tc.wantPanic == "" && got != nil || tc.wantPanic != "" && (got == nil || !strings.Contains(fmt.Sprint(got), tc.wantPanic)) {
					t.Fatalf("panic %v, want %q", got, tc.wantPanic)
				}
				opts := src.listOptions()
				if len(opts) != tc.wantLists {
					t.Fatalf("%d lists, want %d", len(opts), tc.wantLists)
				}
				for _, o := range opts {
					if o.ResourceVersion != tc.rv || o.ResourceVersionMatch != metav1.ResourceVersionMatchExact {
						t.Fatalf("list options %+v, want an exact list at %s", o, tc.rv)
					}
				}
			})
		})
	}
}

func TestWatchListConsistencyCheckStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reflTestEnableConsistencyCheck(t)
		src := newReflTestSource("5")
		src.lists = []reflTestListResult{{err: errors.New("down")}}
		r, _ := reflTestNew(t, src, newReflTestStore())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.checkWatchListConsistencyIfRequested(ctx, "5", nil, nil)
		}()
		synctest.Wait()
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatalf("the check kept retrying after cancel")
		}
	})
}

func TestWatchListConsistencyCheckOffByDefault(t *testing.T) {
	src := newReflTestSource("5")
	r, _ := reflTestNew(t, src, newReflTestStore())
	saved := watchListConsistencyCheckEnabled
	watchListConsistencyCheckEnabled = false
	defer func() { watchListConsistencyCheckEnabled = saved }()
	r.checkWatchListConsistencyIfRequested(context.Background(), "5", nil, []interface{}{reflTestPod("a", "1")})
	if n := len(src.listOptions()); n != 0 {
		t.Fatalf("%d lists with the detector off, want 0", n)
	}
}
