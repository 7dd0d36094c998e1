package informers_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/listers"
	fcache "github.com/kcache/cache/testing"
)

// podSource returns a fake source of pods listing *v1.PodList, holding pods named
// "namespace/name", and a client over it with the shape of clientset.CoreV1().Pods.
func podSource(keys ...string) (*fcache.FakeControllerSource, func(string) *fcache.Client[*v1.PodList]) {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.PodList{} }})
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"name": name}}})
	}
	return src, fcache.NewClient[*v1.PodList](src).Namespace
}

func configMapSource(keys ...string) (*fcache.FakeControllerSource, func(string) *fcache.Client[*v1.ConfigMapList]) {
	src := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		src.Add(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	return src, fcache.NewClient[*v1.ConfigMapList](src).Namespace
}

// initialRequests counts the requests that fetch the whole state: LISTs and streaming
// watch-lists.
func initialRequests(src *fcache.FakeControllerSource) int {
	n := 0
	for _, r := range src.Requests() {
		if r.Verb == fcache.VerbList || (r.Options.SendInitialEvents != nil && *r.Options.SendInitialEvents) {
			n++
		}
	}
	return n
}

// run starts f with a context that the test's cleanup cancels before it calls Shutdown.
func run(t *testing.T, f informers.SharedInformerFactory) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	f.StartWithContext(ctx)
	return ctx
}

// mustSync waits for f's informers and fails the test if one does not sync in a minute.
func mustSync(t *testing.T, ctx context.Context, f informers.SharedInformerFactory) map[reflect.Type]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res := f.WaitForCacheSyncWithContext(ctx)
	if err := res.AsError(); err != nil {
		t.Fatal(err)
	}
	return res.Synced
}

func keysOf[T interface {
	GetNamespace() string
	GetName() string
}](objs []T) []string {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(keys)
	return keys
}

func TestSharing(t *testing.T) {
	src, pods := podSource("a/p1", "b/p2")
	f := informers.NewSharedInformerFactory(0)
	first := informers.For[*v1.Pod](f, pods)
	second := informers.For[*v1.Pod](f, func(string) *fcache.Client[*v1.PodList] {
		t.Error("the second caller's client was used")
		return nil
	})
	viaInformerFor := f.InformerFor(&v1.Pod{}, func(time.Duration) cache.SharedIndexInformer {
		t.Error("InformerFor built a second pod informer")
		return nil
	})
	if first.Informer() != second.Informer() || first.Informer() != viaInformerFor {
		t.Fatal("callers asking for *v1.Pod got different informers")
	}

	ctx := run(t, f)
	synced := mustSync(t, ctx, f)
	if !synced[reflect.TypeFor[*v1.Pod]()] || len(synced) != 1 {
		t.Errorf("Synced = %v, want only *v1.Pod, synced", synced)
	}
	if n := initialRequests(src); n != 1 {
		t.Errorf("%d initial LIST/watch-list requests, want 1 for both callers", n)
	}
	got, err := second.Lister().List(labels.Everything())
	if err != nil || !slices.Equal(keysOf(got), []string{"a/p1", "b/p2"}) {
		t.Errorf("Lister().List() = %v, %v", keysOf(got), err)
	}
}

func TestConcurrentRequestsBuildOnce(t *testing.T) {
	_, pods := podSource()
	f := informers.NewSharedInformerFactory(0)
	var mu sync.Mutex
	builds := 0
	counting := func(ns string) *fcache.Client[*v1.PodList] {
		mu.Lock()
		builds++
		mu.Unlock()
		return pods(ns)
	}
	got := make([]cache.SharedIndexInformer, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = informers.For[*v1.Pod](f, counting).Informer() })
	}
	wg.Wait()
	for _, inf := range got[1:] {
		if inf != got[0] {
			t.Fatal("concurrent callers got different informers")
		}
	}
	if builds != 1 {
		t.Errorf("the client function ran %d times, want 1", builds)
	}
}

