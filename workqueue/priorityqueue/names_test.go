package priorityqueue_test

import (
	"strings"
	"testing"

	"github.com/kcache/cache/workqueue"
	"github.com/kcache/cache/workqueue/priorityqueue"
)

// TestQueuesDefaultName: an unnamed priority queue is listed under the name of the function
// that created it.
func TestQueuesDefaultName(t *testing.T) {
	q := priorityqueue.New[int]("")
	defer q.ShutDown()
	for _, s := range workqueue.Queues() {
		if strings.HasPrefix(s.Name, "priorityqueue_test.TestQueuesDefaultName") && !s.Named {
			return
		}
	}
	t.Errorf("no queue named after the test: %+v", workqueue.Queues())
}
