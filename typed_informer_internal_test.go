package cache

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// typedAdapterRecorder records the OnDelete calls of a typed handler.
type typedAdapterRecorder struct {
	TypedResourceEventHandlerFuncs[*v1.Pod]
	deletes []DeletedObject[*v1.Pod]
}

func (r *typedAdapterRecorder) OnDelete(d DeletedObject[*v1.Pod]) { r.deletes = append(r.deletes, d) }

// TestTypedAdapterOnDelete drives the adapter directly with every shape OnDelete can receive,
// including a tombstone without an object, which an informer rarely produces.
func TestTypedAdapterOnDelete(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	cases := []struct {
		name      string
		obj       interface{}
		delivered bool   // whether OnDelete is called
		key       string // GetKey of what it got
		hasObj    bool
		tombstone bool
		wantErr   string // part of the reported error, "" for none
	}{
		{name: "object", obj: pod, delivered: true, key: "ns/a", hasObj: true},
		{name: "tombstone with object", obj: DeletedFinalStateUnknown{Key: "ns/a", Obj: pod}, delivered: true, key: "ns/a", hasObj: true, tombstone: true},
		{name: "tombstone without object", obj: DeletedFinalStateUnknown{Key: "ns/b"}, delivered: true, key: "ns/b", tombstone: true},
		{name: "tombstone with a foreign object", obj: DeletedFinalStateUnknown{Key: "ns/a", Obj: cm}, delivered: true, key: "ns/a", tombstone: true,
			wantErr: "expected an object of type *v1.Pod, got *v1.ConfigMap"},
		{name: "foreign object", obj: cm, wantErr: "expected an object of type *v1.Pod, got *v1.ConfigMap"},
		{name: "pointer to a tombstone", obj: &DeletedFinalStateUnknown{Key: "ns/a", Obj: pod}, wantErr: "got *cache.DeletedFinalStateUnknown"},
		{name: "nil", obj: nil, wantErr: "got <nil>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reported []string
			saved := utilruntime.ErrorHandlers
			utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, msg string, kv ...interface{}) {
				reported = append(reported, fmt.Sprint(err))
			}}
			defer func() { utilruntime.ErrorHandlers = saved }()

			rec := &typedAdapterRecorder{}
			(&typedResourceEventHandler[*v1.Pod]{handler: rec, logger: klog.Background()}).OnDelete(tc.obj)
			if got := len(rec.deletes) == 1; got != tc.delivered {
				t.Fatalf("delivered %d deletes, want delivered=%v", len(rec.deletes), tc.delivered)
			}
			if tc.delivered {
				d := rec.deletes[0]
				if d.GetKey() != tc.key || (d.OptionalObj != nil) != tc.hasObj || (d.FinalStateUnknown != nil) != tc.tombstone {
					t.Errorf("got key %q, object %v, tombstone %v", d.GetKey(), d.OptionalObj, d.FinalStateUnknown)
				}
			}
			switch {
			case tc.wantErr == "" && len(reported) != 0:
				t.Errorf("unexpected errors %v", reported)
			case tc.wantErr != "" && (len(reported) != 1 || !strings.Contains(reported[0], tc.wantErr)):
				t.Errorf("errors %v, want one containing %q", reported, tc.wantErr)
			}
		})
	}
}

// TestTypedAdapterString: messages that print the registered handler with %v name the user's
// handler.
func TestTypedAdapterString(t *testing.T) {
	h := &typedResourceEventHandler[*v1.Pod]{handler: &typedAdapterRecorder{}}
	if got, want := fmt.Sprintf("%v", h), "typed event handler github.com/kcache/cache.typedAdapterRecorder"; got != want {
		t.Fatalf("%%v = %q, want %q", got, want)
	}
}
