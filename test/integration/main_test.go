// Package integration runs kcache's Reflector and SharedIndexInformer against a real
// kube-apiserver and etcd (see framework). `make integration` builds the servers and runs it.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kcache/cache/test/integration/framework"
)

var (
	// cluster is the server set every test shares. It is nil in a child process started by
	// runInChild, which reaches the parent's cluster through conn.
	cluster *framework.Cluster
	// conn says how to reach the shared API server.
	conn framework.Connection
)

// apiServerArgs are the flags the shared kube-apiserver runs with beyond the harness's own.
// Pod templates are served without the watch cache, straight from etcd, so that a watch from a
// compacted resource version fails with 410 Gone (TestWatchExpiry) and a LIST is paginated
// (TestInitialSync: the watch cache answers the Reflector's first LIST in one piece); every
// other resource uses the watch cache as in a default cluster. ShardedListAndWatch (alpha in
// v1.36, off by default) lets lists and watches select objects by hash ranges
// (ListOptions.ShardSelector); the sharding tests use it.
var apiServerArgs = []string{"--watch-cache-sizes=podtemplates#0", "--feature-gates=ShardedListAndWatch=true"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	c, isChild, err := framework.ConnectionFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if isChild {
		conn = c
		return checkLeaks(m.Run())
	}

	bins, err := framework.BinariesFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cluster, err = framework.Start(ctx, bins, framework.Options{APIServerArgs: apiServerArgs, Users: procsUsers(), AuditPolicy: procsAuditPolicy})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "integration: etcd and kube-apiserver ready in %v (dir %s)\n", time.Since(start).Round(time.Millisecond), cluster.Dir)
	conn = cluster.Connection()
	stopSignals := framework.HandleSignals(cluster.Stop)

	code := m.Run()

	stopSignals()
	if code != 0 && os.Getenv(framework.KeepEnv) == "" {
		fmt.Fprintf(os.Stderr, "integration: set %s=1 to keep the server logs and data\n", framework.KeepEnv)
	}
	cluster.Stop()
	return checkLeaks(code)
}

// checkLeaks fails the run if a goroutine started by a test is still running once the servers
// are gone. Closing a watch stream is asynchronous in the HTTP/2 transport, so idle connections
// are closed again between a few bounded attempts.
func checkLeaks(code int) int {
	var err error
	for range 10 {
		closeClients()
		if err = goleak.Find(
			// klog's flush daemon runs for the life of the process.
			goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		); err == nil {
			return code
		}
	}
	fmt.Fprintf(os.Stderr, "integration: goroutines leaked: %v\n", err)
	if code == 0 {
		code = 1
	}
	return code
}
