package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/sharding"
)

// shardingObjectsEnv sets the number of config maps the hand-over tests create (default
// 1000); SHARDING.md reports 10000 as well.
const shardingObjectsEnv = "KCACHE_SHARDING_OBJECTS"

// shardingLeaseEnv sets the members' lease duration in seconds (default 4).
const shardingLeaseEnv = "KCACHE_SHARDING_LEASE"

// shardingRunSize returns the size of a hand-over test's run, from shardingObjectsEnv and
// shardingLeaseEnv: the number of config maps and the members' lease duration.
func shardingRunSize(t *testing.T) (n int, lease time.Duration) {
	t.Helper()
	n = 1000
	if v := os.Getenv(shardingObjectsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			t.Fatalf("%s=%q: want a number ≥ 10", shardingObjectsEnv, v)
		}
	}
	// Short leases keep the test short. On a loaded 2-core machine the 10,000-object run
	// starves renewals of 4 s leases (the members then fence themselves, as they must), so
	// KCACHE_SHARDING_LEASE sets a longer one.
	leaseSeconds := 4
	if v := os.Getenv(shardingLeaseEnv); v != "" {
		var err error
		if leaseSeconds, err = strconv.Atoi(v); err != nil || leaseSeconds < 4 {
			t.Fatalf("%s=%q: want a number of seconds ≥ 4", shardingLeaseEnv, v)
		}
	}
	return n, time.Duration(leaseSeconds) * time.Second
}

// handOverRun is one run of a hand-over test (TestShardingHandOver, TestShardingHashHandOver)
// in a namespace of its own: the replicas of one ring, an admin client, an observer that sees
// every config map and secret of the namespace, and the steps both tests take. The test sets
// settled and owners, which differ between the label mode and the zero-write mode.
type handOverRun struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelFunc
	// n is the number of config maps the ring shards.
	n      int
	client kubernetes.Interface
	ns     string
	env    *shardingEnv
	// slack multiplies the timing targets. They hold as stated at 10,000 objects, measured
	// with nothing else running on the machine; the smaller default run shares a loaded CI
	// machine and allows twice the time.
	slack time.Duration
	// reportAs prefixes the measured results on stderr.
	reportAs string

	observer informers.SharedInformerFactory
	cms      informers.TypedInformer[*corev1.ConfigMap]
	secrets  informers.TypedInformer[*corev1.Secret]
	replicas map[string]*replica

	// settled reports whether the ring has settled on the live members given: every config
	// map and its secret where they belong.
	settled func(live []string) bool
	// owners returns the member each config map belongs to now.
	owners func() map[string]string
}

// newHandOverRun makes a run of n config maps in a new namespace, on a ring named ring plus a
// random number, whose members hold leases of the given duration. The caller adds what its
// observer needs, then calls startObserver.
func newHandOverRun(t *testing.T, n int, lease time.Duration, ring, reportAs string) *handOverRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := conn.Config()
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(ctx, t, client.CoreV1())
	h := &handOverRun{t: t, ctx: ctx, cancel: cancel, n: n, client: client, ns: ns, slack: 2, reportAs: reportAs,
		replicas: map[string]*replica{}}
	if n >= 10000 {
		h.slack = 1
	}
	h.env = &shardingEnv{t: t, ring: ring + "-" + strconv.Itoa(rand.IntN(1e6)), namespace: ns, log: newReconcileLog(),
		again: 200 * time.Millisecond * time.Duration(max(1, n/1000)),
		timing: sharding.LeaseTiming{LeaseDuration: lease, RenewDeadline: lease / 2,
			RetryPeriod: lease / 8, SkewMargin: lease / 4}}
	h.observer = informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace(ns))
	h.cms = informers.For[*corev1.ConfigMap](h.observer, client.CoreV1().ConfigMaps)
	h.secrets = informers.For[*corev1.Secret](h.observer, client.CoreV1().Secrets)
	return h
}

// startObserver starts the observer and waits for its caches. At the end of the test the
// replicas stop first, then the observer.
func (h *handOverRun) startObserver() {
	t := h.t
	t.Helper()
	ctrl.SetLogger(klog.Background())
	h.observer.StartWithContext(h.ctx)
	t.Cleanup(func() {
		h.cancel()
		h.observer.Shutdown()
	})
	t.Cleanup(func() {
		for _, r := range h.replicas {
			r.stop()
		}
	})
	if err := h.observer.WaitForCacheSyncWithContext(h.ctx).AsError(); err != nil {
		t.Fatal(err)
	}
}

// report logs a line of the measured results, also to stderr so that `make integration` shows it.
func (h *handOverRun) report(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.t.Log(msg)
	fmt.Fprintln(os.Stderr, h.reportAs+":", msg)
}

// listCMs returns the config maps the observer holds.
func (h *handOverRun) listCMs() []*corev1.ConfigMap {
	var out []*corev1.ConfigMap
	for _, o := range h.cms.Informer().GetStore().List() {
		out = append(out, o.(*corev1.ConfigMap))
	}
	return out
}

// start starts the replica name and returns once it holds its member lease. replica-c runs its
// controller on controller-runtime through the clientgo bridge, the others on kcache.
func (h *handOverRun) start(name string) {
	h.t.Helper()
	if name == "replica-c" {
		h.replicas[name] = h.env.startControllerRuntimeReplica(h.ctx, name)
		return
	}
	h.replicas[name] = h.env.startReplica(h.ctx, name)
}

