package clientgo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache/clientgo"
	fcache "github.com/kcache/cache/testing"
)

// event is one call a recorder received.
type event struct {
	kind    string // "add", "update", "delete"
	obj     interface{}
	old     interface{} // update only
	initial bool        // add only
}

func (e event) String() string {
	return fmt.Sprintf("%s %s initial=%v", e.kind, describe(e.obj), e.initial)
}

// describe names an object or tombstone for test messages.
func describe(obj interface{}) string {
	switch o := obj.(type) {
	case *v1.ConfigMap:
		return "cm " + o.Namespace + "/" + o.Name
	case toolscache.DeletedFinalStateUnknown:
		return "client-go tombstone " + o.Key
	default:
		return fmt.Sprintf("%T", obj)
	}
}

// recorder is a client-go handler that sends every call to events.
type recorder struct {
	events chan event
}

func newRecorder() *recorder { return &recorder{events: make(chan event, 1000)} }

func (r *recorder) OnAdd(obj interface{}, isInInitialList bool) {
	r.events <- event{kind: "add", obj: obj, initial: isInInitialList}
}

func (r *recorder) OnUpdate(oldObj, newObj interface{}) {
	r.events <- event{kind: "update", obj: newObj, old: oldObj}
}

func (r *recorder) OnDelete(obj interface{}) {
	r.events <- event{kind: "delete", obj: obj}
}

// next returns the recorder's next event, failing the test after a generous timeout (a
// deadline for a hung test, not a wait for something to happen).
func (r *recorder) next(t *testing.T) event {
	t.Helper()
	select {
	case e := <-r.events:
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
		return event{}
	}
}

// none fails the test if the recorder has an event waiting.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case e := <-r.events:
		t.Fatalf("unexpected event %v", e)
	default:
	}
}

func cm(name string, data string) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": name}},
		Data:       map[string]string{"k": data},
	}
}

func newSource() *fcache.FakeControllerSource {
	return fcache.New(fcache.Options{
		NewFunc:     func() runtime.Object { return &v1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} },
	})
}

// run starts informer and returns a function that stops it and waits until it has returned.
func run(t *testing.T, informer toolscache.SharedIndexInformer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitSynced waits for the informer's HasSyncedChecker, failing after a generous timeout.
func waitSynced(t *testing.T, c toolscache.DoneChecker) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not synced within 30s", c.Name())
	}
}

// newInformer returns a bridge informer over src with no resync and a label index.
func newInformer(src *fcache.FakeControllerSource, opts clientgo.Options) toolscache.SharedIndexInformer {
	return clientgo.New(src, &v1.ConfigMap{}, toolscache.SharedIndexInformerOptions{
		Indexers: toolscache.Indexers{"app": appIndex},
	}, opts)
}

func appIndex(obj interface{}) ([]string, error) {
	return []string{obj.(*v1.ConfigMap).Labels["app"]}, nil
}