func TestOptionsReachRequests(t *testing.T) {
	src, pods := podSource("a/p1", "a/p2", "b/p3")
	var namespaces []string
	f := informers.NewSharedInformerFactoryWithOptions(0,
		informers.WithNamespace("a"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "name!=p2" }),
	)
	podsInformer := informers.For[*v1.Pod](f, func(ns string) *fcache.Client[*v1.PodList] {
		namespaces = append(namespaces, ns)
		return pods(ns)
	})
	ctx := run(t, f)
	mustSync(t, ctx, f)
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p4", Labels: map[string]string{"name": "p4"}}})
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "p5"}})

	if !slices.Equal(namespaces, []string{"a"}) {
		t.Errorf("client function called with %q, want once with \"a\"", namespaces)
	}
	reqs := src.Requests()
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	for _, r := range reqs {
		if r.Options.FieldSelector != "metadata.namespace=a" || r.Options.LabelSelector != "name!=p2" {
			t.Errorf("%s request with field selector %q and label selector %q, want the namespace and the tweak",
				r.Verb, r.Options.FieldSelector, r.Options.LabelSelector)
		}
	}
	// p4 arrives through the watch; wait for it through a handler's view of the cache.
	waitForKeys(t, podsInformer.Informer(), []string{"a/p1", "a/p4"})
	p, err := listers.NewNamespaced(podsInformer.Lister(), "a").Get("p1")
	if err != nil || p.Name != "p1" {
		t.Errorf("namespaced Get(p1) = %v, %v", p, err)
	}
}

// waitForKeys waits until informer's store holds exactly want.
func waitForKeys(t *testing.T, informer cache.SharedIndexInformer, want []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	changed := make(chan struct{}, 1)
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { notify(changed) },
		UpdateFunc: func(interface{}, interface{}) { notify(changed) },
		DeleteFunc: func(interface{}) { notify(changed) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = informer.RemoveEventHandler(reg) }()
	for {
		got := informer.GetStore().ListKeys()
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("store holds %v, want %v", got, want)
		}
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func TestCustomResync(t *testing.T) {
	f := informers.NewSharedInformerFactoryWithOptions(time.Minute,
		informers.WithCustomResyncConfig(map[metav1.Object]time.Duration{&v1.Pod{}: 5 * time.Minute}))
	cases := []struct {
		obj  runtime.Object
		want time.Duration
	}{
		{obj: &v1.Pod{}, want: 5 * time.Minute},
		{obj: &v1.ConfigMap{}, want: time.Minute},
	}
	for _, tc := range cases {
		t.Run(reflect.TypeOf(tc.obj).String(), func(t *testing.T) {
			var got time.Duration
			f.InformerFor(tc.obj, func(resync time.Duration) cache.SharedIndexInformer {
				got = resync
				return cache.NewSharedIndexInformer(&cache.ListWatch{}, tc.obj, resync, cache.Indexers{})
			})
			if got != tc.want {
				t.Errorf("resync period %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCustomResyncReachesHandlers checks, in a synctest bubble where time is simulated, that
// a For informer's handlers resync at the custom period of its type.
func TestCustomResyncReachesHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, pods := podSource("a/p1")
		f := informers.NewSharedInformerFactoryWithOptions(time.Hour,
			informers.WithCustomResyncConfig(map[metav1.Object]time.Duration{&v1.Pod{}: 10 * time.Second}))
		podsInformer := informers.For[*v1.Pod](f, pods)
		var mu sync.Mutex
		var resyncs []time.Duration
		start := time.Now()
		_, err := podsInformer.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*v1.Pod]{
			UpdateFunc: func(_, _ *v1.Pod) {
				mu.Lock()
				defer mu.Unlock()
				resyncs = append(resyncs, time.Since(start).Round(time.Second))
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		f.StartWithContext(ctx)
		time.Sleep(35 * time.Second) // simulated time inside the bubble
		cancel()
		f.Shutdown()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(resyncs, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}) {
			t.Errorf("resyncs at %v, want every 10s", resyncs)
		}
	})
}

func TestTransform(t *testing.T) {
	src, pods := podSource()
	src.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}})
	f := informers.NewSharedInformerFactoryWithOptions(0, informers.WithTransform(cache.TransformStripManagedFields()))
	podsInformer := informers.For[*v1.Pod](f, pods)
	ctx := run(t, f)
	mustSync(t, ctx, f)
	p, err := listers.NewNamespaced(podsInformer.Lister(), "a").Get("p1")
	if err != nil {
		t.Fatal(err)
	}
	if p.ManagedFields != nil {
		t.Errorf("cached pod keeps managedFields %v", p.ManagedFields)
	}
}

// TestCompactStorage: WithCompactStorage gives the factory's informers compact caches, whose
// reads return equal objects that are not the ones handlers received.
func TestCompactStorage(t *testing.T) {
	_, pods := podSource("a/p1")
	f := informers.NewSharedInformerFactoryWithOptions(0, informers.WithCompactStorage(cache.CompactOptions{DecodedCacheSize: -1}))
	podsInformer := informers.For[*v1.Pod](f, pods)
	added := make(chan *v1.Pod, 1)
	if _, err := podsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		added <- obj.(*v1.Pod)
	}}); err != nil {
		t.Fatal(err)
	}
	ctx := run(t, f)
	mustSync(t, ctx, f)
	received := <-added
	p, err := listers.NewNamespaced(podsInformer.Lister(), "a").Get("p1")
	if err != nil {
		t.Fatal(err)
	}
	if p == received || !reflect.DeepEqual(p, received) {
		t.Errorf("lister returned %p, want a decoded copy of the handler's %p", p, received)
	}
}

