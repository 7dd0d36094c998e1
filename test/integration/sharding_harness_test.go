package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/listers"
	"github.com/kcache/cache/sharding"
	"github.com/kcache/cache/workqueue"
)

var (
	configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsResource    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// Every reconcile takes reconcileWork and requeues its key env.again later (200ms per 1000
// objects, so all replicas together run about 4500 reconciles a second whatever the size):
// with 1000 objects each is being reconciled a tenth of the time, and every hand-over meets
// reconciles in flight. A replica runs enough workers (reconcileWorkers, about twice the
// number busy on average) that keys do not wait long in its queue: a new owner starts
// reconciling a key soon after its informer delivers it.
const (
	reconcileWork    = 20 * time.Millisecond
	reconcileWorkers = 64
)

// interval is one reconcile of one key by one replica.
type interval struct {
	replica    string
	start, end time.Time
}

// reconcileLog records every reconcile's [start, end) per key across replicas.
type reconcileLog struct {
	// mu guards byKey.
	mu    sync.Mutex
	byKey map[string][]interval
}

func newReconcileLog() *reconcileLog { return &reconcileLog{byKey: map[string][]interval{}} }

func (l *reconcileLog) add(key string, iv interval) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byKey[key] = append(l.byKey[key], iv)
}

// overlaps returns a description of every pair of reconciles of one key by two replicas whose
// intervals intersect, and the number of reconciles checked.
func (l *reconcileLog) overlaps() (found []string, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, ivs := range l.byKey {
		total += len(ivs)
		sorted := slices.Clone(ivs)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].start.Before(sorted[j].start) })
		// Every interval that started earlier and ends after this one starts overlaps it.
		var open []interval
		for _, iv := range sorted {
			kept := open[:0]
			for _, o := range open {
				if o.end.After(iv.start) {
					kept = append(kept, o)
					if o.replica != iv.replica {
						found = append(found, fmt.Sprintf("%s: %s [%s, %s) and %s [%s, %s)", key,
							o.replica, o.start.Format("15:04:05.000000"), o.end.Format("15:04:05.000000"),
							iv.replica, iv.start.Format("15:04:05.000000"), iv.end.Format("15:04:05.000000")))
					}
				}
			}
			open = append(kept, iv)
		}
	}
	return found, total
}

// reconciledBySince reports whether key was reconciled after since by a replica other than
// except.
func (l *reconcileLog) reconciledBySince(key string, since time.Time, except string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, iv := range l.byKey[key] {
		if iv.replica != except && iv.start.After(since) {
			return true
		}
	}
	return false
}

// cuttable is a network path to the API server that the test can cut, like a crash or a
// partition of the replica: new connections fail and open ones are closed.
type cuttable struct {
	cut    atomic.Bool
	dialer *connrotation.Dialer
}

func newCuttable() *cuttable {
	c := &cuttable{}
	base := &net.Dialer{Timeout: 5 * time.Second}
	c.dialer = connrotation.NewDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if c.cut.Load() {
			return nil, errors.New("partitioned")
		}
		return base.DialContext(ctx, network, addr)
	})
	return c
}

// config returns cfg going through the cuttable path.
func (c *cuttable) config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = c.dialer.DialContext
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &cutRoundTripper{c: c, rt: rt} })
	return cfg
}

// cutRoundTripper fails every request once its path is cut.
type cutRoundTripper struct {
	c  *cuttable
	rt http.RoundTripper
}

func (t *cutRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.c.cut.Load() {
		return nil, errors.New("partitioned")
	}
	return t.rt.RoundTrip(r)
}

// WrappedRoundTripper lets closeClients reach the transport's idle connections.
func (t *cutRoundTripper) WrappedRoundTripper() http.RoundTripper { return t.rt }

func (c *cuttable) sever() {
	c.cut.Store(true)
	c.dialer.CloseAll()
}

// replica is one sharded controller: a Shard, a kcache informer factory restricted to its
// share (config maps and the secrets they control), a workqueue and workers that reconcile
// config maps through the shard's gate, recording each reconcile.
type replica struct {
	name   string
	shard  *sharding.Shard
	net    *cuttable
	cancel context.CancelFunc
	done   chan struct{}
	// runDone is closed when the Shard's Run returned, with runErr.
	runDone chan struct{}
	runErr  error
	// counts returns how many config maps and secrets the replica's caches hold.
	counts func() (configMaps, secrets int)
	// holds reports whether the replica's caches hold the config map name and its secret.
	holds func(name string) (configMap, secret bool)
}

type shardingEnv struct {
	t         *testing.T
	ring      string
	namespace string
	timing    sharding.LeaseTiming
	log       *reconcileLog
	again     time.Duration
	// selection is the ring's; with SelectByHash config maps are keyed by UID, selected on the
	// server unless clientSide.
	selection  sharding.Selection
	clientSide bool
}

