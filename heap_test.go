package cache

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
)

// heapTestLess orders storeTestObjs by Value.
func heapTestLess(a, b interface{}) bool {
	return a.(*storeTestObj).Value < b.(*storeTestObj).Value
}

func heapTestObj(name, value string) *storeTestObj {
	return &storeTestObj{ObjectMeta: storeTestPod("ns", name, "1").ObjectMeta, Value: value}
}

func TestHeap(t *testing.T) {
	cases := []struct {
		name      string
		ops       func(h *Heap) error
		wantErr   string
		wantOrder []string // names in pop order after ops (Close is then called)
	}{
		{"pops in order", func(h *Heap) error {
			_ = h.Add(heapTestObj("a", "3"))
			_ = h.Add(heapTestObj("b", "1"))
			return h.Add(heapTestObj("c", "2"))
		}, "", []string{"b", "c", "a"}},
		{"add replaces and reorders", func(h *Heap) error {
			_ = h.Add(heapTestObj("a", "3"))
			_ = h.Add(heapTestObj("b", "1"))
			return h.Update(heapTestObj("b", "9"))
		}, "", []string{"a", "b"}},
		{"add if not present keeps the first", func(h *Heap) error {
			_ = h.Add(heapTestObj("a", "3"))
			_ = h.Add(heapTestObj("b", "2"))
			return h.AddIfNotPresent(heapTestObj("a", "1"))
		}, "", []string{"b", "a"}},
		{"bulk add", func(h *Heap) error {
			return h.BulkAdd([]interface{}{heapTestObj("a", "2"), heapTestObj("b", "1")})
		}, "", []string{"b", "a"}},
		{"bulk add with a bad key adds nothing", func(h *Heap) error {
			return h.BulkAdd([]interface{}{heapTestObj("a", "2"), storeTestNoMeta{}})
		}, "couldn't create key", nil},
		{"add without metadata", func(h *Heap) error { return h.Add(nil) }, "couldn't create key", nil},
		{"delete", func(h *Heap) error {
			_ = h.Add(heapTestObj("a", "2"))
			_ = h.Add(heapTestObj("b", "1"))
			return h.Delete(heapTestObj("b", ""))
		}, "", []string{"a"}},
		{"delete of a missing object", func(h *Heap) error {
			return h.Delete(heapTestObj("zz", ""))
		}, "object not found", nil},
		{"writes after close fail", func(h *Heap) error {
			_ = h.Add(heapTestObj("a", "1"))
			h.Close()
			return h.Add(heapTestObj("b", "0"))
		}, "heap is closed", []string{"a"}},
		{"bulk writes after close fail", func(h *Heap) error {
			h.Close()
			return h.BulkAdd(nil)
		}, "heap is closed", nil},
		{"add if not present after close fails", func(h *Heap) error {
			h.Close()
			return h.AddIfNotPresent(heapTestObj("b", "0"))
		}, "heap is closed", nil},
		{"delete after close works", func(h *Heap) error {
			_ = h.Add(heapTestObj("a", "1"))
			_ = h.Add(heapTestObj("b", "2"))
			h.Close()
			return h.Delete(heapTestObj("a", ""))
		}, "", []string{"b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHeap(MetaNamespaceKeyFunc, heapTestLess)
			err := tc.ops(h)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if n := len(h.List()); n != len(tc.wantOrder) {
				t.Errorf("List has %d objects, want %d", n, len(tc.wantOrder))
			}
			keys := h.ListKeys()
			slices.Sort(keys)
			want := make([]string, 0, len(tc.wantOrder))
			for _, name := range tc.wantOrder {
				want = append(want, "ns/"+name)
				if _, ok, err := h.GetByKey("ns/" + name); !ok || err != nil {
					t.Errorf("GetByKey(ns/%s) = %v, %v", name, ok, err)
				}
				if _, ok, err := h.Get(heapTestObj(name, "")); !ok || err != nil {
					t.Errorf("Get(%s) = %v, %v", name, ok, err)
				}
			}
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("ListKeys = %q, want %q", keys, want)
			}
			h.Close()
			var got []string
			for {
				obj, err := h.Pop()
				if err != nil {
					if err.Error() != "heap is closed" {
						t.Fatalf("Pop error %v", err)
					}
					break
				}
				got = append(got, obj.(*storeTestObj).Name)
			}
			if !slices.Equal(got, tc.wantOrder) {
				t.Errorf("popped %q, want %q", got, tc.wantOrder)
			}
			if !h.IsClosed() {
				t.Error("IsClosed = false after Close")
			}
			if _, _, err := h.Get(nil); !errors.As(err, &KeyError{}) {
				t.Errorf("Get(nil) error = %v, want a KeyError", err)
			}
		})
	}
}

func TestHeapPopBlocks(t *testing.T) {
	cases := []struct {
		name    string
		wake    func(h *Heap)
		wantObj bool
	}{
		{"woken by add", func(h *Heap) { _ = h.Add(heapTestObj("a", "1")) }, true},
		{"woken by bulk add", func(h *Heap) { _ = h.BulkAdd([]interface{}{heapTestObj("a", "1")}) }, true},
		{"woken by close", func(h *Heap) { h.Close() }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := NewHeap(MetaNamespaceKeyFunc, heapTestLess)
				type result struct {
					obj interface{}
					err error
				}
				results := make(chan result, 2)
				for range 2 {
					go func() {
						obj, err := h.Pop()
						results <- result{obj, err}
					}()
				}
				synctest.Wait() // both Pops are blocked
				if len(results) != 0 {
					t.Fatal("Pop returned on an empty heap")
				}
				tc.wake(h)
				synctest.Wait()
				if tc.wantObj {
					// One Pop gets the object; the other keeps waiting until Close.
					if len(results) != 1 {
						t.Fatalf("%d Pops returned, want 1", len(results))
					}
					if r := <-results; r.err != nil || r.obj.(*storeTestObj).Name != "a" {
						t.Errorf("Pop = %v, %v", r.obj, r.err)
					}
					h.Close()
					synctest.Wait()
				}
				for len(results) > 0 {
					if r := <-results; r.err == nil || r.err.Error() != "heap is closed" {
						t.Errorf("Pop after close = %v, %v", r.obj, r.err)
					}
				}
			})
		})
	}
}
