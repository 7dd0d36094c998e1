package cache

import (
	"container/list"
	"fmt"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// CompactOptions configures a compact store: one that keeps its objects encoded and decodes
// them when they are read. See WithCompactStorage.
//
// kcache extension.
type CompactOptions struct {
	// Codec encodes and decodes the objects. Defaults to NewObjectCodec(): protobuf for the
	// built-in Kubernetes types, CBOR for unstructured objects, JSON for other types.
	Codec ObjectCodec

	// Compress, if true, compresses every encoding (see NewCompressedCodec). Defaults to false.
	Compress bool

	// DecodedCacheSize is how many decoded objects the store keeps, the most recently written
	// or read ones, so that reading the same objects again and again does not decode them each
	// time. Defaults to 256 if zero; a negative value keeps none.
	DecodedCacheSize int
}

// defaultDecodedCacheSize is CompactOptions.DecodedCacheSize's default.
const defaultDecodedCacheSize = 256

// WithCompactStorage makes the store keep its objects encoded by options.Codec (optionally
// compressed) instead of as the objects themselves. For realistic pods that is about a third
// of the memory as protobuf, and about a seventh compressed.
//
// Index values are computed when an object is written, from the object given, so IndexKeys,
// ListIndexFuncValues and ListKeys decode nothing. Get, GetByKey, List, ByIndex and Index
// decode the objects they return, except the ones in a small cache of decoded objects (see
// CompactOptions.DecodedCacheSize); List decodes every object it misses there and so costs
// a decode per object.
//
// What changes for readers: an object read from a compact store is usually a new object, so
// two reads of one key may return two different pointers, and an object read is not the one a
// handler received. Identity comparisons (old == new) stop telling whether an object changed:
// compare resource versions. Objects read must still be treated as read-only: a recently
// written or read object is shared through the decoded-object cache. Handlers of an informer
// receive the objects decoded from the watch, exactly as without this option, except the old
// object of an update, which is decoded from the store, and the adds of the initial list: an
// informer's Reflector encodes each object of its initial list (paged LIST or watch-list) as
// it arrives, so that start-up never holds more than the final store plus one page, and each
// add is decoded from the store when it is delivered.
//
// A write whose object the codec cannot encode fails like an IndexFunc error (see Add).
//
// kcache extension.
func WithCompactStorage(options CompactOptions) StoreOption {
	return func(c *cache) {
		c.compact = newCompactCodec(options)
	}
}

// compactStorage is the StoreOption for o.Compact: WithCompactStorage, or nothing.
func (o SharedIndexInformerOptions) compactStorage() StoreOption {
	if o.Compact == nil {
		return func(*cache) {}
	}
	return WithCompactStorage(*o.Compact)
}

// compactEntry is what a compact store keeps per object: the encoding and the resource
// version, which relists compare without decoding.
type compactEntry struct {
	data []byte
	rv   string
}

// compactCodec is the encoding side of a compact store: the codec and the decoded-object
// cache.
type compactCodec struct {
	codec ObjectCodec
	hot   *decodedCache // nil when disabled
}

func newCompactCodec(options CompactOptions) *compactCodec {
	codec := options.Codec
	if codec == nil {
		codec = NewObjectCodec()
	}
	if options.Compress {
		codec = NewCompressedCodec(codec)
	}
	size := options.DecodedCacheSize
	if size == 0 {
		size = defaultDecodedCacheSize
	}
	c := &compactCodec{codec: codec}
	if size > 0 {
		c.hot = newDecodedCache(size)
	}
	return c
}

// encode returns the entry to store for obj; nil stays nil.
func (c *compactCodec) encode(obj interface{}) (interface{}, error) {
	if obj == nil {
		return nil, nil
	}
	if e, ok := obj.(*encodedItem); ok {
		return e.entry, nil // encoded as it was listed
	}
	data, err := c.codec.Encode(obj)
	if err != nil {
		return nil, err
	}
	rv, _ := rvFromObject(obj)
	return &compactEntry{data: data, rv: rv}, nil
}

// remember puts obj, just stored as stored, in the decoded-object cache.
func (c *compactCodec) remember(stored, obj interface{}) {
	if e, ok := stored.(*compactEntry); ok && c.hot != nil {
		c.hot.add(e, obj)
	}
}

// decode returns the object stored as stored (an entry, or nil). An encoding that does not
// decode — only possible with a codec that is not deterministic — is reported through
// utilruntime.HandleError and read as nil.
func (c *compactCodec) decode(stored interface{}) interface{} {
	e, ok := stored.(*compactEntry)
	if !ok {
		return stored
	}
	if c.hot != nil {
		if obj, ok := c.hot.get(e); ok {
			return obj
		}
	}
	obj, err := c.codec.Decode(e.data)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("cache: compact store: %w", err))
		return nil
	}
	if c.hot != nil {
		c.hot.add(e, obj)
	}
	return obj
}

