package integration

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcache/cache"

	"github.com/kcache/cache/test/integration/framework"
)

// runReflector runs r until the test ends, then stops it and waits for it to return.
func runReflector(t *testing.T, r *cache.Reflector) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.RunWithContext(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// childEnv marks a test process started by runInChild.
const childEnv = "KCACHE_INTEGRATION_CHILD"

// inChild reports whether this process was started by runInChild.
func inChild() bool { return os.Getenv(childEnv) != "" }

// runInChild runs the current test again in a child process of the test binary, with env added
// to its environment and the shared cluster's connection. It exists for settings that are read
// once per process, such as the KUBE_FEATURE_* gates. The child must run the test and pass.
func runInChild(t *testing.T, env map[string]string) {
	t.Helper()
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := framework.ChildCommand(ctx, os.Args[0], "-test.run="+strings.Join(parts, "/"), "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), conn.Environ(), childEnv+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("child process output:\n%s", out)
	if err != nil {
		t.Fatalf("child process: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Fatalf("child process did not run %s", t.Name())
	}
}
