package ctrlclient

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kcache/cache"
)

// Create implements client.Writer and records the version the server returned.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.recordObject(obj)
	return nil
}

// Update implements client.Writer and records the version the server returned.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	c.recordObject(obj)
	return nil
}

// Patch implements client.Writer and records the version the server returned.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	c.recordObject(obj)
	return nil
}

// Apply implements client.Writer and records the version the server returned.
func (c *Client) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if err := c.Client.Apply(ctx, obj, opts...); err != nil {
		return err
	}
	c.recordApply(obj)
	return nil
}

// Delete implements client.Writer and records the deleted object; see the package
// documentation.
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	uid := obj.GetUID()
	if p := (&client.DeleteOptions{}).ApplyOptions(opts).Preconditions; p != nil && p.UID != nil && *p.UID != "" {
		uid = *p.UID
	}
	key := client.ObjectKeyFromObject(obj)
	if err == nil && uid == "" {
		uid = c.cachedUID(ctx, gvk, obj, key)
	}
	if err := c.Client.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	if err == nil {
		c.recordDelete(gvk, map[types.NamespacedName]types.UID{key: uid})
	}
	return nil
}

// DeleteAllOf implements client.Writer and records, as deleted, the objects of the kind the
// cache holds that the namespace and label selector match (nothing with a field selector).
func (c *Client) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if err := c.Client.DeleteAllOf(ctx, obj, opts...); err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil
	}
	o := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		return nil
	}
	selector := o.LabelSelector
	if selector == nil {
		selector = labels.Everything()
	}
	deleted := map[types.NamespacedName]types.UID{}
	if inf := c.cachedInformer(ctx, gvk, obj); inf != nil {
		for _, item := range inf.indexer.List() {
			m, ok := item.(client.Object)
			if !ok || (o.Namespace != "" && m.GetNamespace() != o.Namespace) || !selector.Matches(labels.Set(m.GetLabels())) {
				continue
			}
			deleted[client.ObjectKeyFromObject(m)] = m.GetUID()
		}
	}
	if len(deleted) > 0 {
		c.recordDelete(gvk, deleted)
	}
	return nil
}

// Status implements client.StatusClient: writes of the status subresource are recorded.
func (c *Client) Status() client.SubResourceWriter {
	return c.SubResource("status")
}

// SubResource implements client.SubResourceClientConstructor: Update, Patch and Apply of the
// subresource are recorded; Create and Get are the wrapped client's.
func (c *Client) SubResource(subResource string) client.SubResourceClient {
	return &subResourceClient{SubResourceClient: c.Client.SubResource(subResource), c: c}
}

type subResourceClient struct {
	client.SubResourceClient
	c *Client
}

func (s *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := s.SubResourceClient.Update(ctx, obj, opts...); err != nil {
		return err
	}
	s.c.recordObject(obj)
	return nil
}

func (s *subResourceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := s.SubResourceClient.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	s.c.recordObject(obj)
	return nil
}

func (s *subResourceClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if err := s.SubResourceClient.Apply(ctx, obj, opts...); err != nil {
		return err
	}
	s.c.recordApply(obj)
	return nil
}

// recordObject records obj's version for its kind.
func (c *Client) recordObject(obj client.Object) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return
	}
	c.recordVersion(gvk, obj.GetResourceVersion())
}

// recordApply records the version an apply returned: an unstructured apply configuration
// carries it like an object, a generated one in its ResourceVersion and Kind/APIVersion fields.
func (c *Client) recordApply(obj runtime.ApplyConfiguration) {
	if o, ok := obj.(interface {
		GetResourceVersion() string
		GroupVersionKind() schema.GroupVersionKind
	}); ok {
		c.recordVersion(o.GroupVersionKind(), o.GetResourceVersion())
		return
	}
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	field := func(name string) string {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
			return ""
		}
		return f.Elem().String()
	}
	gv, err := schema.ParseGroupVersion(field("APIVersion"))
	if err != nil || field("Kind") == "" {
		return
	}
	c.recordVersion(gv.WithKind(field("Kind")), field("ResourceVersion"))
}

// recordVersion raises the newest version written of gvk to rv; versions that cannot be
// compared are not recorded.
func (c *Client) recordVersion(gvk schema.GroupVersionKind, rv string) {
	if _, err := cache.CompareResourceVersion(rv, rv); err != nil {
		return
	}
	st := c.state(gvk, true)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.rv == "" {
		st.rv = rv
	} else if cmp, _ := cache.CompareResourceVersion(rv, st.rv); cmp > 0 {
		st.rv = rv
	}
}

// recordDelete records deleted keys (with their UIDs) of gvk.
func (c *Client) recordDelete(gvk schema.GroupVersionKind, deleted map[types.NamespacedName]types.UID) {
	st := c.state(gvk, true)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.deletes == nil {
		st.deletes = map[types.NamespacedName]types.UID{}
	}
	for k, uid := range deleted {
		st.deletes[k] = uid
	}
}

// cachedInformer returns the kcache informer serving reads of obj's kind and representation,
// or nil if those reads do not go to a kcache informer.
func (c *Client) cachedInformer(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object) *kcacheInformer {
	rep := representationOf(obj)
	if c.informers == nil || c.uncached[gvk] || (rep == unstructuredObjects && !c.opts.Unstructured) {
		return nil
	}
	inf, err := c.informerFor(ctx, c.state(gvk, true), rep, obj)
	if err != nil {
		return nil
	}
	return inf
}

// cachedUID returns the UID of the object at key in the kcache informer serving obj's reads, or
// "".
func (c *Client) cachedUID(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object, key types.NamespacedName) types.UID {
	inf := c.cachedInformer(ctx, gvk, obj)
	if inf == nil {
		return ""
	}
	if item, exists, err := inf.indexer.GetByKey(storeKey(key)); err == nil && exists {
		if o, ok := item.(client.Object); ok {
			return o.GetUID()
		}
	}
	return ""
}
