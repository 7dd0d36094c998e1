package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcache/cache"
	"github.com/kcache/cache/listers"
	"github.com/kcache/cache/workqueue"
)

// maxRetries is how often a key is retried before the controller gives up on it.
const maxRetries = 5

// widgetsResource names the resource in NotFound errors of the lister.
var widgetsResource = schema.GroupResource{Group: "example.kcache.dev", Resource: "widgets"}

// controller reconciles Widgets: the informer's typed handler turns every change into a key on
// the workqueue, and workers reconcile keys one at a time each, reading the informer's cache
// through a typed lister.
type controller struct {
	informer cache.TypedSharedIndexInformer[*Widget]
	lister   listers.ResourceIndexer[*Widget]
	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	out      *printer

	// progress gets a token after every reconcile, so that the scenario can wait for the
	// controller to catch up without polling.
	progress chan struct{}

	// mu guards the fields below.
	mu sync.Mutex
	// reconciled maps each key to the resource version last reconciled ("" once deleted).
	reconciled map[string]string
	// failedOnce holds the keys whose first reconcile failed on purpose.
	failedOnce map[string]bool
	counts     counts
}

// counts are what the summary reports.
type counts struct {
	initialAdds, adds, updates, unchanged, deletes, tombstones int
	reconciles, retries, droppedKeys                           int
}

func newController(informer cache.TypedSharedIndexInformer[*Widget], out *printer) *controller {
	return &controller{
		informer:   informer,
		lister:     listers.New[*Widget](informer.GetIndexer(), widgetsResource),
		queue:      newQueue(out),
		out:        out,
		progress:   make(chan struct{}, 1),
		reconciled: map[string]string{},
		failedOnce: map[string]bool{},
	}
}

// handler returns the typed event handler: it counts and logs each notification and enqueues
// the widget's name. It must be quick, so all real work is left to the workers. It receives
// *Widget, never interface{}, and a deletion as a DeletedObject that also covers deletions the
// informer only noticed on a relist (tombstones).
func (c *controller) handler() cache.TypedResourceEventHandler[*Widget] {
	return cache.TypedResourceEventHandlerDetailedFuncs[*Widget]{
		AddFunc: func(w *Widget, isInInitialList bool) {
			c.mu.Lock()
			if isInInitialList {
				c.counts.initialAdds++
			} else {
				c.counts.adds++
				c.out.logf("handler", "add    %s", describe(w))
			}
			c.mu.Unlock()
			if isInInitialList {
				c.enqueueLow(cache.MetaObjectToName(w))
				return
			}
			c.queue.Add(cache.MetaObjectToName(w))
		},
		UpdateFunc: func(older, newer *Widget) {
			c.mu.Lock()
			if older.ResourceVersion == newer.ResourceVersion {
				// A relist (or a resync) re-delivers objects that did not change.
				c.counts.unchanged++
				c.mu.Unlock()
				c.enqueueLow(cache.MetaObjectToName(newer))
				return
			}
			c.mu.Unlock()
			c.out.logf("handler", "update %s: size %d -> %d (rv %s)", describe(older), older.Size, newer.Size, newer.ResourceVersion)
			// Enqueued and counted under one lock: the -priority restart opens the workers'
			// gate when it has seen its changes counted, so the change must be in the queue by
			// then; and the summary, read under the lock once the change is reconciled, must
			// see it counted.
			c.mu.Lock()
			c.queue.Add(cache.MetaObjectToName(newer))
			c.counts.updates++
			c.mu.Unlock()
		},
		DeleteFunc: func(deleted cache.DeletedObject[*Widget]) {
			c.mu.Lock()
			c.counts.deletes++
			if deleted.FinalStateUnknown != nil {
				c.counts.tombstones++
			}
			c.mu.Unlock()
			if deleted.FinalStateUnknown != nil {
				c.out.logf("handler", "delete %s (tombstone: deletion noticed by a relist)", deleted.GetKey())
			} else {
				c.out.logf("handler", "delete %s", describe(deleted.OptionalObj))
			}
			// GetObjectName works with and without a tombstone.
			c.queue.Add(deleted.GetObjectName())
		},
	}
}

// describe names a widget for the log.
func describe(w *Widget) string {
	return fmt.Sprintf("%s/%s (rv %s)", w.Namespace, w.Name, w.ResourceVersion)
}

// run starts the workers and blocks until ctx ends; then it shuts the queue down and waits for
// the workers.
func (c *controller) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for i := 1; i <= workers; i++ {
		wg.Go(func() {
			for c.processNextItem(i) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

// processNextItem reconciles one key; false once the queue is shut down.
func (c *controller) processNextItem(worker int) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	err := c.reconcile(key)
	switch {
	case err == nil:
		c.queue.Forget(key)
	case c.queue.NumRequeues(key) < maxRetries:
		c.mu.Lock()
		c.counts.retries++
		c.mu.Unlock()
		c.out.logf(fmt.Sprintf("worker %d", worker), "%s failed (%v); retrying with backoff", key, err)
		c.queue.AddRateLimited(key)
	default:
		c.mu.Lock()
		c.counts.droppedKeys++
		c.mu.Unlock()
		c.out.logf(fmt.Sprintf("worker %d", worker), "%s failed %d times; giving up: %v", key, maxRetries, err)
		c.queue.Forget(key)
	}
	select {
	case c.progress <- struct{}{}:
	default:
	}
	return true
}

// errFlaky is the simulated failure of a widget's first reconcile.
var errFlaky = errors.New("simulated transient error")

// reconcile brings the world in line with the cached widget. Here that only means recording
// which version was handled; widgets whose name ends in "3" fail once, to show retries.
func (c *controller) reconcile(name cache.ObjectName) error {
	key := name.String()
	w, err := listers.NewNamespaced(c.lister, name.Namespace).Get(name.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.reconciles++
	if err != nil { // not found: deleted
		if c.reconciled[key] != "" {
			c.out.logf("reconcile", "%s is gone: cleaned up", key)
		}
		c.reconciled[key] = ""
		return nil
	}
	if c.reconciled[key] == w.ResourceVersion {
		return nil // already handled this version
	}
	if w.Name[len(w.Name)-1] == '3' && !c.failedOnce[key] {
		c.failedOnce[key] = true
		return errFlaky
	}
	c.reconciled[key] = w.ResourceVersion
	c.out.logf("reconcile", "%s: %d parts at rv %s", key, w.Size, w.ResourceVersion)
	return nil
}

// caughtUp reports whether every widget in want (key → resource version) was reconciled at
// that version, and every other key seen was reconciled as deleted.
func (c *controller) caughtUp(want map[string]string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, rv := range want {
		if got, ok := c.reconciled[key]; !ok || got != rv {
			return false
		}
	}
	for key, rv := range c.reconciled {
		if _, ok := want[key]; !ok && rv != "" {
			return false
		}
	}
	return c.queue.Len() == 0
}

// waitCaughtUp blocks until caughtUp(want), ctx ends, or timeout passes.
func (c *controller) waitCaughtUp(ctx context.Context, want func() map[string]string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !c.caughtUp(want()) {
		select {
		case <-c.progress:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("controller did not catch up within %v", timeout)
		}
	}
	return nil
}