func TestStartTwiceAndStartAfterNewRequests(t *testing.T) {
	podSrc, pods := podSource("a/p1")
	cmSrc, configMaps := configMapSource("a/c1")
	f := informers.NewSharedInformerFactory(0)
	informers.For[*v1.Pod](f, pods)
	ctx := run(t, f)
	f.StartWithContext(ctx) // again: nothing new to start
	synced := mustSync(t, ctx, f)
	if len(synced) != 1 || !synced[reflect.TypeFor[*v1.Pod]()] {
		t.Fatalf("Synced = %v, want only pods", synced)
	}

	cms := informers.For[*v1.ConfigMap](f, configMaps)
	// Requested but not started: not waited for, not reported.
	if synced := f.WaitForCacheSync(ctx.Done()); len(synced) != 1 {
		t.Errorf("before the second Start, WaitForCacheSync reports %v", synced)
	}
	if cms.Informer().HasSynced() {
		t.Error("a config map informer that was never started has synced")
	}
	f.StartWithContext(ctx)
	synced = mustSync(t, ctx, f)
	if len(synced) != 2 || !synced[reflect.TypeFor[*v1.ConfigMap]()] {
		t.Errorf("after the second Start, Synced = %v", synced)
	}
	if n := initialRequests(podSrc); n != 1 {
		t.Errorf("pods listed %d times, want once despite three Starts", n)
	}
	if n := initialRequests(cmSrc); n != 1 {
		t.Errorf("config maps listed %d times, want once", n)
	}
}

