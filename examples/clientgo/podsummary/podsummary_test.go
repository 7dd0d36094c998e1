package podsummary_test

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kcache/cache/examples/clientgo/podsummary"
	"github.com/kcache/cache/informers"
)

func pod(ns, name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.PodStatus{Phase: phase}}
}

// TestController runs the controller against client-go's fake clientset: summaries appear,
// follow pod changes, and come back when deleted.
func TestController(t *testing.T) {
	cs := fake.NewClientset(pod("a", "p1", corev1.PodRunning), pod("a", "p2", ""), pod("b", "p3", corev1.PodSucceeded))
	// No WithWatchListSemanticsOf(cs): the factory recognizes client-go's fake typed clients.
	factory := informers.NewSharedInformerFactory(0)
	c, err := podsummary.New(factory, cs.CoreV1())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.StartWithContext(ctx)
	done := make(chan error)
	go func() { done <- c.Run(ctx, 2) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		factory.Shutdown()
	}()

	// waitFor watches the fake server's config maps until the summary of ns is want.
	waitFor := func(ns string, want map[string]string) {
		t.Helper()
		waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(waitCtx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var got map[string]string
		if cm, err := cs.CoreV1().ConfigMaps(ns).Get(waitCtx, podsummary.Name, metav1.GetOptions{}); err == nil {
			got = cm.Data
		}
		for !maps.Equal(got, want) {
			select {
			case ev := <-w.ResultChan():
				switch cm, ok := ev.Object.(*corev1.ConfigMap); {
				case !ok || cm.Name != podsummary.Name:
				case ev.Type == watch.Deleted:
					got = nil
				default:
					got = cm.Data
				}
			case <-waitCtx.Done():
				t.Fatalf("summary of %s = %v, want %v", ns, got, want)
			}
		}
	}
	waitFor("a", map[string]string{"total": "2", "Running": "1", "Pending": "1"})
	waitFor("b", map[string]string{"total": "1", "Succeeded": "1"})

	if _, err := cs.CoreV1().Pods("a").Create(ctx, pod("a", "p4", corev1.PodFailed), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("a").Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("a", map[string]string{"total": "2", "Failed": "1", "Pending": "1"})

	if err := cs.CoreV1().ConfigMaps("b").Delete(ctx, podsummary.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("b", map[string]string{"total": "1", "Succeeded": "1"})
}

func TestSummarize(t *testing.T) {
	cases := []struct {
		name string
		pods []*corev1.Pod
		want map[string]string
	}{
		{name: "none", want: map[string]string{"total": "0"}},
		{name: "no phase counts as pending", pods: []*corev1.Pod{pod("a", "x", "")}, want: map[string]string{"total": "1", "Pending": "1"}},
		{name: "mixed", pods: []*corev1.Pod{pod("a", "x", corev1.PodRunning), pod("a", "y", corev1.PodRunning), pod("a", "z", corev1.PodFailed)},
			want: map[string]string{"total": "3", "Running": "2", "Failed": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := podsummary.Summarize(tc.pods); !maps.Equal(got, tc.want) {
				t.Errorf("Summarize() = %v, want %v", got, tc.want)
			}
		})
	}
}
