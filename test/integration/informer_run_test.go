package integration

import (
	"context"
	"sync"
	"testing"

	"github.com/kcache/cache"
)

// runInformer runs inf until the test ends, then stops it and waits for it to return, and
// waits (bounded) for its initial sync.
func runInformer(ctx context.Context, t *testing.T, inf cache.SharedIndexInformer) {
	t.Helper()
	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(runCtx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, matchTimeout)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatalf("informer did not sync within %v", matchTimeout)
	}
}
