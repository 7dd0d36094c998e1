package cache

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// ObjectCodec turns the objects of a compact store (see WithCompactStorage) into bytes and
// back. Decode must return a new object equal to the one Encode was given. Both are called
// concurrently, without the store's lock.
//
// kcache extension.
type ObjectCodec interface {
	// Encode returns obj's encoding. The store keeps the returned slice: it must not be
	// written to afterwards.
	Encode(obj interface{}) ([]byte, error)
	// Decode returns a new object from an encoding Encode returned.
	Decode(data []byte) (interface{}, error)
}

// protoObject is implemented by the generated Kubernetes API types (k8s.io/api and the
// aggregator's, apiextensions' types): gogo-protobuf marshalling without a scheme.
type protoObject interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
	Unmarshal([]byte) error
}

// The formats of the default codec, the first byte of each encoding.
const (
	formatProto        byte = 'p' // type id, then protobuf
	formatJSON         byte = 'j' // type id, then JSON
	formatUnstructured byte = 'u' // CBOR of the unstructured content
)

// NewObjectCodec returns the codec a compact store uses when CompactOptions.Codec is nil. It
// needs no scheme:
//   - *unstructured.Unstructured is kept as CBOR of its content;
//   - a pointer to a struct with generated protobuf methods (Size, MarshalToSizedBuffer,
//     Unmarshal — every built-in Kubernetes type) is kept as protobuf, with its TypeMeta;
//   - any other pointer to a struct (typed custom resources) is kept as JSON (encoding/json).
//
// The codec remembers each Go type (and TypeMeta) it encodes in a table of its own, so an
// encoding is only meaningful to the codec that made it. Encode fails for nil, a non-pointer
// and a value encoding/json rejects.
//
// kcache extension.
func NewObjectCodec() ObjectCodec {
	return &objectCodec{ids: map[typeTag]uint64{}}
}

// typeTag is one Go type with one TypeMeta: typed objects usually carry an empty TypeMeta, so
// a store has one tag per Go type, and the per-object cost of naming the type is a byte.
type typeTag struct {
	typ        reflect.Type
	apiVersion string
	kind       string
}

// objectCodec is NewObjectCodec's codec.
type objectCodec struct {
	// mu guards ids and serializes appends to tags.
	mu  sync.Mutex
	ids map[typeTag]uint64
	// tags is the table by id, read without mu.
	tags atomic.Pointer[[]typeTag]
}

func (c *objectCodec) idOf(tag typeTag) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.ids[tag]; ok {
		return id
	}
	var tags []typeTag
	if p := c.tags.Load(); p != nil {
		tags = *p
	}
	id := uint64(len(tags))
	next := append(tags[:len(tags):len(tags)], tag)
	c.tags.Store(&next)
	c.ids[tag] = id
	return id
}

func (c *objectCodec) tagOf(id uint64) (typeTag, bool) {
	p := c.tags.Load()
	if p == nil || id >= uint64(len(*p)) {
		return typeTag{}, false
	}
	return (*p)[id], true
}

// Encode implements ObjectCodec.
func (c *objectCodec) Encode(obj interface{}) ([]byte, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok && u != nil {
		data, err := direct.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("cache: encoding %T: %w", obj, err)
		}
		// One copy to put the format byte in front; CBOR offers no append form.
		return append([]byte{formatUnstructured}, data...), nil
	}
	v := reflect.ValueOf(obj)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, fmt.Errorf("cache: cannot encode %T: not a non-nil pointer", obj)
	}
	tag := typeTag{typ: v.Type()}
	if ro, ok := obj.(runtime.Object); ok {
		gvk := ro.GetObjectKind().GroupVersionKind()
		tag.apiVersion, tag.kind = gvk.GroupVersion().String(), gvk.Kind
		if gvk.Empty() {
			tag.apiVersion = ""
		}
	}
	id := c.idOf(tag)
	if p, ok := obj.(protoObject); ok {
		size := p.Size()
		head := 1 + uvarintLen(id)
		data := make([]byte, head+size)
		data[0] = formatProto
		binary.PutUvarint(data[1:], id)
		if _, err := p.MarshalToSizedBuffer(data[head:]); err != nil {
			return nil, fmt.Errorf("cache: encoding %T: %w", obj, err)
		}
		return data, nil
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("cache: encoding %T: %w", obj, err)
	}
	data := make([]byte, 0, 1+binary.MaxVarintLen64+len(body))
	data = append(data, formatJSON)
	data = binary.AppendUvarint(data, id)
	return append(data, body...), nil
}

