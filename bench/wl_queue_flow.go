package main

import (
	"fmt"
	"sync"
	"testing"
)

// flowBacklog bounds the items added and not yet done, as an informer's event rate would.
const flowBacklog = 4096

func init() {
	for _, p := range []int{1, 4, 16} {
		register(workload{
			group: "workqueue",
			name:  fmt.Sprintf("flow-control/producers=%d", p),
			doc: fmt.Sprintf("%d producers Add all-different items while at most %d are added and not yet done; %d workers "+
				"Get and Done each, so every item is processed exactly once; one op is one item", p, flowBacklog, p),
			run: func(b *testing.B, impl *Impl) { benchQueueFlow(b, impl.NewQueue(), p) },
		})
	}
}

// benchQueueFlow: a producer takes a credit before each Add, a worker returns it after Done.
func benchQueueFlow(b *testing.B, q Queue, p int) {
	credits := make(chan struct{}, flowBacklog)
	var workers sync.WaitGroup
	for range p {
		workers.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(item)
				<-credits
			}
		})
	}
	var producers sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for w := range p {
		producers.Go(func() {
			share, first := b.N/p, w*(b.N/p)+min(w, b.N%p)
			if w < b.N%p {
				share++
			}
			for k := range share {
				credits <- struct{}{}
				q.Add(first + k)
			}
		})
	}
	producers.Wait()
	q.ShutDown()
	workers.Wait()
	cpu.report(b)
}
