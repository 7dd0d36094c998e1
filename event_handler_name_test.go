package cache

import (
	"strings"
	"testing"
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
