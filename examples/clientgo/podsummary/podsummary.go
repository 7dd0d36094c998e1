// Package podsummary is the controller of the clientgo example, in a package of its own so
// that the integration tests run the very same code against a real kube-apiserver.
//
// It keeps, in every namespace it watches that has pods, a ConfigMap named "pod-summary"
// whose data counts the namespace's pods by phase. It is the shape of a client-go controller
// on kcache: informers from a shared factory, typed handlers that only enqueue keys into a
// rate-limited workqueue, workers that read typed listers and write through the clientset,
// retries with back-off, and a shutdown that drains the queue.
package podsummary

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"

	"github.com/kcache/cache"
	"github.com/kcache/cache/informers"
	"github.com/kcache/cache/listers"
	"github.com/kcache/cache/workqueue"
)

// Name is the name of the summary ConfigMap in each namespace.
const Name = "pod-summary"

// maxRetries is how often a namespace is retried before the controller gives up on it until
// its next change.
const maxRetries = 5

// Controller keeps the pod summaries. Create it with New before the factory starts.
type Controller struct {
	core       corev1client.CoreV1Interface
	pods       listers.ResourceIndexer[*corev1.Pod]
	configMaps listers.ResourceIndexer[*corev1.ConfigMap]
	queue      workqueue.TypedRateLimitingInterface[string] // namespaces to reconcile
	synced     []cache.DoneChecker
}

// New returns a controller that reads pods and config maps through factory's shared
// informers (client: core) and writes summaries through core. Call it before
// factory.StartWithContext; other controllers may share the same informers.
func New(factory informers.SharedInformerFactory, core corev1client.CoreV1Interface) (*Controller, error) {
	pods := informers.For[*corev1.Pod](factory, core.Pods)
	configMaps := informers.For[*corev1.ConfigMap](factory, core.ConfigMaps)
	c := &Controller{
		core:       core,
		pods:       pods.Lister(),
		configMaps: configMaps.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pod-summary"}),
	}

	// Handlers only enqueue: the key is the namespace, so a burst of pod changes in one
	// namespace collapses into one reconcile.
	podReg, err := pods.TypedInformer().AddTypedEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(pod *corev1.Pod) { c.queue.Add(pod.Namespace) },
		UpdateFunc: func(old, pod *corev1.Pod) {
			if old.Status.Phase != pod.Status.Phase {
				c.queue.Add(pod.Namespace)
			}
		},
		// A DeletedObject has the namespace even when only a tombstone's key is known.
		DeleteFunc: func(pod cache.DeletedObject[*corev1.Pod]) { c.queue.Add(pod.GetNamespace()) },
	})
	if err != nil {
		return nil, fmt.Errorf("podsummary: pod handler: %w", err)
	}
	// Someone editing or deleting a summary gets it rewritten.
	cmReg, err := configMaps.TypedInformer().AddTypedEventHandler(cache.TypedFilteringResourceEventHandler[*corev1.ConfigMap]{
		FilterFunc: func(cm *corev1.ConfigMap) bool { return cm != nil && cm.Name == Name },
		Handler: cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
			UpdateFunc: func(_, cm *corev1.ConfigMap) { c.queue.Add(cm.Namespace) },
			DeleteFunc: func(cm cache.DeletedObject[*corev1.ConfigMap]) { c.queue.Add(cm.GetNamespace()) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("podsummary: config map handler: %w", err)
	}
	c.synced = []cache.DoneChecker{podReg.HasSyncedChecker(), cmReg.HasSyncedChecker()}
	return c, nil
}

// Run waits until the handlers have seen the initial state, then reconciles with workers
// goroutines until ctx is done. On the way out it stops taking new work, lets the workers
// finish what they hold, and returns once they have.
func (c *Controller) Run(ctx context.Context, workers int) error {
	logger := klog.FromContext(ctx)
	if !cache.WaitFor(ctx, "pod-summary handlers", c.synced...) {
		c.queue.ShutDown()
		return fmt.Errorf("podsummary: handlers did not sync: %w", context.Cause(ctx))
	}
	logger.Info("Pod summary controller started", "workers", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	logger.Info("Pod summary controller stopped")
	return nil
}

// processNext reconciles one namespace from the queue; it returns false once the queue is
// shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	ns, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(ns)
	// The context may already be cancelled while draining; writes then use a short grace
	// period of their own.
	reqCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := c.Reconcile(reqCtx, ns)
	switch {
	case err == nil:
		c.queue.Forget(ns)
	case c.queue.NumRequeues(ns) < maxRetries && ctx.Err() == nil:
		klog.FromContext(ctx).V(2).Info("Retrying", "namespace", ns, "err", err)
		c.queue.AddRateLimited(ns)
	default:
		c.queue.Forget(ns)
		utilruntime.HandleErrorWithContext(ctx, err, "Giving up on pod summary", "namespace", ns)
	}
	return true
}

// Reconcile makes the summary of namespace ns match its pods, as the caches see them.
func (c *Controller) Reconcile(ctx context.Context, ns string) error {
	pods, err := listers.NewNamespaced(c.pods, ns).List(labels.Everything())
	if err != nil {
		return err
	}
	want := Summarize(pods)
	current, err := listers.NewNamespaced(c.configMaps, ns).Get(Name)
	switch {
	case apierrors.IsNotFound(err):
		if len(pods) == 0 {
			return nil // nothing to summarize, nothing to clean up
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: Name}, Data: want}
		_, err = c.core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return errors.New("podsummary: the cache does not have the summary yet") // retry
		}
		return err
	case err != nil:
		return err
	case maps.Equal(current.Data, want):
		return nil
	}
	// Objects from a lister are shared with every other reader: copy before changing.
	updated := current.DeepCopy()
	updated.Data = want
	_, err = c.core.ConfigMaps(ns).Update(ctx, updated, metav1.UpdateOptions{})
	return err // a conflict means the cache is behind: the retry reads it again
}

// Summarize counts pods by phase; "total" counts them all.
func Summarize(pods []*corev1.Pod) map[string]string {
	counts := map[string]int{"total": len(pods)}
	for _, p := range pods {
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = string(corev1.PodPending)
		}
		counts[phase]++
	}
	data := make(map[string]string, len(counts))
	for k, n := range counts {
		data[k] = strconv.Itoa(n)
	}
	return data
}
