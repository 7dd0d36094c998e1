// Package informers shares informers between the controllers of a process, like client-go's
// generated k8s.io/client-go/informers factory, its dynamicinformer and its metadatainformer
// — but without code generation and without a clientset: the caller names the object type and
// hands over the client for it, and the factory builds, shares, starts, waits for and stops
// kcache informers.
//
//	factory := informers.NewSharedInformerFactory(30 * time.Second)
//	pods := informers.For[*corev1.Pod](factory, clientset.CoreV1().Pods)       // namespaced
//	nodes := informers.ForClusterScoped[*corev1.Node](factory, clientset.CoreV1().Nodes())
//	widgets := informers.ForResource(factory, gvr, dynamicClient.Resource(gvr).Namespace)
//	meta := informers.ForResource(factory, gvr, metadataClient.Resource(gvr).Namespace)
//
//	pods.TypedInformer().AddTypedEventHandler(...)  // handlers get *corev1.Pod
//	factory.StartWithContext(ctx)
//	factory.WaitForCacheSyncWithContext(ctx)
//	pod, err := listers.NewNamespaced(pods.Lister(), "default").Get("web-1")
//
// Every caller that asks for the same object type (For, ForClusterScoped, InformerFor) — or,
// for ForResource, the same object type and GroupVersionResource — gets the same informer, so
// one process opens one LIST and one WATCH per resource however many controllers read it. The
// first request builds the informer with the client it brings; later requests get that
// informer and their client is not used.
//
// The factory's options (WithNamespace, WithTweakListOptions, WithTransform,
// WithCustomResyncConfig, WithInformerName) apply to every informer it builds, as in
// client-go. Start and StartWithContext start the informers requested since the last call;
// Shutdown waits until every informer goroutine has returned.
package informers
