package cache

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// relistDeduper is implemented by the queue of an informer made by this package (RealFIFO and
// DeltaFIFO as newQueueFIFO sets them up): the queue knows the informer's store, so it can
// tell the Reflector which objects of a relist are already cached.
//
// During a relist (a paginated LIST or a streaming watch-list) a Reflector whose store is a
// relistDeduper asks unchangedInCache about every object as it arrives, page by page or event
// by event. When the store holds an object with the same key and the same non-empty
// resourceVersion, the Reflector keeps the cached object in the list instead and lets the
// freshly decoded copy go at once, so a relist holds the cache plus the objects that changed
// plus the page in flight — not a second copy of the whole cache. The list then goes to
// replaceRelisted, which never transforms the cached objects again (they are transformed
// already, and a transform may modify its argument in place, which would race with readers).
//
// A resourceVersion names one state of one object, so the cached object and the new copy are
// the same state; only their identity differs. Stores of other kinds, and queues built by
// users, are not relistDedupers: their Reflectors behave exactly as client-go's.
type relistDeduper interface {
	// dedupsRelists reports whether the queue knows a store to look relisted objects up in.
	dedupsRelists() bool
	// unchangedInCache returns the cached object with obj's key when it has obj's
	// resourceVersion, which must not be empty.
	unchangedInCache(obj interface{}) (cached interface{}, ok bool)
	// replaceRelisted is Replace for a relist: cached[i] says that list[i] came from the cache
	// and must not be transformed; the others are transformed unless transformed says the
	// Reflector did it already (a streaming watch-list transforms as it buffers).
	replaceRelisted(list []interface{}, cached []bool, resourceVersion string, transformed bool) error
}

var (
	_ relistDeduper = &RealFIFO{}
	_ relistDeduper = &DeltaFIFO{}
	_ listEncoder   = &RealFIFO{}
)

// listEncoder is implemented by RealFIFO. The queue of an informer whose store is compact (see
// WithCompactStorage) and still empty, as before its initial list, has the Reflector encode
// each object of the list as it arrives (see cache.encodeListed), so that the list holds the
// encoded objects the store will keep instead of the decoded ones: the initial list then never
// holds more than the store's final content plus the page or event in flight. The store takes
// the entries as they are, and each handler receives the objects decoded from them (see
// resolveListed).
type listEncoder interface {
	// listEncoder returns the function that gives what the list about to be read carries for
	// each of its objects, running the queue's transformer first if transform is set, or nil
	// when the list is to carry the objects themselves. The function returns obj (transformed
	// or not), or an *encodedItem; transformed says that the queue must not transform it.
	listEncoder(transform bool) func(obj interface{}) (item interface{}, transformed bool)
}

// listEncoder implements listEncoder for an atomic queue: its lists reach the store as one
// ReplacedAll delta, which processReplacedAllInfo applies. A non-atomic queue hands every
// object of a list to the consumer on its own, and carries the objects themselves.
func (f *RealFIFO) listEncoder(transform bool) func(interface{}) (interface{}, bool) {
	c, ok := f.relistStore.(*cache)
	if !ok || !f.emitAtomicEvents || !c.isEmptyCompact() || watchListConsistencyCheckEnabled {
		return nil
	}
	transformer := f.transformer
	if !transform {
		transformer = nil
	}
	return func(obj interface{}) (interface{}, bool) {
		if transformer != nil {
			t, err := transformer(obj)
			if err != nil {
				return obj, false // Replace transforms it again and reports the error
			}
			obj = t
		}
		item, _ := c.encodeListed(obj)
		return item, true
	}
}

// setRelistStore makes the queue dedup relists against store (see relistDeduper).
func (f *RealFIFO) setRelistStore(store KeyGetter) { f.relistStore = store }

// setRelistStore makes the queue dedup relists against store (see relistDeduper).
func (f *DeltaFIFO) setRelistStore(store KeyGetter) { f.relistStore = store }

func (f *RealFIFO) dedupsRelists() bool  { return f.relistStore != nil }
func (f *DeltaFIFO) dedupsRelists() bool { return f.relistStore != nil }

func (f *RealFIFO) unchangedInCache(obj interface{}) (interface{}, bool) {
	return unchangedIn(f.relistStore, f.keyOf, obj)
}

func (f *DeltaFIFO) unchangedInCache(obj interface{}) (interface{}, bool) {
	return unchangedIn(f.relistStore, f.KeyOf, obj)
}

func (f *RealFIFO) replaceRelisted(list []interface{}, cached []bool, resourceVersion string, transformed bool) error {
	return f.replace(list, resourceVersion, !transformed, cached)
}

func (f *DeltaFIFO) replaceRelisted(list []interface{}, cached []bool, _ string, transformed bool) error {
	return f.replace(list, !transformed, cached)
}

