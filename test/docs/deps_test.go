package docs

// The packages the documents' snippets import. Listing them here keeps them, and the
// checksums of everything they need, in this module's go.mod and go.sum, which the snippets
// are compiled against. A snippet that imports a package missing here fails with a missing
// go.sum entry: add the package below and run go mod tidy.
import (
	_ "github.com/prometheus/client_golang/prometheus"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "k8s.io/apimachinery/pkg/labels"
	_ "k8s.io/apimachinery/pkg/runtime/schema"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/informers/core/v1"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/listers/apps/v1"
	_ "k8s.io/client-go/listers/core/v1"
	_ "k8s.io/client-go/metadata"
	_ "k8s.io/client-go/rest"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/utils/ptr"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/controller-runtime/pkg/cache"

	_ "github.com/kcache/cache"
	_ "github.com/kcache/cache/clientgo"
	_ "github.com/kcache/cache/clientgo/generated"
	_ "github.com/kcache/cache/ctrlclient"
	_ "github.com/kcache/cache/debugpage"
	_ "github.com/kcache/cache/informers"
	_ "github.com/kcache/cache/listers"
	_ "github.com/kcache/cache/prometheus"
	_ "github.com/kcache/cache/sharding"
	_ "github.com/kcache/cache/testing"
	_ "github.com/kcache/cache/workqueue"
)
