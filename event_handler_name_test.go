package cache

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type infTestNamedHandler struct{ ResourceEventHandlerFuncs }

type infTestFuncsOwner struct{}

func (infTestFuncsOwner) add(interface{})                 {}
func (infTestFuncsOwner) update(interface{}, interface{}) {}

func infTestAddFunc(interface{})    {}
func infTestDeleteFunc(interface{}) {}

func TestNameForHandler(t *testing.T) {
	const pkg = "github.com/kcache/cache"
	owner := infTestFuncsOwner{}
	cases := []struct {
		name    string
		handler ResourceEventHandler
		want    string
	}{
		{"named type", infTestNamedHandler{}, pkg + ".infTestNamedHandler"},
		{"pointer to named type", &infTestNamedHandler{}, pkg + ".infTestNamedHandler"},
		{"nil pointer to named type", (*infTestNamedHandler)(nil), pkg + ".infTestNamedHandler"},
		{"funcs of one receiver", ResourceEventHandlerFuncs{AddFunc: owner.add, UpdateFunc: owner.update}, pkg + ".infTestFuncsOwner"},
		{"pointer to funcs", &ResourceEventHandlerFuncs{AddFunc: owner.add}, pkg + ".infTestFuncsOwner"},
		{"funcs of one package", ResourceEventHandlerFuncs{AddFunc: infTestAddFunc, DeleteFunc: infTestDeleteFunc}, pkg},
		{"funcs from different places", ResourceEventHandlerFuncs{AddFunc: owner.add, DeleteFunc: infTestDeleteFunc},
			pkg + ".infTestFuncsOwner.add-fm+" + pkg + ".infTestDeleteFunc"},
		{"detailed funcs", ResourceEventHandlerDetailedFuncs{DeleteFunc: infTestDeleteFunc}, pkg},
		{"no funcs", ResourceEventHandlerFuncs{}, "cache.ResourceEventHandlerFuncs"},
		{"nil funcs pointer", (*ResourceEventHandlerFuncs)(nil), "*cache.ResourceEventHandlerFuncs"},
		{"nil handler", nil, "<nil>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nameForHandler(tc.handler); got != tc.want {
				t.Fatalf("nameForHandler = %q, want %q", got, tc.want)
			}
		})
	}
	// A closure is named after the function that made it.
	closure := ResourceEventHandlerFuncs{AddFunc: func(interface{}) {}}
	if got := nameForHandler(closure); !strings.HasPrefix(got, pkg+".TestNameForHandler") {
		t.Fatalf("closure handler named %q", got)
	}
}

type infTestTypedHandler struct {
	TypedResourceEventHandlerFuncs[*metav1.ObjectMeta]
}

func (infTestFuncsOwner) typedAdd(*metav1.ObjectMeta)                   {}
func (infTestFuncsOwner) typedDelete(DeletedObject[*metav1.ObjectMeta]) {}
func infTestTypedUpdate(_, _ *metav1.ObjectMeta)                        {}

// TestNameForTypedHandler: a typed handler registered through the adapter is named after the
// user's handler, by the rules for untyped handlers.
func TestNameForTypedHandler(t *testing.T) {
	const pkg = "github.com/kcache/cache"
	owner := infTestFuncsOwner{}
	funcs := TypedResourceEventHandlerFuncs[*metav1.ObjectMeta]{AddFunc: owner.typedAdd, DeleteFunc: owner.typedDelete}
	cases := []struct {
		name    string
		handler TypedResourceEventHandler[*metav1.ObjectMeta]
		want    string
	}{
		{"named type", infTestTypedHandler{}, pkg + ".infTestTypedHandler"},
		{"pointer to named type", &infTestTypedHandler{}, pkg + ".infTestTypedHandler"},
		{"funcs of one receiver", funcs, pkg + ".infTestFuncsOwner"},
		{"pointer to funcs", &funcs, pkg + ".infTestFuncsOwner"},
		{"detailed funcs", TypedResourceEventHandlerDetailedFuncs[*metav1.ObjectMeta]{UpdateFunc: infTestTypedUpdate}, pkg},
		{"funcs from different places", TypedResourceEventHandlerFuncs[*metav1.ObjectMeta]{AddFunc: owner.typedAdd, UpdateFunc: infTestTypedUpdate},
			pkg + ".infTestFuncsOwner.typedAdd-fm+" + pkg + ".infTestTypedUpdate"},
		{"no funcs", TypedResourceEventHandlerFuncs[*metav1.ObjectMeta]{}, "cache.TypedResourceEventHandlerFuncs[*k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta]"},
		{"nil funcs pointer", (*TypedResourceEventHandlerFuncs[*metav1.ObjectMeta])(nil), "*cache.TypedResourceEventHandlerFuncs[*k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta]"},
		{"generic filter", TypedFilteringResourceEventHandler[*metav1.ObjectMeta]{}, pkg + ".TypedFilteringResourceEventHandler[*k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			adapter := &typedResourceEventHandler[*metav1.ObjectMeta]{handler: tc.handler}
			if got := nameForHandler(adapter); got != tc.want {
				t.Fatalf("nameForHandler = %q, want %q", got, tc.want)
			}
		})
	}
}
