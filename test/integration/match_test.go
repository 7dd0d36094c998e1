package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// matchTimeout bounds how long a cache may take to catch up with the server. It is generous
// because it includes reconnect back-off after an API server restart (up to ~30 s).
const matchTimeout = 90 * time.Second

// version identifies one state of one object.
type version struct {
	UID, ResourceVersion string
}

// versions maps "namespace/name" to the object's UID and resource version: two sets of
// objects with equal versions hold the same data, since the server gives every write a new
// resource version.
type versions map[string]version

func versionsOf(objs []any) (versions, error) {
	out := make(versions, len(objs))
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("cached object %T: %w", obj, err)
		}
		key := m.GetName()
		if ns := m.GetNamespace(); ns != "" {
			key = ns + "/" + key
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("object %s is cached twice", key)
		}
		out[key] = version{UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion()}
	}
	return out, nil
}

func versionsOfList(list runtime.Object) (versions, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	objs := make([]any, len(items))
	for i := range items {
		objs[i] = items[i]
	}
	return versionsOf(objs)
}

// diff describes how got differs from want, listing at most a few keys of each kind.
func (want versions) diff(got versions) string {
	var missing, extra, stale []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g != w:
			stale = append(stale, fmt.Sprintf("%s (cached %s@%s, server %s@%s)", k, g.UID, g.ResourceVersion, w.UID, w.ResourceVersion))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra)+len(stale) == 0 {
		return ""
	}
	return fmt.Sprintf("server has %d objects, cache %d; missing from cache: %s; not on server: %s; different: %s",
		len(want), len(got), sample(missing), sample(extra), sample(stale))
}

func sample(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	sort.Strings(keys)
	more := ""
	if len(keys) > 5 {
		more = fmt.Sprintf(" and %d more", len(keys)-5)
		keys = keys[:5]
	}
	return strings.Join(keys, ", ") + more
}

// waitForMatch waits until the cache (listCache) holds exactly what a fresh LIST from the
// server (listServer) returns: the same keys, UIDs and resource versions. It fails the test
// with the difference if that does not happen within matchTimeout.
func waitForMatch(ctx context.Context, t testing.TB, listCache func() []any, listServer func(context.Context) (runtime.Object, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, matchTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		last = matchOnce(ctx, listCache, listServer)
		if last == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cache does not match the server after %v: %s", matchTimeout, last)
		case <-tick.C:
		}
	}
}

func matchOnce(ctx context.Context, listCache func() []any, listServer func(context.Context) (runtime.Object, error)) string {
	list, err := listServer(ctx)
	if err != nil {
		return fmt.Sprintf("list from server: %v", err)
	}
	want, err := versionsOfList(list)
	if err != nil {
		return err.Error()
	}
	got, err := versionsOf(listCache())
	if err != nil {
		return err.Error()
	}
	return want.diff(got)
}

// eventually polls cond every 100ms until it holds, failing the test after timeout. It is the
// only way to wait for a real server's asynchronous progress (a bookmark, a reconnect).
func eventually(ctx context.Context, t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}
