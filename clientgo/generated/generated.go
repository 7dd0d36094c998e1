// Package generated plugs kcache informers into client-go's generated informer factories
// (k8s.io/client-go/informers), whose typed informers and listers then read a kcache cache:
//
//	factory.InformerFor(&corev1.Pod{}, generated.NewInformerFunc(&corev1.Pod{}, client.CoreV1().Pods(""), clientgo.Options{}))
//
// Call it before anything asks the factory for that type: InformerFor keeps the first informer
// registered for a type, and every generated accessor of the type (factory.Core().V1().Pods(),
// its Informer() and Lister()) then shares it. It lives in a package of its own because it
// imports client-go's clientset, which controller-runtime users do not otherwise compile.
package generated

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kcache/cache/clientgo"
)

// ListWatchClient is what a typed client of client-go offers for one resource (for example
// clientset.CoreV1().Pods(namespace)): List returning the typed list L, and Watch.
type ListWatchClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// NewInformerFunc returns the function to give a generated factory's InformerFor for objects of
// exampleObject's type that client lists and watches: it builds a kcache informer through the
// bridge (clientgo.New with opts), indexed by namespace (cache.NamespaceIndex) as the generated
// informers are, with the resync period the factory asks for.
//
// The factory's WithNamespace and WithTweakListOptions do not reach a function given to
// InformerFor (as for any custom informer in client-go): choose the namespace with client
// (Pods("ns")). The factory's WithTransform does: InformerFor sets it on the informer. The
// factory's own client decides, as in the generated informers, whether the informer may use a
// streaming watch-list (client-go's fake clientsets say no).
func NewInformerFunc[L runtime.Object](exampleObject runtime.Object, client ListWatchClient[L], opts clientgo.Options) internalinterfaces.NewInformerFunc {
	return func(factoryClient kubernetes.Interface, resyncPeriod time.Duration) toolscache.SharedIndexInformer {
		lw := &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
				list, err := client.List(ctx, options)
				if err != nil {
					return nil, err
				}
				return list, nil
			},
			WatchFuncWithContext: client.Watch,
		}
		return clientgo.New(toolscache.ToListWatcherWithWatchListSemantics(lw, factoryClient), exampleObject,
			toolscache.SharedIndexInformerOptions{
				ResyncPeriod: resyncPeriod,
				Indexers:     toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc},
			}, opts)
	}
}
