package debugpage

import (
	"github.com/kcache/cache"
	"github.com/kcache/cache/workqueue"
)

type (
	informerStatus    = cache.InformerStatus
	handlerStatus     = cache.HandlerStatus
	relistCounts      = cache.RelistCounts
	durationHistogram = cache.DurationHistogram
	keyVersion        = cache.KeyVersion
)

// errNotFound is what source reports for an informer that is not running.
var errNotFound = cache.ErrInformerNotFound

// source is what the page reads: the process's informers and queues, or a fake in tests.
type source interface {
	informers() []informerStatus
	keys(informer, after string, limit int) ([]keyVersion, int, error)
	object(informer, key string) (obj any, exists bool, err error)
	queues() []workqueue.QueueStatus
}

// processSource reads the process-wide registries of package cache and package workqueue.
type processSource struct{}

func (processSource) informers() []informerStatus { return cache.InformerStatuses() }
func (processSource) keys(informer, after string, limit int) ([]keyVersion, int, error) {
	return cache.InformerKeys(informer, after, limit)
}
func (processSource) object(informer, key string) (any, bool, error) {
	return cache.InformerObject(informer, key)
}
func (processSource) queues() []workqueue.QueueStatus { return workqueue.Queues() }
