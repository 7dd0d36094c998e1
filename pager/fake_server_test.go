package pager_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// pageServer is a small in-memory stand-in for an API server's paginated LIST: it serves
// ConfigMaps "cm-00000"… in order, uses the start index as the continue token, and rejects a
// continue request that still carries a resource version, as kube-apiserver does.
type pageServer struct {
	items []v1.ConfigMap
	rv    string
	// fail maps a 1-based call number to the error that call returns.
	fail map[int]error
	// emptyPages makes the first emptyPages pages empty (with a continue token), as a server
	// filtering with a selector can return.
	emptyPages int
	// block makes the given call wait for its context to end; waiting is closed when that call
	// starts waiting, and unblocked records that it then returned.
	block     int
	waiting   chan struct{}
	unblocked atomic.Bool

	mu    sync.Mutex
	calls []metav1.ListOptions
}

func newPageServer(n int) *pageServer {
	s := &pageServer{rv: "42", waiting: make(chan struct{})}
	s.items = make([]v1.ConfigMap, n)
	for i := range s.items {
		s.items[i] = v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: "ns"}}
	}
	return s
}

func (s *pageServer) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	s.calls = append(s.calls, opts)
	call := len(s.calls)
	s.mu.Unlock()

	if call == s.block {
		close(s.waiting)
		<-ctx.Done()
		s.unblocked.Store(true)
		return nil, ctx.Err()
	}
	if err := s.fail[call]; err != nil {
		return nil, err
	}
	if opts.Continue != "" && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	start := 0
	if opts.Continue != "" {
		c, err := strconv.Atoi(opts.Continue)
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid continue token")
		}
		start = c
	}
	list := &v1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
	list.SetSelfLink("/self")
	if call <= s.emptyPages && opts.Limit > 0 {
		list.Continue = strconv.Itoa(start)
		return list, nil
	}
	end := len(s.items)
	if opts.Limit > 0 && start+int(opts.Limit) < end {
		end = start + int(opts.Limit)
		list.Continue = strconv.Itoa(end)
	}
	list.Items = s.items[start:end]
	return list, nil
}

func (s *pageServer) recorded() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.calls...)
}

// names returns the names of list's items, whatever kind of list it is.
func names(objs []runtime.Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*v1.ConfigMap).Name)
	}
	return out
}

// wantNames returns the names of items [from, to) of a pageServer.
func wantNames(from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("cm-%05d", i))
	}
	return out
}

func expired() error { return apierrors.NewResourceExpired("continue token expired") }