func (e *shardingEnv) startReplica(ctx context.Context, name string) *replica {
	t := e.t
	t.Helper()
	r := &replica{name: name, net: newCuttable(), done: make(chan struct{}), runDone: make(chan struct{})}
	_, shard, client := e.newShard(r)
	// The factory's clients list and watch only the member's share (by label or hash range).
	factory := informers.NewSharedInformerFactoryWithOptions(0, informers.WithNamespace(e.namespace))
	cms := informers.For[*corev1.ConfigMap](factory, sharding.SelectClient(shard, configMapsResource, client.CoreV1().ConfigMaps))
	secrets := informers.For[*corev1.Secret](factory, sharding.SelectClient(shard, secretsResource, client.CoreV1().Secrets))
	r.counts = func() (int, int) {
		return len(cms.Informer().GetStore().List()), len(secrets.Informer().GetStore().List())
	}
	r.holds = func(name string) (bool, bool) {
		_, cm, _ := cms.Informer().GetIndexer().GetByKey(e.namespace + "/" + name)
		_, secret, _ := secrets.Informer().GetIndexer().GetByKey(e.namespace + "/" + name + "-owned")
		return cm, secret
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second))
	enqueue := func(obj interface{}) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	if _, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o interface{}) { enqueue(o) }, DeleteFunc: enqueue,
	}); err != nil {
		t.Fatal(err)
	}
	enqueueOwner := func(obj interface{}) {
		if s, ok := obj.(*corev1.Secret); ok {
			if ref := metav1.GetControllerOf(s); ref != nil {
				queue.Add(s.Namespace + "/" + ref.Name)
			}
		}
	}
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueOwner, UpdateFunc: func(_, o interface{}) { enqueueOwner(o) },
	}); err != nil {
		t.Fatal(err)
	}
	gate := shard.Gate(configMapsResource, cms.Informer().GetIndexer().GetByKey)
	cmLister := listers.NewNamespaced(cms.Lister(), e.namespace)
	secretLister := listers.NewNamespaced(secrets.Lister(), e.namespace)
	reconcile := func(ctx context.Context, key string) error {
		return e.reconcile(ctx, name, client, key, cmLister.Get, func(name string) bool {
			_, err := secretLister.Get(name)
			return err == nil
		})
	}

	e.run(ctx, r, shard, func(ctx context.Context) {
		factory.StartWithContext(ctx)
		var workers sync.WaitGroup
		for range reconcileWorkers {
			workers.Go(func() {
				for {
					key, shutdown := queue.Get()
					if shutdown {
						return
					}
					err := gate.Do(ctx, key, func(ctx context.Context) error { return reconcile(ctx, key) })
					switch {
					case err == nil:
						// Reconcile every owned object again and again, so that reconciles are in
						// flight whenever the ring changes.
						queue.Forget(key)
						queue.AddAfter(key, e.again)
					case sharding.Skipped(err):
						queue.Forget(key)
					default:
						queue.AddRateLimited(key)
					}
					queue.Done(key)
				}
			})
		}
		<-ctx.Done()
		queue.ShutDown()
		workers.Wait()
	}, factory.Shutdown)
	return r
}

// run starts replica r: shard's Run and, once the shard holds its lease, start, which returns
// when its context ends. When both have returned, cleanup (if not nil) runs and r.done is
// closed. run returns once the shard holds its lease; r.cancel stops everything.
func (e *shardingEnv) run(ctx context.Context, r *replica, shard *sharding.Shard, start func(ctx context.Context), cleanup func()) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(r.runDone)
		r.runErr = shard.Run(ctx)
	})
	wg.Go(func() {
		select {
		case <-shard.Ready():
		case <-ctx.Done():
			return
		}
		start(ctx)
	})
	go func() {
		wg.Wait()
		if cleanup != nil {
			cleanup()
		}
		close(r.done)
	}()
	select {
	case <-shard.Ready():
	case <-time.After(30 * time.Second):
		e.t.Fatalf("replica %s did not get its lease", r.name)
	}
}

// newShard builds r's Shard and a client, both over r's cuttable path.
func (e *shardingEnv) newShard(r *replica) (*rest.Config, *sharding.Shard, kubernetes.Interface) {
	t := e.t
	t.Helper()
	cfg := r.net.config(conn.Config())
	resource := sharding.Resource{
		Resource:   configMapsResource,
		Namespace:  e.namespace,
		Kind:       "ConfigMap",
		Controlled: []schema.GroupVersionResource{secretsResource},
	}
	if e.selection == sharding.SelectByHash {
		resource.ShardField = sharding.FieldUID
	}
	shard, err := sharding.New(cfg, sharding.Options{
		Ring:                e.ring,
		Namespace:           e.namespace,
		Identity:            r.name,
		Resources:           []sharding.Resource{resource},
		Selection:           e.selection,
		ClientSideSelection: e.clientSide,
		LeaseTiming:         e.timing,
		FollowUpDelay:       200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.shard = shard
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClientFor(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, shard, client
}

// reconcile is the controller every replica runs, recorded: it ensures the config map of key
// has its controlled secret "<name>-owned". getCM reads the replica's cache; hasSecret tells
// whether the cache holds a secret.
func (e *shardingEnv) reconcile(ctx context.Context, replica string, client kubernetes.Interface, key string,
	getCM func(name string) (*corev1.ConfigMap, error), hasSecret func(name string) bool) error {
	start := time.Now()
	defer func() { e.log.add(key, interval{replica: replica, start: start, end: time.Now()}) }()
	_, cmName, _ := cache.SplitMetaNamespaceKey(key)
	cm, err := getCM(cmName)
	if err != nil {
		return nil
	}
	// The reconcile's own work takes a few milliseconds and stops when its context is
	// cancelled (the member is fenced), as a reconcile must. This is the workload under test,
	// not a wait for the test's progress.
	work := time.NewTimer(reconcileWork)
	defer work.Stop()
	select {
	case <-work.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if hasSecret(cmName + "-owned") {
		return nil
	}
	yes := true
	_, err = client.CoreV1().Secrets(e.namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name:            cmName + "-owned",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: &yes}},
	}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// alive reports whether the replica is a member: not cut off, and its Shard still running.
func (r *replica) alive() bool {
	select {
	case <-r.runDone:
		return false
	default:
		return !r.net.cut.Load()
	}
}

// stop cancels the replica and waits for it.
func (r *replica) stop() {
	r.cancel()
	<-r.done
}
