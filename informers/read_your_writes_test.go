package informers_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	fcache "github.com/kcache/cache/testing"
)

// rywEnv starts a factory with a ConfigMap informer over a fake source holding a and b.
func rywEnv(t *testing.T) (*fcache.FakeControllerSource, informers.TypedInformer[*v1.ConfigMap]) {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	for _, n := range []string{"a", "b"} {
		src.Add(rywCM(n, "0"))
	}
	factory := informers.NewSharedInformerFactory(0)
	cms := informers.For[*v1.ConfigMap](factory, fcache.NewClient[*v1.ConfigMapList](src).Namespace)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	return src, cms
}

func rywCM(name, value string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}, Data: map[string]string{"v": value}}
}

func TestReadYourWrites(t *testing.T) {
	t.Run("a read waits for the recorded write", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src, cms := rywEnv(t)
			ryw := informers.NewReadYourWrites(cms, informers.ReadYourWritesOptions{})
			// What a typed client's Update returns: the object at its new version.
			written := rywCM("a", "1")
			written.ResourceVersion = strconv.Itoa(src.ResourceVersion() + 1)
			if _, err := ryw.Record(written, nil); err != nil {
				t.Fatal(err)
			}
			got := make(chan *v1.ConfigMap, 1)
			go func() {
				cm, err := ryw.Get(t.Context(), "ns", "a")
				if err != nil {
					t.Error(err)
				}
				got <- cm
			}()
			synctest.Wait()
			if len(got) != 0 {
				t.Fatal("Get returned before the cache reflected the write")
			}
			src.Modify(rywCM("a", "1")) // the write reaches the watch
			synctest.Wait()
			if cm := <-got; cm == nil || cm.Data["v"] != "1" || cm.ResourceVersion != written.ResourceVersion {
				t.Fatalf("Get = %v, want a at %s", cm, written.ResourceVersion)
			}
			list, err := ryw.List(t.Context(), "ns", labels.Everything())
			if err != nil || len(list) != 2 {
				t.Fatalf("List = %d objects, %v", len(list), err)
			}
			if n := ryw.TimedOut(); n != 0 {
				t.Fatalf("TimedOut = %d", n)
			}
		})
	})
	t.Run("failed writes are not recorded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, cms := rywEnv(t)
			ryw := informers.NewReadYourWrites(cms, informers.ReadYourWritesOptions{ErrorOnTimeout: true})
			future := rywCM("a", "1")
			future.ResourceVersion = "999"
			boom := errors.New("conflict")
			if obj, err := ryw.Record(future, boom); obj != future || err != boom {
				t.Fatalf("Record changed the call's results: %v, %v", obj, err)
			}
			if _, err := ryw.Record(nil, nil); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := ryw.Get(t.Context(), "ns", "a"); err != nil || time.Since(start) != 0 {
				t.Fatalf("Get = %v after %v, want an immediate read", err, time.Since(start))
			}
		})
	})
	for _, errorOnTimeout := range []bool{false, true} {
		t.Run("a write the cache never sees: timeout, ErrorOnTimeout="+strconv.FormatBool(errorOnTimeout), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src, cms := rywEnv(t)
				ryw := informers.NewReadYourWrites(cms, informers.ReadYourWritesOptions{Timeout: time.Second, ErrorOnTimeout: errorOnTimeout})
				hidden := rywCM("a", "1")
				src.ModifyDropWatch(hidden) // sets hidden's resourceVersion, tells no watch
				ryw.Record(hidden, nil)
				start := time.Now()
				cm, err := ryw.Get(t.Context(), "ns", "a")
				if d := time.Since(start); d != time.Second {
					t.Fatalf("Get returned after %v, want the 1s timeout", d)
				}
				if errorOnTimeout {
					if !errors.Is(err, cache.ErrResourceVersionNotReached) {
						t.Fatalf("Get = %v, want ErrResourceVersionNotReached", err)
					}
				} else if err != nil || cm.Data["v"] != "0" {
					t.Fatalf("Get = %v, %v; want the cached, older object", cm, err)
				}
				if n := ryw.TimedOut(); n != 1 {
					t.Fatalf("TimedOut = %d, want 1", n)
				}
			})
		})
	}
	t.Run("a read after a delete waits until the cache drops the object", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src, cms := rywEnv(t)
			ryw := informers.NewReadYourWrites(cms, informers.ReadYourWritesOptions{})
			src.DeleteDropWatch(rywCM("a", ""))
			ryw.RecordDelete(rywCM("a", ""))
			done := make(chan error, 1)
			go func() {
				_, err := ryw.Get(t.Context(), "ns", "a")
				done <- err
			}()
			synctest.Wait()
			if len(done) != 0 {
				t.Fatal("Get returned while the cache still held the deleted object")
			}
			src.ResetWatch() // the informer re-watches and receives the delete
			synctest.Wait()
			if err := <-done; !apierrors.IsNotFound(err) {
				t.Fatalf("Get after the delete = %v, want NotFound", err)
			}
			if list, err := ryw.List(t.Context(), "", labels.Everything()); err != nil || len(list) != 1 {
				t.Fatalf("List = %d objects, %v; want b only", len(list), err)
			}
		})
	})
}
