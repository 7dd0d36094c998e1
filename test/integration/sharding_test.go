package integration

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/sharding"
)

// shardingObjectsEnv sets the number of config maps TestShardingHandOver creates (default
// 1000); SHARDING.md reports 10000 as well.
const shardingObjectsEnv = "KCACHE_SHARDING_OBJECTS"

// shardingLeaseEnv sets the members' lease duration in seconds (default 4).
const shardingLeaseEnv = "KCACHE_SHARDING_LEASE"

// TestShardingHandOver runs replicas of a sharded controller in this process against the real
// API server — each with its own member lease, a kcache informer factory restricted to its
// share, and a workqueue reconciling config maps through the shard's gate, creating one
// controlled secret per config map; replica-c runs the same controller on controller-runtime
// through the clientgo bridge — and drives the ring through a join, a clean leave, a
// crash (a replica cut off from the server, its lease left to expire), a crash of the sharder's
// replica, and a burst of creates at 100/s, while a writer keeps touching config maps so that
// reconciles run throughout. Every reconcile's [start, end) is recorded per key; no two
// replicas may ever reconcile one key at once. It logs the measured targets.
func TestShardingHandOver(t *testing.T) {
	n := 1000
	if v := os.Getenv(shardingObjectsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			t.Fatalf("%s=%q: want a number ≥ 10", shardingObjectsEnv, v)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := conn.Config()
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(ctx, t, client.CoreV1())
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
	lease := time.Duration(leaseSeconds) * time.Second
	// The timing targets hold as stated at 10,000 objects, measured with nothing else running
	// on the machine; the smaller default run shares a loaded CI machine and allows twice the
	// time.
	slack := time.Duration(2)
	if n >= 10000 {
		slack = 1
	}
	env := &shardingEnv{t: t, ring: "it-" + strconv.Itoa(rand.IntN(1e6)), namespace: ns, log: newReconcileLog(),
		again: 200 * time.Millisecond * time.Duration(max(1, n/1000)),
		timing: sharding.LeaseTiming{LeaseDuration: lease, RenewDeadline: lease / 2,
			RetryPeriod: lease / 8, SkewMargin: lease / 4}}
	labels, err := sharding.NewLabels(env.ring)
	if err != nil {
		t.Fatal(err)
	}
	report := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		t.Log(msg)
		fmt.Fprintln(os.Stderr, "sharding:", msg)
	}

	// The observer sees every config map and secret of the namespace, with their labels.
	observer := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace(ns))
	cms := informers.For[*corev1.ConfigMap](observer, client.CoreV1().ConfigMaps)
	secrets := informers.For[*corev1.Secret](observer, client.CoreV1().Secrets)
	var labelMu sync.Mutex
	firstLabelled := map[string]time.Time{}
	noteLabel := func(cm *corev1.ConfigMap) {
		if cm.Labels[labels.Shard()] == "" {
			return
		}
		labelMu.Lock()
		if _, ok := firstLabelled[cm.Name]; !ok {
			firstLabelled[cm.Name] = time.Now()
		}
		labelMu.Unlock()
	}
	if _, err := cms.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		AddFunc: noteLabel, UpdateFunc: func(_, cm *corev1.ConfigMap) { noteLabel(cm) },
	}); err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(klog.Background())
	observer.StartWithContext(ctx)
	defer observer.Shutdown()
	defer cancel()
	if err := observer.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		t.Fatal(err)
	}

	listCMs := func() []*corev1.ConfigMap {
		var out []*corev1.ConfigMap
		for _, o := range cms.Informer().GetStore().List() {
			out = append(out, o.(*corev1.ConfigMap))
		}
		return out
	}
	assignment := func() map[string]string {
		out := map[string]string{}
		for _, cm := range listCMs() {
			out[cm.Name] = cm.Labels[labels.Shard()]
		}
		return out
	}
	// placed reports whether every config map (and, withSecrets, its secret) sits on the member
	// rendezvous hashing names among members, with no drain mark.
	placed := func(members []string, withSecrets bool) bool {
		list := listCMs()
		if len(list) < n {
			return false
		}
		for _, cm := range list {
			want, _ := sharding.Assign(ns+"/"+cm.Name, members)
			if cm.Labels[labels.Shard()] != want || cm.Labels[labels.Drain()] != "" {
				return false
			}
			if !withSecrets {
				continue
			}
			obj, ok, _ := secrets.Informer().GetIndexer().GetByKey(ns + "/" + cm.Name + "-owned")
			if !ok || obj.(*corev1.Secret).Labels[labels.Shard()] != want {
				return false
			}
		}
		return true
	}
	settled := func(members []string) bool { return placed(members, true) }
	ownersSettled := func(members []string) bool { return placed(members, false) }
	waitSettled := func(what string, members []string, timeout time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		eventually(ctx, t, timeout, what, func() bool { return settled(members) })
		return time.Since(start)
	}

	// A writer touches random config maps so that reconciles run during every hand-over.
	stopWriter := make(chan struct{})
	writerDone := make(chan struct{})
	var stopOnce sync.Once
	stopWriting := func() {
		stopOnce.Do(func() { close(stopWriter) })
		<-writerDone
	}
	created := func() int { return len(listCMs()) }
	// The writer touches the "cm-" config maps made at the start; n grows later, with the burst's.
	touchable := n
	go func() {
		defer close(writerDone)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopWriter:
				return
			case <-tick.C:
			}
			if c := created(); c > 0 {
				name := fmt.Sprintf("cm-%05d", rand.IntN(min(c, touchable)))
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"touched":"%d"}}}`, i)
				_, _ = client.CoreV1().ConfigMaps(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
			}
		}
	}()

	replicas := map[string]*replica{}
	start := func(name string) {
		if name == "replica-c" {
			// One replica runs its controller on controller-runtime through the clientgo bridge.
			replicas[name] = env.startControllerRuntimeReplica(ctx, name)
			return
		}
		replicas[name] = env.startReplica(ctx, name)
	}
	defer func() {
		stopWriting()
		for _, r := range replicas {
			r.stop()
		}
	}()
	members := func() []string {
		var out []string
		for name, r := range replicas {
			if r.alive() {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}

	// 1. Three replicas, n config maps.
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		start(name)
	}
	createStart := time.Now()
	createConfigMaps(ctx, t, client.CoreV1(), ns, n, 16)
	report("created %d config maps in %v", n, time.Since(createStart).Round(time.Millisecond))
	took := waitSettled("the initial assignment", members(), 5*time.Minute)
	report("initial: all %d config maps assigned and reconciled %v after the creates", n, took.Round(time.Millisecond))
	for _, name := range members() {
		r := replicas[name]
		c, s := r.counts()
		report("cache share of %s: %d config maps (%.1f%%), %d secrets (%.1f%%)", name, c, 100*float64(c)/float64(n), s, 100*float64(s)/float64(n))
		// The target is 1/3 + 10%. Shares of n random keys spread by about sqrt(2/9/n): at
		// 10,000 keys 0.5 points, at 1,000 1.5 points, so the smaller run allows 4 of those.
		limit := float64(n) * max(1.1/3, 1.0/3+4*math.Sqrt(2.0/9/float64(n)))
		if float64(c) > limit || float64(s) > limit {
			t.Errorf("%s caches %d config maps and %d secrets, more than %.0f of %d", name, c, s, limit, n)
		}
	}

	// 2. A fourth replica joins: about 1/4 of the objects move to it, through drains.
	before := assignment()
	joinStart := time.Now()
	start("replica-d")
	joined := time.Now()
	eventually(ctx, t, 2*time.Minute, "the config maps to move to the joining replica", func() bool { return ownersSettled(members()) })
	ownersTook := time.Since(joined)
	took = waitSettled("the hand-over to a joining replica", members(), 2*time.Minute) + ownersTook
	after := assignment()
	moved := 0
	for name, m := range after {
		if before[name] != m {
			moved++
		}
	}
	report("join: %d of %d config maps (%.1f%%) moved to the new member; config maps handed over %v, with their secrets %v after it held its lease (%v after start)",
		moved, n, 100*float64(moved)/float64(n), ownersTook.Round(time.Millisecond), took.Round(time.Millisecond), time.Since(joinStart).Round(time.Millisecond))
	if frac := float64(moved) / float64(n); frac > 1.0/4+0.05 {
		t.Errorf("join moved %.3f of the objects, more than 1/N + 5%%", frac)
	}

	// 3. The new replica leaves cleanly: it releases its lease, its objects move at once.
	leaveStart := time.Now()
	replicas["replica-d"].stop()
	took = waitSettled("the hand-over from a leaving replica", members(), 2*time.Minute)
	report("clean leave: objects of the leaving member reassigned %v after it stopped (%v)", took.Round(time.Millisecond), time.Since(leaveStart).Round(time.Millisecond))

	// 4. A replica that is not the sharder crashes: cut off from the server, its lease expires.
	sharder := func() string {
		l, err := client.CoordinationV1().Leases(ns).Get(ctx, env.ring+"-sharder", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	// liveSharder waits until a live member holds the sharder lease and returns it.
	liveSharder := func() string {
		t.Helper()
		var holder string
		eventually(ctx, t, time.Minute, "a live member to hold the sharder lease", func() bool {
			holder = sharder()
			return slices.Contains(members(), holder)
		})
		return holder
	}
	var victim string
	leader := liveSharder()
	for _, m := range members() {
		if m != leader {
			victim = m
			break
		}
	}
	owned := assignment()
	crashAt := time.Now()
	replicas[victim].net.sever()
	lost := 0
	for _, m := range owned {
		if m == victim {
			lost++
		}
	}
	eventually(ctx, t, 2*time.Minute, "survivors to reconcile the crashed replica's objects", func() bool {
		for name, m := range owned {
			if m == victim && !env.log.reconciledBySince(ns+"/"+name, crashAt, victim) {
				return false
			}
		}
		return true
	})
	recovered := time.Since(crashAt)
	report("crash: all %d objects of %s reconciled by survivors %v after the crash (lease duration %v; target ≤ lease duration + 5s)",
		lost, victim, recovered.Round(time.Millisecond), env.timing.LeaseDuration)
	if recovered > slack*(env.timing.LeaseDuration+5*time.Second) {
		t.Errorf("recovery took %v, more than lease duration + 5s", recovered)
	}
	waitSettled("the ring to settle after the crash", members(), 2*time.Minute)

	// 5. A replacement joins, then the sharder's replica crashes; another replica takes over.
	start("replica-e")
	waitSettled("the hand-over to the replacement", members(), 2*time.Minute)
	old := liveSharder()
	replicas[old].net.sever()
	took = waitSettled("the ring to settle after the sharder crashed", members(), 2*time.Minute)
	report("sharder crash: %s cut off; new sharder %s; all objects on survivors %v later", old, liveSharder(), took.Round(time.Millisecond))

	// 6. A burst of creates at 100/s: each new object gets its shard label quickly.
	burst := max(n/10, 200)
	names := make([]string, burst)
	createdAt := make([]time.Time, burst)
	tick := time.NewTicker(10 * time.Millisecond)
	for i := range burst {
		<-tick.C
		names[i] = fmt.Sprintf("burst-%05d", i)
		createdAt[i] = time.Now()
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, configMap(names[i], nil, "x"), metav1.CreateOptions{}); err != nil {
			tick.Stop()
			t.Fatal(err)
		}
	}
	tick.Stop()
	n += burst
	waitSettled("the burst to be assigned", members(), 2*time.Minute)
	var latencies []time.Duration
	labelMu.Lock()
	for i, name := range names {
		latencies = append(latencies, firstLabelled[name].Sub(createdAt[i]))
	}
	labelMu.Unlock()
	slices.Sort(latencies)
	p := func(q float64) time.Duration {
		return latencies[int(q*float64(len(latencies)-1))].Round(time.Millisecond)
	}
	report("burst: %d creates at 100/s, label latency p50 %v p99 %v max %v (target p99 ≤ 1s)", burst, p(0.5), p(0.99), p(1))
	if p(0.99) > slack*time.Second {
		t.Errorf("label latency p99 %v > 1s", p(0.99))
	}

	stopWriting()
	for name, r := range replicas {
		select {
		case <-r.runDone:
			if !r.net.cut.Load() && name != "replica-d" {
				t.Errorf("%s lost its lease without being cut off: %v (renewals starved?)", name, r.runErr)
			}
		default:
		}
	}
	overlaps, total := env.log.overlaps()
	report("%d reconciles recorded across replicas, %d overlapping", total, len(overlaps))
	for i, o := range overlaps {
		if i == 20 {
			break
		}
		t.Errorf("two replicas reconciled at once: %s", o)
	}
}
