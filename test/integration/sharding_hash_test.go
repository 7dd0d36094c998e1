package integration

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/sharding"
)

// TestShardingHashHandOver is TestShardingHandOver's ring in the zero-write mode
// (SelectByHash, config maps keyed by UID, their secrets following the UID in their controller
// reference): three replicas (replica-c on controller-runtime), a join, a clean leave, a crash
// and a crash of the sharder's replica, with every replica reconciling its keys over and over.
// It runs twice: with the server's shard selectors (the integration server runs with
// ShardedListAndWatch) and with client-side selection forced. No two replicas may reconcile a
// key at once, and nothing may write to a config map or a secret except the controller's
// creates: an observer counts every update of them, which must stay 0. It logs the measured
// hand-over times, cache shares and events per member.
func TestShardingHashHandOver(t *testing.T) {
	n, lease := shardingRunSize(t)
	for _, clientSide := range []bool{false, true} {
		name := "server-side"
		if clientSide {
			name = "client-side"
		}
		t.Run(name, func(t *testing.T) { testHashHandOver(t, n, lease, clientSide) })
	}
}

func testHashHandOver(t *testing.T, n int, lease time.Duration, clientSide bool) {
	mode := map[bool]string{false: "server-side", true: "client-side"}[clientSide]
	h := newHandOverRun(t, n, lease, "hash", "sharding (hash, "+mode+")")
	h.env.selection, h.env.clientSide = sharding.SelectByHash, clientSide

	// The observer sees every config map, secret and Lease of the namespace, and counts every
	// update of a config map or a secret: in this mode nothing updates them.
	leases := informers.For[*coordinationv1.Lease](h.observer, h.client.CoordinationV1().Leases)
	var updates atomic.Int64
	countUpdate := func(kind string) func(old, cur metav1.Object) {
		return func(old, cur metav1.Object) {
			if old.GetResourceVersion() != cur.GetResourceVersion() {
				updates.Add(1)
				t.Logf("%s %s updated (labels %v, annotations %v)", kind, cur.GetName(), cur.GetLabels(), cur.GetAnnotations())
			}
		}
	}
	cmUpdate, secretUpdate := countUpdate("config map"), countUpdate("secret")
	if _, err := h.cms.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(old, cur *corev1.ConfigMap) { cmUpdate(old, cur) },
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.secrets.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Secret]{
		UpdateFunc: func(old, cur *corev1.Secret) { secretUpdate(old, cur) },
	}); err != nil {
		t.Fatal(err)
	}
	h.startObserver()

	// published returns the ring's epoch (number and members) and each member's
	// acknowledgement, as the Leases show them.
	published := func() (uint64, []string, map[string]string) {
		var number uint64
		var members []string
		acks := map[string]string{}
		for _, l := range leases.Informer().GetStore().List() {
			l := l.(*coordinationv1.Lease)
			if l.Name == h.env.ring+"-sharder" {
				if num, names, ok := strings.Cut(l.Annotations[sharding.EpochAnnotation], ":"); ok {
					number, _ = strconv.ParseUint(num, 10, 64)
					if names != "" {
						members = strings.Split(names, ",")
					}
				}
				continue
			}
			acks[l.Name] = l.Annotations[sharding.AcknowledgedAnnotation]
		}
		slices.Sort(members)
		return number, members, acks
	}
	// ownersAmong gives each config map the member whose ranges hold the hash of its UID.
	ownersAmong := func(members []string) map[string]string {
		ranges := sharding.HashRanges(members)
		out := map[string]string{}
		for _, cm := range h.listCMs() {
			hash := sharding.HashKey(string(cm.UID))
			for m, rs := range ranges {
				if sharding.InRanges(hash, rs) {
					out[cm.Name] = m
				}
			}
		}
		return out
	}
	h.owners = func() map[string]string { return ownersAmong(h.members()) }
	// settled: the published epoch holds exactly the live members, every one of them
	// acknowledged it, and each config map and its secret are cached by the member that owns
	// the config map's hash (and, after crashes, by no other live member).
	h.settled = func(live []string) bool {
		number, epochMembers, acks := published()
		if !slices.Equal(epochMembers, live) {
			return false
		}
		for _, m := range live {
			if acks[m] != strconv.FormatUint(number, 10) {
				return false
			}
		}
		own := ownersAmong(live)
		if len(own) < h.n {
			return false
		}
		for name, owner := range own {
			for _, m := range live {
				cm, secret := h.replicas[m].holds(name)
				if m == owner && (!cm || !secret) || m != owner && cm {
					return false
				}
			}
		}
		return true
	}

	// 1. Three replicas, n config maps.
	h.startInitial()
	server, err := h.replicas["replica-a"].shard.ServerSelection(h.ctx, configMapsResource)
	if err != nil {
		t.Fatal(err)
	}
	if server == clientSide {
		t.Fatalf("selection on the server: %v, want %v", server, !clientSide)
	}
	took := h.createAll()
	h.report("initial: every config map and secret cached by its owner %v after the creates", took.Round(time.Millisecond))
	// A member's share is whole segments: of 128 segments, 3 members get a third each with
	// a spread of sqrt(128·(1/3)·(2/3)) ≈ 5.3 segments (4 points); allow 3 of those.
	h.checkShares(float64(n) * (1.0/3 + 3*math.Sqrt(2.0/9/128)))

	// 2. A fourth replica joins: the segments it wins move to it, acknowledged by the others.
	before := h.owners()
	joinStart := time.Now()
	h.start("replica-d")
	took = h.waitSettled("the hand-over to a joining replica", h.members(), 2*time.Minute)
	moved := h.checkMoved(before, 0.08)
	h.report("join: %d of %d config maps (%.1f%%) moved to the new member; handed over with their secrets %v after it held its lease (%v after start)",
		moved, n, 100*float64(moved)/float64(n), took.Round(time.Millisecond), time.Since(joinStart).Round(time.Millisecond))

	// 3. The new replica leaves cleanly.
	took, sinceStop := h.leave("replica-d")
	h.report("clean leave: objects of the leaving member cached by their new owners %v after it stopped (%v)", took.Round(time.Millisecond), sinceStop.Round(time.Millisecond))

	// 4. A replica that is not the sharder crashes: cut off from the server, its lease expires.
	h.crashMember()

	// 5. A replacement joins, then the sharder's replica crashes; another replica takes over.
	h.replace("replica-e")
	old := h.liveSharder()
	_, recovered := h.crash(old, h.owners(), 3*time.Minute, "survivors to reconcile the crashed sharder's objects")
	took = h.waitSettled("the ring to settle after the sharder crashed", h.members(), 2*time.Minute)
	h.report("sharder crash: %s cut off; new sharder %s; its objects reconciled by survivors %v after the crash (target ≤ 2 × lease duration + 5s), ring settled %v later",
		old, h.liveSharder(), recovered.Round(time.Millisecond), took.Round(time.Millisecond))
	if recovered > h.slack*(2*h.env.timing.LeaseDuration+5*time.Second) {
		t.Errorf("recovery after the sharder's crash took %v, more than 2 × lease duration + 5s", recovered)
	}

	// What each member received: with client-side selection every member receives every
	// object and event; with the server's shard selectors only its own.
	for _, name := range []string{"replica-a", "replica-b", "replica-c", "replica-e"} {
		st := h.replicas[name].shard.SelectionStats(configMapsResource)
		h.report("%s: config maps listed %d, kept %d; watch events received %d, kept %d; %d relists", name,
			st.ListedItems, st.KeptItems, st.WatchEvents, st.KeptEvents, st.Relists)
	}
	total, overlapping := h.checkEnd()
	if u := updates.Load(); u != 0 {
		t.Errorf("%d updates of config maps or secrets: the zero-write mode must write none", u)
	}
	for _, cm := range h.listCMs() {
		for k := range cm.Labels {
			if strings.Contains(k, "sharding.kcache.dev") {
				t.Errorf("config map %s carries the label %s", cm.Name, k)
			}
		}
	}
	h.report("%d reconciles recorded across replicas, %d overlapping; %d updates of sharded objects", total, overlapping, updates.Load())
}