// members returns the names of the live replicas, sorted.
func (h *handOverRun) members() []string {
	var out []string
	for name, r := range h.replicas {
		if r.alive() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// waitSettled waits up to timeout for the ring to settle on live and returns how long it took.
func (h *handOverRun) waitSettled(what string, live []string, timeout time.Duration) time.Duration {
	h.t.Helper()
	start := time.Now()
	eventually(h.ctx, h.t, timeout, what, func() bool { return h.settled(live) })
	return time.Since(start)
}

// startInitial starts the first three replicas: replica-a, replica-b and replica-c.
func (h *handOverRun) startInitial() {
	h.t.Helper()
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		h.start(name)
	}
}

// createAll creates the n config maps and waits for the ring to settle on them. It returns how
// long that took after the creates.
func (h *handOverRun) createAll() time.Duration {
	h.t.Helper()
	createStart := time.Now()
	createConfigMaps(h.ctx, h.t, h.client.CoreV1(), h.ns, h.n, 16)
	h.report("created %d config maps in %v", h.n, time.Since(createStart).Round(time.Millisecond))
	return h.waitSettled("the initial assignment", h.members(), 5*time.Minute)
}

// checkShares reports each live replica's cache share and fails the test if one caches more
// than limit config maps or secrets.
func (h *handOverRun) checkShares(limit float64) {
	for _, name := range h.members() {
		c, s := h.replicas[name].counts()
		h.report("cache share of %s: %d config maps (%.1f%%), %d secrets (%.1f%%)", name, c, 100*float64(c)/float64(h.n), s, 100*float64(s)/float64(h.n))
		if float64(c) > limit || float64(s) > limit {
			h.t.Errorf("%s caches %d config maps and %d secrets, more than %.0f of %d", name, c, s, limit, h.n)
		}
	}
}

// checkMoved returns how many config maps belong to another member than in before, and fails
// the test if that is more than a quarter of them (a join to three members) plus tolerance.
func (h *handOverRun) checkMoved(before map[string]string, tolerance float64) int {
	moved := 0
	for name, m := range h.owners() {
		if before[name] != m {
			moved++
		}
	}
	if frac := float64(moved) / float64(h.n); frac > 1.0/4+tolerance {
		h.t.Errorf("join moved %.3f of the objects, more than 1/N + %.0f%%", frac, 100*tolerance)
	}
	return moved
}

// leave stops the replica name cleanly and waits for the ring to settle without it. It
// returns how long the ring took to settle and how long since the stop began.
func (h *handOverRun) leave(name string) (settled, sinceStop time.Duration) {
	h.t.Helper()
	leaveStart := time.Now()
	h.replicas[name].stop()
	settled = h.waitSettled("the hand-over from a leaving replica", h.members(), 2*time.Minute)
	return settled, time.Since(leaveStart)
}

// liveSharder waits until a live member holds the sharder lease and returns it.
func (h *handOverRun) liveSharder() string {
	h.t.Helper()
	var holder string
	eventually(h.ctx, h.t, time.Minute, "a live member to hold the sharder lease", func() bool {
		l, err := h.client.CoordinationV1().Leases(h.ns).Get(h.ctx, h.env.ring+"-sharder", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		holder = *l.Spec.HolderIdentity
		return slices.Contains(h.members(), holder)
	})
	return holder
}

// crash cuts the replica victim off from the server, so that its lease expires, and waits up
// to timeout (what names the wait) for survivors to reconcile every config map owned said was
// its. It returns how many there were and how long after the crash they were reconciled.
func (h *handOverRun) crash(victim string, owned map[string]string, timeout time.Duration, what string) (lost int, recovered time.Duration) {
	h.t.Helper()
	crashAt := time.Now()
	h.replicas[victim].net.sever()
	for _, m := range owned {
		if m == victim {
			lost++
		}
	}
	eventually(h.ctx, h.t, timeout, what, func() bool {
		for name, m := range owned {
			if m == victim && !h.env.log.reconciledBySince(h.ns+"/"+name, crashAt, victim) {
				return false
			}
		}
		return true
	})
	return lost, time.Since(crashAt)
}

// crashMember crashes a replica that is not the sharder: survivors must reconcile its config
// maps within lease duration + 5s. Then it waits for the ring to settle.
func (h *handOverRun) crashMember() {
	h.t.Helper()
	var victim string
	leader := h.liveSharder()
	for _, m := range h.members() {
		if m != leader {
			victim = m
			break
		}
	}
	lost, recovered := h.crash(victim, h.owners(), 2*time.Minute, "survivors to reconcile the crashed replica's objects")
	h.report("crash: all %d objects of %s reconciled by survivors %v after the crash (lease duration %v; target ≤ lease duration + 5s)",
		lost, victim, recovered.Round(time.Millisecond), h.env.timing.LeaseDuration)
	if recovered > h.slack*(h.env.timing.LeaseDuration+5*time.Second) {
		h.t.Errorf("recovery took %v, more than lease duration + 5s", recovered)
	}
	h.waitSettled("the ring to settle after the crash", h.members(), 2*time.Minute)
}

// replace starts the replica name and waits for the ring to settle with it.
func (h *handOverRun) replace(name string) {
	h.t.Helper()
	h.start(name)
	h.waitSettled("the hand-over to the replacement", h.members(), 2*time.Minute)
}

// checkEnd fails the test if a replica lost its lease without being cut off (replica-d left
// cleanly) or if two replicas ever reconciled one key at once. It returns the number of
// reconciles recorded and of overlapping ones.
func (h *handOverRun) checkEnd() (total, overlapping int) {
	for name, r := range h.replicas {
		select {
		case <-r.runDone:
			if !r.net.cut.Load() && name != "replica-d" {
				h.t.Errorf("%s lost its lease without being cut off: %v (renewals starved?)", name, r.runErr)
			}
		default:
		}
	}
	overlaps, total := h.env.log.overlaps()
	for i, o := range overlaps {
		if i == 20 {
			break
		}
		h.t.Errorf("two replicas reconciled at once: %s", o)
	}
	return total, len(overlaps)
}
