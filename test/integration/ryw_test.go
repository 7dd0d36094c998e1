package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kcache/cache"
	"github.com/kcache/cache/clientgo"
	"github.com/kcache/cache/ctrlclient"
)

// TestReadYourWrites runs 1,000 rounds of "patch one of 20 hot ConfigMaps through the
// controller-runtime client, then Get it back from the client at once" while two other writers
// patch the same ConfigMaps, and counts the reads older than the write just made: with
// controller-runtime's plain cache (client-go's informers), with controller-runtime's own
// experimental read-your-writes option (EnableReadYourWritesConsistency, which follows the
// cache through an event handler), and with kcache's informers through the bridge and
// ctrlclient's read-your-writes client. Only the last must have none; the counts, the read
// latencies and the share of reads that waited are logged.
func TestReadYourWrites(t *testing.T) {
	if cluster == nil {
		t.Skip("needs the cluster's servers; not available in a child process")
	}
	ctx := context.Background()
	cs := typedClient(t, conn)
	ns := newNamespace(ctx, t, cs)
	const hot = 20
	selector := map[string]string{"kcache-ryw": ns}
	names := make([]string, hot)
	for i := range names {
		names[i] = fmt.Sprintf("hot-%02d", i)
		if _, err := cs.ConfigMaps(ns).Create(ctx, configMap(names[i], selector, "0"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	crlog.SetLogger(klog.Background())
	cases := []struct {
		name     string
		bridge   bool
		ryw      bool
		crOption bool
	}{
		{name: "controller-runtime cache"},
		{name: "controller-runtime EnableReadYourWritesConsistency", crOption: true},
		{name: "kcache bridge with ctrlclient", bridge: true, ryw: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rywRounds(ctx, t, ns, names, selector, tc.bridge, tc.ryw, tc.crOption)
			t.Logf("%s: %d of %d reads older than the write just made; read latency p50 %v p99 %v max %v; %s",
				tc.name, r.stale, r.rounds, r.p(0.50), r.p(0.99), r.p(1), r.extra)
			if (tc.ryw || tc.crOption) && r.stale != 0 {
				t.Errorf("%d stale reads with read-your-writes, want 0", r.stale)
			}
		})
	}
}

type rywResult struct {
	rounds, stale int
	latencies     []time.Duration
	extra         string
}

// p returns the q-quantile of the read latencies.
func (r rywResult) p(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func rywRounds(ctx context.Context, t *testing.T, ns string, names []string, selector map[string]string, bridge, ryw, crOption bool) rywResult {
	const rounds = 1000
	cfg := conn.Config()
	cacheOpts := crcache.Options{
		HTTPClient: httpClientFor(t, cfg),
		ByObject: map[client.Object]crcache.ByObject{
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(selector)},
		},
	}
	if bridge {
		cacheOpts.NewInformer = clientgo.NewSharedIndexInformer
	}
	informers, err := crcache.New(cfg, cacheOpts)
	if err != nil {
		t.Fatal(err)
	}
	cctx, stopCache := context.WithCancel(ctx)
	cacheDone := make(chan error, 1)
	go func() { cacheDone <- informers.Start(cctx) }()
	defer func() {
		stopCache()
		if err := <-cacheDone; err != nil {
			t.Errorf("cache: %v", err)
		}
	}()
	if _, err := informers.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	clientOpts := client.Options{HTTPClient: cacheOpts.HTTPClient, Cache: &client.CacheOptions{Reader: informers}}
	if crOption {
		clientOpts.Cache.EnableReadYourWritesConsistency = ptr.To(true)
	}
	newClient := client.New
	if ryw {
		newClient = ctrlclient.NewClient(ctrlclient.Options{})
	}
	c, err := newClient(cfg, clientOpts)
	if err != nil {
		t.Fatal(err)
	}

	// Two other writers patch the same ConfigMaps until the rounds are done.
	wctx, stopWriters := context.WithCancel(ctx)
	var writers sync.WaitGroup
	defer func() { stopWriters(); writers.Wait() }()
	cs := typedClient(t, conn)
	for w := range 2 {
		writers.Go(func() {
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; wctx.Err() == nil; i++ {
				patch := fmt.Appendf(nil, `{"data":{"writer-%d":"%d"}}`, w, i)
				_, err := cs.ConfigMaps(ns).Patch(wctx, names[rng.Intn(len(names))], types.MergePatchType, patch, metav1.PatchOptions{})
				if err != nil && wctx.Err() == nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}

	res := rywResult{rounds: rounds, latencies: make([]time.Duration, 0, rounds)}
	for i := range rounds {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i%len(names)]}}
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"data":{"round":"%d"}}`, i))
		if err := c.Patch(ctx, obj, patch); err != nil {
			t.Fatal(err)
		}
		written := obj.ResourceVersion
		var got corev1.ConfigMap
		start := time.Now()
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &got); err != nil {
			t.Fatal(err)
		}
		res.latencies = append(res.latencies, time.Since(start))
		cmp, err := cache.CompareResourceVersion(got.ResourceVersion, written)
		if err != nil {
			t.Fatal(err)
		}
		if cmp < 0 {
			res.stale++
		}
	}
	if rc, ok := c.(*ctrlclient.Client); ok {
		s := rc.Stats()
		res.extra = fmt.Sprintf("reads checked %d, waited %d (%.1f%%), timed out %d", s.Checked, s.Waited, 100*float64(s.Waited)/float64(max(s.Checked, 1)), s.TimedOut)
		if s.TimedOut != 0 {
			t.Errorf("%d reads timed out waiting for the cache", s.TimedOut)
		}
		if s.Checked != rounds {
			t.Errorf("%d reads checked, want every one of the %d", s.Checked, rounds)
		}
	} else if ryw {
		t.Fatal(errors.New("NewClient did not return a *ctrlclient.Client"))
	}
	return res
}