// unchangedIn returns the object store holds under obj's key (computed with keyOf) when its
// resourceVersion is obj's and not empty.
func unchangedIn(store KeyGetter, keyOf KeyFunc, obj interface{}) (interface{}, bool) {
	if store == nil || obj == nil {
		return nil, false
	}
	if c, ok := store.(*cache); ok {
		if c.compact != nil {
			// A compact store would decode its object: the listed one costs nothing more,
			// and the store compares resource versions itself (see applyRelist).
			return nil, false
		}
		if c.storage.empty() {
			// The initial list: nothing to find, so no key to compute (and to throw away:
			// the store computes its own keys when it is filled).
			return nil, false
		}
	}
	rv, ok := rvFromObject(obj)
	if !ok || rv == "" {
		return nil, false
	}
	key, err := keyOf(obj)
	if err != nil {
		return nil, false
	}
	cached, exists, err := store.GetByKey(key)
	if err != nil || !exists || cached == nil {
		return nil, false
	}
	if cachedRV, ok := rvFromObject(cached); !ok || cachedRV != rv {
		return nil, false
	}
	return cached, true
}

// needsTransform reports whether item i of a Replace has to be transformed: transform says
// whether the list still needs its transform at all, and cached (nil, or one flag per item)
// marks items that came from the cache.
func needsTransform(transform bool, cached []bool, i int) bool {
	return transform && (cached == nil || !cached[i])
}

// sameObject reports whether a and b are the same pointer. Objects of other kinds (and nil)
// are never the same: comparing them with == could panic, and a copy is not the object.
func sameObject(a, b interface{}) bool {
	if a == nil || b == nil {
		return false
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Pointer || va.Type() != vb.Type() {
		return false
	}
	return va.UnsafePointer() == vb.UnsafePointer()
}

// relistItems collects the objects of a relist as they arrive, deduplicated against the
// informer's store: an unchanged object is replaced by the cached one, a changed one is
// detached from the page it came in, so that a kept object never pins its whole page.
type relistItems struct {
	dedup relistDeduper
	// encode, if set, gives what the list carries for each object (see listEncoder).
	encode func(obj interface{}) (item interface{}, transformed bool)
	items  []interface{}
	cached []bool
	// unchanged counts the items taken from the cache.
	unchanged int
}

// addPage adds every item of a LIST page. The first page sizes the collection for every item
// the list will hold, when it knows: its own items plus the remainingItemCount the server
// estimated, if any. A large list then fills one array instead of growing through a series
// of larger copies.
func (l *relistItems) addPage(page runtime.Object) error {
	if l.items == nil {
		n := meta.LenList(page)
		if m, err := meta.ListAccessor(page); err == nil {
			if rest := m.GetRemainingItemCount(); rest != nil && *rest > 0 && *rest <= maxPresizedItems {
				n += int(*rest)
			}
		}
		l.items = make([]interface{}, 0, n)
		l.cached = make([]bool, 0, n)
	}
	inPlace := listItemsAreValues(page)
	return meta.EachListItem(page, func(item runtime.Object) error {
		if cached, ok := l.dedup.unchangedInCache(item); ok {
			l.add(cached, true)
			return nil
		}
		if l.encode != nil {
			obj, transformed := l.encode(item)
			if o, ok := obj.(runtime.Object); ok && inPlace {
				obj = detachListItem(o) // not encoded: it must not pin the page
			}
			l.items = append(l.items, obj)
			l.cached = append(l.cached, transformed)
			return nil
		}
		if inPlace {
			item = detachListItem(item)
		}
		l.add(item, false)
		return nil
	})
}

// maxPresizedItems bounds the remainingItemCount addPage trusts to size a list: an estimate
// from the server, not a promise.
const maxPresizedItems = 1 << 20

func (l *relistItems) add(obj interface{}, cached bool) {
	l.items = append(l.items, obj)
	l.cached = append(l.cached, cached)
	if cached {
		l.unchanged++
	}
}

// listItemsAreValues reports whether list keeps its items as structs in a slice (v1.PodList's
// []v1.Pod, UnstructuredList's []Unstructured), so that meta.EachListItem hands out pointers
// into that slice.
func listItemsAreValues(list runtime.Object) bool {
	if _, ok := list.(interface {
		EachListItem(func(runtime.Object) error) error
	}); ok {
		// UnstructuredList: its items are values too.
		return true
	}
	itemsPtr, err := meta.GetItemsPtr(list)
	if err != nil {
		return false
	}
	t := reflect.TypeOf(itemsPtr)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Slice {
		return false
	}
	// A RawExtension's object lives outside the slice.
	elem := t.Elem().Elem()
	return elem.Kind() == reflect.Struct && elem != reflect.TypeFor[runtime.RawExtension]()
}

// detachListItem returns a shallow copy of item, a pointer to a struct inside a list's item
// slice, so that keeping it does not keep the slice alive (as meta.EachListItemWithAlloc
// does, but only for the items that are kept).
func detachListItem(item runtime.Object) runtime.Object {
	v := reflect.ValueOf(item)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return item
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	detached, ok := c.Interface().(runtime.Object)
	if !ok {
		return item
	}
	return detached
}