// Decode implements ObjectCodec.
func (c *objectCodec) Decode(data []byte) (interface{}, error) {
	if len(data) == 0 {
		return nil, errors.New("cache: decoding: empty encoding")
	}
	switch data[0] {
	case formatUnstructured:
		var content map[string]interface{}
		if err := direct.Unmarshal(data[1:], &content); err != nil {
			return nil, fmt.Errorf("cache: decoding unstructured: %w", err)
		}
		return &unstructured.Unstructured{Object: content}, nil
	case formatProto, formatJSON:
	default:
		return nil, fmt.Errorf("cache: decoding: unknown format %q", data[0])
	}
	id, n := binary.Uvarint(data[1:])
	tag, ok := c.tagOf(id)
	if n <= 0 || !ok {
		return nil, errors.New("cache: decoding: unknown type")
	}
	body := data[1+n:]
	obj := reflect.New(tag.typ.Elem()).Interface()
	var err error
	if data[0] == formatProto {
		p, ok := obj.(protoObject)
		if !ok {
			return nil, fmt.Errorf("cache: decoding: %v has no protobuf methods", tag.typ)
		}
		err = p.Unmarshal(body)
	} else {
		err = json.Unmarshal(body, obj)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: decoding %v: %w", tag.typ, err)
	}
	if tag.kind != "" || tag.apiVersion != "" {
		if ro, ok := obj.(runtime.Object); ok {
			gv, _ := schema.ParseGroupVersion(tag.apiVersion)
			ro.GetObjectKind().SetGroupVersionKind(gv.WithKind(tag.kind))
		}
	}
	return obj, nil
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// NewRuntimeCodec returns a codec that encodes with encoder and decodes with decoder, for
// example a serializer of apimachinery's serializer.CodecFactory built from the caller's scheme
// (protobuf, JSON or CBOR). Objects must be runtime.Objects whose kind the encoder can tell.
//
// kcache extension.
func NewRuntimeCodec(encoder runtime.Encoder, decoder runtime.Decoder) ObjectCodec {
	return runtimeCodec{encoder: encoder, decoder: decoder}
}

type runtimeCodec struct {
	encoder runtime.Encoder
	decoder runtime.Decoder
}

// Encode implements ObjectCodec.
func (c runtimeCodec) Encode(obj interface{}) ([]byte, error) {
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("cache: cannot encode %T: not a runtime.Object", obj)
	}
	var buf bytes.Buffer
	if err := c.encoder.Encode(ro, &buf); err != nil {
		return nil, fmt.Errorf("cache: encoding %T: %w", obj, err)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// Decode implements ObjectCodec.
func (c runtimeCodec) Decode(data []byte) (interface{}, error) {
	obj, _, err := c.decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("cache: decoding: %w", err)
	}
	return obj, nil
}

// NewCompressedCodec returns a codec that compresses the encodings of inner with DEFLATE
// (compress/flate at its fastest level). It trades CPU on every write and every decoded read
// for memory: realistic pods shrink about 2.5× below their protobuf encoding.
//
// kcache extension.
func NewCompressedCodec(inner ObjectCodec) ObjectCodec {
	return &compressedCodec{inner: inner}
}

type compressedCodec struct {
	inner ObjectCodec
	// writers and readers pool flate state, which is large (a writer is about 1 MB).
	writers sync.Pool
	readers sync.Pool
}

// Encode implements ObjectCodec.
func (c *compressedCodec) Encode(obj interface{}) ([]byte, error) {
	raw, err := c.inner.Encode(obj)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(raw)/2 + 64)
	w, _ := c.writers.Get().(*flate.Writer)
	if w == nil {
		w, _ = flate.NewWriter(&buf, flate.BestSpeed)
	} else {
		w.Reset(&buf)
	}
	defer c.writers.Put(w)
	if _, err := w.Write(raw); err != nil {
		return nil, fmt.Errorf("cache: compressing: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("cache: compressing: %w", err)
	}
	// The length of the raw encoding goes in front so that Decode allocates once.
	out := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+buf.Len()), uint64(len(raw)))
	return append(out, buf.Bytes()...), nil
}

// Decode implements ObjectCodec.
func (c *compressedCodec) Decode(data []byte) (interface{}, error) {
	size, n := binary.Uvarint(data)
	if n <= 0 || size > 1<<30 {
		return nil, errors.New("cache: decompressing: bad length")
	}
	src := bytes.NewReader(data[n:])
	r, _ := c.readers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, fmt.Errorf("cache: decompressing: %w", err)
	}
	defer c.readers.Put(r)
	raw := make([]byte, size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("cache: decompressing: %w", err)
	}
	return c.inner.Decode(raw)
}
