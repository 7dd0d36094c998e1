package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cache "github.com/kcache/cache"
	fcache "github.com/kcache/cache/testing"
)

// ctrlBenchHandlerTime is how long the slow handler takes per update.
const ctrlBenchHandlerTime = time.Millisecond

// BenchmarkAddWithSlowHandlers is client-go's workload of the same name, written against the
// exported API only: a controller whose update handler takes 1ms processes a RealFIFO, a
// producer modifies an object every millisecond so that the handler is always busy, and the
// benchmark measures how long the Reflector-side RealFIFO.Add takes meanwhile. Without
// UnlockWhileProcessing each Add waits for the running handler; with it, Adds return at once
// until two batches (2000 deltas) are queued, then feel back-pressure.
//
// It uses real time (the handler really sleeps); it measures, it asserts nothing.
func BenchmarkAddWithSlowHandlers(b *testing.B) {
	for _, unlock := range []bool{false, true} {
		b.Run(fmt.Sprintf("unlockWhileProcessing=%t", unlock), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			source := fcache.NewFakeControllerSource()
			defer func() {
				cancel()
				wg.Wait()
				source.Shutdown()
			}()
			source.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-hello"}})

			store := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
			opts := cache.RealFIFOOptions{}
			if unlock {
				opts.AtomicEvents = true
				opts.UnlockWhileProcessing = true
			} else {
				opts.KnownObjects = store
			}
			fifo := cache.NewRealFIFOWithOptions(opts)
			// updates counts the slow handler's runs, to report how far the consumer kept up.
			var updates atomic.Int64
			// apply stores one delta and runs the slow update handler for objects that were
			// already stored, as an informer's processing does.
			apply := func(d cache.Delta) error {
				switch d.Type {
				case cache.ReplacedAll:
					info := d.Object.(cache.ReplacedAllInfo)
					return store.Replace(info.Objects, info.ResourceVersion)
				case cache.Deleted:
					return store.Delete(d.Object)
				case cache.Added, cache.Updated, cache.Replaced, cache.Sync:
					if _, exists, err := store.Get(d.Object); err == nil && exists {
						time.Sleep(ctrlBenchHandlerTime)
						updates.Add(1)
						return store.Update(d.Object)
					}
					return store.Add(d.Object)
				}
				return nil
			}
			c := cache.New(&cache.Config{
				Queue:         fifo,
				ListerWatcher: source,
				ObjectType:    &v1.Pod{},
				Process: func(obj interface{}, _ bool) error {
					deltas, ok := obj.(cache.Deltas)
					if !ok {
						return errors.New("not Deltas")
					}
					for _, d := range deltas {
						if err := apply(d); err != nil {
							return err
						}
					}
					return nil
				},
				ProcessBatch: func(deltas []cache.Delta, _ bool) error {
					for _, d := range deltas {
						if err := apply(d); err != nil {
							return err
						}
					}
					return nil
				},
			})
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.RunWithContext(ctx)
			}()
			if !cache.WaitForCacheSync(ctx.Done(), c.HasSynced) {
				b.Fatal("timed out waiting for the cache to sync")
			}

			wg.Add(1)
			go func() {
				defer wg.Done()
				ticker := time.NewTicker(ctrlBenchHandlerTime)
				defer ticker.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-ticker.C:
						source.Modify(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-hello"}})
					}
				}
			}()

			b.ResetTimer()
			start := updates.Load()
			for i := 0; i < b.N; i++ {
				if err := fifo.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b-hello"}}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// With the handler taking 1ms, the consumer can apply at most one update per
			// millisecond of benchmark time; this shows how close it came while the
			// producer added.
			b.ReportMetric(float64(updates.Load()-start)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
