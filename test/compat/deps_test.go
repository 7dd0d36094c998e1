package compat

// The packages compared, imported so that `go mod tidy` keeps them in go.mod.
import (
	_ "k8s.io/client-go/listers"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/tools/cache/synctrack"
	_ "k8s.io/client-go/tools/pager"
	_ "k8s.io/client-go/util/workqueue"

	_ "github.com/kcache/cache"
	_ "github.com/kcache/cache/listers"
	_ "github.com/kcache/cache/pager"
	_ "github.com/kcache/cache/synctrack"
	_ "github.com/kcache/cache/workqueue"
)