func TestWaitForCacheSyncResults(t *testing.T) {
	_, pods := podSource("a/p1")
	cmSrc, configMaps := configMapSource("a/c1")
	cmSrc.SetListError(errors.New("no config maps today"))
	cmSrc.SetWatchListSupported(false)
	f := informers.NewSharedInformerFactory(0)
	podsInformer := informers.For[*v1.Pod](f, pods)
	informers.For[*v1.ConfigMap](f, configMaps)
	ctx := run(t, f)

	// Let the pods sync and the config maps fail a list, then wait with a context already
	// cancelled: the result reports each type and why waiting stopped.
	timeout, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	defer cancelTimeout()
	if !cache.WaitFor(timeout, "", podsInformer.Informer().HasSyncedChecker()) {
		t.Fatal("pods did not sync")
	}
	if err := cmSrc.WaitForRequests(timeout, 2); err != nil { // the refused watch-list, the failing LIST
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancelCause(ctx)
	stopped := errors.New("test gave up")
	cancel(stopped)
	res := f.WaitForCacheSyncWithContext(waitCtx)
	want := map[reflect.Type]bool{reflect.TypeFor[*v1.Pod](): true, reflect.TypeFor[*v1.ConfigMap](): false}
	if !reflect.DeepEqual(res.Synced, want) {
		t.Errorf("Synced = %v, want %v", res.Synced, want)
	}
	if !errors.Is(res.Err, stopped) {
		t.Errorf("Err = %v, want the context's cause", res.Err)
	}
	if err := res.AsError(); err == nil || !strings.Contains(err.Error(), "*v1.ConfigMap") || strings.Contains(err.Error(), "*v1.Pod") {
		t.Errorf("AsError() = %v, want it to name *v1.ConfigMap only", err)
	}
	if synced := f.WaitForCacheSync(waitCtx.Done()); !reflect.DeepEqual(synced, want) {
		t.Errorf("WaitForCacheSync = %v, want %v", synced, want)
	}
}

func TestWaitForCacheSyncWithNothingStarted(t *testing.T) {
	f := informers.NewSharedInformerFactory(0)
	res := f.WaitForCacheSyncWithContext(context.Background())
	if res.Err != nil || len(res.Synced) != 0 {
		t.Errorf("WaitForCacheSyncWithContext() = %+v, want no error and no types", res)
	}
}

func TestShutdown(t *testing.T) {
	src, pods := podSource("a/p1")
	_, configMaps := configMapSource("a/c1")
	name, err := cache.NewInformerName("factory-shutdown-test")
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactoryWithOptions(0, informers.WithInformerName(name))
	informers.For[*v1.Pod](f, pods)
	ctx, cancel := context.WithCancel(context.Background())
	f.StartWithContext(ctx)
	mustSync(t, ctx, f)

	cancel()
	f.Shutdown()
	f.Shutdown() // again: returns at once
	src.Shutdown()
	goleak.VerifyNone(t)

	// The name was released, so it can be reserved again.
	again, err := cache.NewInformerName("factory-shutdown-test")
	if err != nil {
		t.Errorf("informer name still reserved after Shutdown: %v", err)
	} else {
		again.Release()
	}

	// Requests after Shutdown get an informer that is never started.
	cms := informers.For[*v1.ConfigMap](f, configMaps)
	f.StartWithContext(context.Background())
	if res := f.WaitForCacheSyncWithContext(context.Background()); len(res.Synced) != 1 || res.Err != nil {
		t.Errorf("after Shutdown, WaitForCacheSyncWithContext() = %+v, want only the pods", res)
	}
	if cms.Informer().HasSynced() || cms.Informer().IsStopped() {
		t.Error("an informer requested after Shutdown was started")
	}
	goleak.VerifyNone(t)
}

// TestShutdownWaitsForInformers checks in a synctest bubble that Shutdown blocks while the
// informers run and returns once their context ends.
func TestShutdownWaitsForInformers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, pods := podSource("a/p1")
		f := informers.NewSharedInformerFactory(0)
		informers.For[*v1.Pod](f, pods)
		ctx, cancel := context.WithCancel(context.Background())
		f.StartWithContext(ctx)
		shutdown := make(chan struct{})
		go func() {
			defer close(shutdown)
			f.Shutdown()
		}()
		synctest.Wait() // everything is blocked: the informer on its watch, Shutdown on it
		select {
		case <-shutdown:
			t.Fatal("Shutdown returned while the informer still ran")
		default:
		}
		cancel()
		synctest.Wait()
		select {
		case <-shutdown:
		default:
			t.Fatal("Shutdown did not return after the informer's context ended")
		}
	})
}

// TestDefaultHandlerMaxPending checks in a synctest bubble that the factory's bound reaches
// its informers' handlers: ten updates of one pod queued behind a blocked handler arrive one
// by one without a bound, coalesced with one, and a negative bound refuses the handler.
func TestDefaultHandlerMaxPending(t *testing.T) {
	cases := []struct {
		name        string
		opts        []informers.SharedInformerOption
		wantUpdates int
		wantErr     bool
	}{
		{name: "no bound", wantUpdates: 10},
		{name: "bound of one", opts: []informers.SharedInformerOption{informers.WithDefaultHandlerMaxPending(1)}, wantUpdates: 1},
		{name: "negative", opts: []informers.SharedInformerOption{informers.WithDefaultHandlerMaxPending(-1)}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src, pods := podSource("a/p1")
				f := informers.NewSharedInformerFactoryWithOptions(0, tc.opts...)
				podsInformer := informers.For[*v1.Pod](f, pods)
				release := make(chan struct{})
				var updates []string
				_, err := podsInformer.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*v1.Pod]{
					AddFunc:    func(*v1.Pod) { <-release },
					UpdateFunc: func(_, p *v1.Pod) { updates = append(updates, p.Labels["v"]) },
				})
				if tc.wantErr {
					if err == nil {
						t.Error("a negative bound was accepted")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				f.StartWithContext(ctx)
				synctest.Wait() // the handler is blocked in its initial add
				for i := range 10 {
					src.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p1", Labels: map[string]string{"v": fmt.Sprint(i)}}})
				}
				synctest.Wait() // every update is queued for the handler
				close(release)
				synctest.Wait()
				cancel()
				f.Shutdown()
				if len(updates) != tc.wantUpdates || updates[len(updates)-1] != "9" {
					t.Errorf("handler saw updates %v, want %d ending with the last", updates, tc.wantUpdates)
				}
			})
		})
	}
}
