package cache_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

func TestReflectorDefaultNameIsTheCaller(t *testing.T) {
	src := fcache.NewFakeControllerSource()
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	cases := []struct {
		name string
		new  func() (*cache.Reflector, int)
	}{
		{name: "NewReflector", new: func() (*cache.Reflector, int) {
			_, _, line, _ := runtime.Caller(0)
			return cache.NewReflector(src, &v1.Pod{}, store, 0), line + 1
		}},
		{name: "NewReflectorWithOptions", new: func() (*cache.Reflector, int) {
			_, _, line, _ := runtime.Caller(0)
			return cache.NewReflectorWithOptions(src, &v1.Pod{}, store, cache.ReflectorOptions{}), line + 1
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, line := tc.new()
			if want := fmt.Sprintf("reflector_name_test.go:%d", line); !strings.HasSuffix(r.Name(), want) {
				t.Fatalf("Name() = %q, want a name ending in %q", r.Name(), want)
			}
		})
	}
}
