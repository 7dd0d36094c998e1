package testing_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fcache "github.com/kcache/cache/testing"
)

// BenchmarkList10k lists 10,000 ConfigMaps, in one request and in pages of 500. Every list
// deep-copies what it returns, as a real client's decoding would allocate it.
func BenchmarkList10k(b *testing.B) {
	const n = 10_000
	s := fcache.New(fcache.Options{NewListFunc: func() runtime.Object { return &v1.ConfigMapList{} }})
	for i := range n {
		s.Add(&v1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"app": "bench"}},
			Data:       map[string]string{"key": "value"},
		})
	}
	cases := []struct {
		name  string
		limit int64
	}{
		{name: "whole", limit: 0},
		{name: "pages-of-500", limit: 500},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				opts := metav1.ListOptions{Limit: tc.limit}
				got := 0
				for {
					obj, err := s.List(opts)
					if err != nil {
						b.Fatal(err)
					}
					got += meta.LenList(obj)
					lm, _ := meta.ListAccessor(obj)
					if lm.GetContinue() == "" {
						break
					}
					opts.Continue = lm.GetContinue()
				}
				if got != n {
					b.Fatalf("listed %d, want %d", got, n)
				}
			}
		})
	}
}

// BenchmarkWatchThroughput measures changes per second from Add to a watch consumer: each
// iteration records one change and receives its event.
func BenchmarkWatchThroughput(b *testing.B) {
	cases := []struct {
		name     string
		watchers int
		selector string
	}{
		{name: "one-watcher", watchers: 1},
		{name: "four-watchers", watchers: 4},
		{name: "label-selector", watchers: 1, selector: "app=bench"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := fcache.NewFakeControllerSource()
			done := make(chan int, tc.watchers)
			for range tc.watchers {
				w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0", LabelSelector: tc.selector})
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					n := 0
					for range w.ResultChan() {
						n++
					}
					done <- n
				}()
			}
			obj := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hot", Labels: map[string]string{"app": "bench"}}}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				s.Modify(obj)
				n++
			}
			s.Shutdown()
			for range tc.watchers {
				if got := <-done; got != n {
					b.Fatalf("a watcher got %d events, want %d", got, n)
				}
			}
		})
	}
}
