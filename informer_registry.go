package cache

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// informerRegistry is the process-wide list of the informers InformerStatuses reports. An
// informer is entered when it is created (so that its default name is fixed in creation
// order) and leaves when it stops or is garbage-collected, whichever comes first. It holds
// only weak pointers: it never keeps an informer alive.
var informerRegistry = struct {
	// mu guards next, byID and names.
	mu    sync.Mutex
	next  uint64
	byID  map[uint64]weak.Pointer[sharedIndexInformer]
	names map[string]uint64 // name → id of the informer that holds it
}{byID: map[uint64]weak.Pointer[sharedIndexInformer]{}, names: map[string]uint64{}}

// registerInformer enters s, names it and returns its id and name. A name given through the
// identifier is used as it is (reserved names behave as in client-go, and may repeat here);
// otherwise the default name is the resource ("pods", "deployments.apps") or, when the
// resource is not known, the example object's type ("v1.Pod"), with "#2", "#3"… appended when
// a live informer holds it already: the lowest free suffix, so names are stable from one run
// of a program to the next.
func registerInformer(s *sharedIndexInformer, given string, gvr schema.GroupVersionResource, example interface{}) (uint64, string) {
	informerRegistry.mu.Lock()
	defer informerRegistry.mu.Unlock()
	informerRegistry.next++
	id := informerRegistry.next
	name := given
	if name == "" {
		base := defaultInformerName(gvr, example)
		name = base
		for i := 2; ; i++ {
			if _, taken := informerRegistry.names[name]; !taken {
				break
			}
			name = fmt.Sprintf("%s#%d", base, i)
		}
		informerRegistry.names[name] = id
	}
	informerRegistry.byID[id] = weak.Make(s)
	runtime.AddCleanup(s, unregisterInformer, registration{id: id, name: name, owned: given == ""})
	return id, name
}

// registration is what unregisterInformer needs to remove an informer.
type registration struct {
	id    uint64
	name  string
	owned bool // the default name is the registry's to free
}

// unregisterInformer removes an informer; it is idempotent.
func unregisterInformer(r registration) {
	informerRegistry.mu.Lock()
	defer informerRegistry.mu.Unlock()
	delete(informerRegistry.byID, r.id)
	if r.owned && informerRegistry.names[r.name] == r.id {
		delete(informerRegistry.names, r.name)
	}
}

// liveInformers returns the registered informers that are still reachable, in creation order.
func liveInformers() []*sharedIndexInformer {
	informerRegistry.mu.Lock()
	ids := make([]uint64, 0, len(informerRegistry.byID))
	for id := range informerRegistry.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]*sharedIndexInformer, 0, len(ids))
	for _, id := range ids {
		if s := informerRegistry.byID[id].Value(); s != nil {
			out = append(out, s)
		}
	}
	informerRegistry.mu.Unlock()
	return out
}

// defaultInformerName names an informer after its resource, or its example object's type.
func defaultInformerName(gvr schema.GroupVersionResource, example interface{}) string {
	if gvr.Resource != "" {
		if gvr.Group != "" {
			return gvr.Resource + "." + gvr.Group
		}
		return gvr.Resource
	}
	if u, ok := example.(*unstructured.Unstructured); ok && u != nil {
		if gvk := u.GroupVersionKind(); gvk.Kind != "" {
			if gvk.Group != "" {
				return gvk.Kind + "." + gvk.Group
			}
			return gvk.Kind
		}
	}
	if example == nil {
		return "informer"
	}
	return strings.TrimLeft(reflect.TypeOf(example).String(), "*")
}
