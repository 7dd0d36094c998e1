package testing

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Client stands in for a client-go typed, dynamic or metadata client of one resource: its
// List(ctx, options) returns the list type L and its Watch(ctx, options) a watch, both served
// by a FakeControllerSource. Namespace returns a client limited to one namespace, the way
// clientset.CoreV1().Pods(namespace) and dynamicClient.Resource(gvr).Namespace(namespace) are,
// so the method value NewClient[L](src).Namespace has the shape of clientset.CoreV1().Pods.
//
// The zero value is not usable; create one with NewClient. A Client is safe for concurrent
// use.
type Client[L runtime.Object] struct {
	src       *FakeControllerSource
	namespace string
}

// NewClient returns a Client over src for all namespaces. src must list objects as L: set
// Options.NewListFunc to return an L (for example &v1.PodList{}); otherwise List returns an
// error naming both types.
func NewClient[L runtime.Object](src *FakeControllerSource) *Client[L] {
	return &Client[L]{src: src}
}

// Namespace returns a client that sees only the objects in namespace, as a real server's
// namespaced URL does: it adds a metadata.namespace field selector to every request (visible
// in the source's Requests). The empty namespace means all namespaces.
func (c *Client[L]) Namespace(namespace string) *Client[L] {
	return &Client[L]{src: c.src, namespace: namespace}
}

// NamespaceName returns the namespace the client is limited to, "" for all.
func (c *Client[L]) NamespaceName() string {
	return c.namespace
}

// List lists the source through ListWithContext and returns the result as an L. On error it
// returns the zero L.
func (c *Client[L]) List(ctx context.Context, options metav1.ListOptions) (L, error) {
	var zero L
	obj, err := c.src.ListWithContext(ctx, c.scope(options))
	if err != nil {
		return zero, err
	}
	l, ok := obj.(L)
	if !ok {
		return zero, fmt.Errorf("testing: the source lists %T, the client wants %T (set Options.NewListFunc)", obj, zero)
	}
	return l, nil
}

// Watch watches the source through WatchWithContext.
func (c *Client[L]) Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return c.src.WatchWithContext(ctx, c.scope(options))
}

// scope adds the client's namespace to options' field selector.
func (c *Client[L]) scope(options metav1.ListOptions) metav1.ListOptions {
	if c.namespace == "" {
		return options
	}
	ns := fields.OneTermEqualSelector(fieldNamespace, c.namespace)
	if options.FieldSelector == "" {
		options.FieldSelector = ns.String()
		return options
	}
	sel, err := fields.ParseSelector(options.FieldSelector)
	if err != nil {
		// Leave the bad selector for the source to reject as a real server would.
		return options
	}
	options.FieldSelector = fields.AndSelectors(ns, sel).String()
	return options
}