// decodeAll decodes stored in place.
func (c *compactCodec) decodeAll(stored []interface{}) []interface{} {
	for i, s := range stored {
		stored[i] = c.decode(s)
	}
	return stored
}

// storedRV returns the resource version stored with an entry, and false for anything else.
func storedRV(stored interface{}) (string, bool) {
	if e, ok := stored.(*compactEntry); ok {
		return e.rv, true
	}
	return "", false
}

// decodedCache is a bounded least-recently-used map from entries to their decoded objects.
// Keying by entry means that a rewritten key never returns its previous object: the new entry
// misses, and the old one ages out.
type decodedCache struct {
	// mu guards items and order.
	mu    sync.Mutex
	size  int
	items map[*compactEntry]*list.Element
	order list.List // of *decodedItem, most recent first
}

type decodedItem struct {
	entry *compactEntry
	obj   interface{}
}

func newDecodedCache(size int) *decodedCache {
	return &decodedCache{size: size, items: make(map[*compactEntry]*list.Element, size)}
}

func (d *decodedCache) get(e *compactEntry) (interface{}, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	el, ok := d.items[e]
	if !ok {
		return nil, false
	}
	d.order.MoveToFront(el)
	return el.Value.(*decodedItem).obj, true
}

func (d *decodedCache) add(e *compactEntry, obj interface{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.items[e]; ok {
		d.order.MoveToFront(el)
		return
	}
	if d.order.Len() >= d.size {
		oldest := d.order.Back()
		item := oldest.Value.(*decodedItem)
		delete(d.items, item.entry)
		// Reuse the element's item for the new entry: no allocation once full.
		item.entry, item.obj = e, obj
		d.items[e] = oldest
		d.order.MoveToFront(oldest)
		return
	}
	d.items[e] = d.order.PushFront(&decodedItem{entry: e, obj: obj})
}

// encodeState replaces every object of s, built by buildStoreState with failed and errs, by
// its entry. An object that does not encode joins the failed slots (kept in increasing order)
// and loses the index entries buildStoreState gave it, as a failed slot has none.
func (c *threadSafeMap) encodeState(s *storeState, failed []int, errs []error) ([]int, []error) {
	var encFailed []int
	var encErrs []error
	f := 0 // failed[:f] are the index failures below the current slot
	for slot := range s.len() {
		obj := s.obj(slot)
		for f < len(failed) && failed[f] < slot {
			f++
		}
		if f < len(failed) && failed[f] == slot {
			continue // restored or removed under the lock; its object is never kept
		}
		stored, err := c.compact.encode(obj)
		if err != nil {
			for i, cell := range s.cellsAt(slot) {
				for _, v := range cellValues(cell) {
					s.indices[i].remove(v, slot)
				}
			}
			clear(s.cellsAt(slot))
			encFailed = append(encFailed, slot)
			encErrs = append(encErrs, fmt.Errorf("cache: key %q: %w", s.key(slot), err))
			continue
		}
		s.setObj(slot, stored)
	}
	if encFailed == nil {
		return failed, errs
	}
	// Merge the two increasing lists.
	mergedFailed := make([]int, 0, len(failed)+len(encFailed))
	mergedErrs := make([]error, 0, len(failed)+len(encFailed))
	i, j := 0, 0
	for i < len(failed) || j < len(encFailed) {
		if j == len(encFailed) || (i < len(failed) && failed[i] < encFailed[j]) {
			mergedFailed, mergedErrs = append(mergedFailed, failed[i]), append(mergedErrs, errs[i])
			i++
			continue
		}
		mergedFailed, mergedErrs = append(mergedFailed, encFailed[j]), append(mergedErrs, encErrs[j])
		j++
	}
	return mergedFailed, mergedErrs
}

// encodedItem is an object of a list into an empty compact store that was encoded as the
// Reflector received it (see cache.encodeListed), so that the list never holds its decoded
// objects: it carries what the store needs to keep the object — its key, its index values and
// its entry — and is decoded again only when a handler is given it (see resolveListed).
type encodedItem struct {
	key   string
	entry *compactEntry
	// vals are the index values computed with set when the object was encoded.
	vals [][]string
	set  *indexerSet
	c    *compactCodec
}

// decoded returns the object e holds, shared through the decoded-object cache.
func (e *encodedItem) decoded() interface{} {
	return e.c.decode(e.entry)
}

// valuesInto writes e's index values for set into dst: the values computed when it was
// encoded, or, if indexers were added since, the values of its decoded object.
func (e *encodedItem) valuesInto(set *indexerSet, dst [][]string) error {
	if set == e.set {
		copy(dst, e.vals)
		return nil
	}
	return set.valuesInto(e.key, e.decoded(), 0, dst)
}

// encodeListed returns what a list that fills c, a compact store, carries for obj: an
// *encodedItem, or obj itself (ok false) when c is not compact or not empty, or obj has no key,
// fails an IndexFunc or does not encode (the store reports the error when it applies the
// list, as for any list).
func (c *cache) encodeListed(obj interface{}) (item interface{}, ok bool) {
	s := c.storage
	if s.compact == nil || obj == nil {
		return obj, false
	}
	key, err := c.keyFunc(obj)
	if err != nil {
		return obj, false
	}
	set := s.indexers.Load()
	vals, err := set.values(key, obj, 0)
	if err != nil {
		return obj, false
	}
	stored, err := s.compact.encode(obj)
	if err != nil {
		return obj, false
	}
	return &encodedItem{key: key, entry: stored.(*compactEntry), vals: vals, set: set, c: s.compact}, true
}

// isEmptyCompact reports whether c is a compact store holding nothing, as before an
// informer's initial list.
func (c *cache) isEmptyCompact() bool {
	s := c.storage
	if s.compact == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state.len() == 0
}

// resolveListed returns obj with every *encodedItem in it decoded: obj itself, or a
// DeletedFinalStateUnknown holding one.
func resolveListed(obj interface{}) interface{} {
	switch o := obj.(type) {
	case *encodedItem:
		return o.decoded()
	case DeletedFinalStateUnknown:
		if e, ok := o.Obj.(*encodedItem); ok {
			o.Obj = e.decoded()
			return o
		}
	}
	return obj
}

// resolveAllListed decodes, in place, the *encodedItems of objs.
func resolveAllListed(objs []interface{}) {
	for i, obj := range objs {
		if e, ok := obj.(*encodedItem); ok {
			objs[i] = e.decoded()
		}
	}
}

// listedKey is DeletionHandlingMetaNamespaceKeyFunc that also knows an *encodedItem's key.
func listedKey(obj interface{}) (string, error) {
	if e, ok := obj.(*encodedItem); ok {
		return e.key, nil
	}
	return DeletionHandlingMetaNamespaceKeyFunc(obj)
}

// valuesOf is set.valuesInto for an object of a list, which may be an *encodedItem.
func valuesOf(set *indexerSet, key string, obj interface{}, dst [][]string) error {
	if e, ok := obj.(*encodedItem); ok {
		return e.valuesInto(set, dst)
	}
	return set.valuesInto(key, obj, 0, dst)
}
