package cache

import (
	"slices"
	"testing"
)

func TestResourceEventHandlerAdapters(t *testing.T) {
	a1, a2 := fifoTestObj("a", 1), fifoTestObj("a", 2)
	// call drives a handler through one notification of each kind.
	call := func(h ResourceEventHandler) {
		h.OnAdd(a1, true)
		h.OnUpdate(a1, a2)
		h.OnDelete(a2)
	}
	cases := []struct {
		name  string
		build func(rec *ctrlTestRecorder) ResourceEventHandler
		want  []string
	}{
		{
			name: "Funcs forwards every notification, without isInInitialList",
			build: func(rec *ctrlTestRecorder) ResourceEventHandler {
				return ResourceEventHandlerFuncs{
					AddFunc:    func(obj interface{}) { rec.OnAdd(obj, false) },
					UpdateFunc: rec.OnUpdate,
					DeleteFunc: rec.OnDelete,
				}
			},
			want: []string{"add a=1", "update a=1 -> a=2", "delete a=2"},
		},
		{
			name:  "Funcs with nil functions ignores notifications",
			build: func(*ctrlTestRecorder) ResourceEventHandler { return ResourceEventHandlerFuncs{} },
			want:  nil,
		},
		{
			name: "DetailedFuncs passes isInInitialList",
			build: func(rec *ctrlTestRecorder) ResourceEventHandler {
				return ResourceEventHandlerDetailedFuncs{AddFunc: rec.OnAdd, UpdateFunc: rec.OnUpdate, DeleteFunc: rec.OnDelete}
			},
			want: []string{"add a=1 initial", "update a=1 -> a=2", "delete a=2"},
		},
		{
			name:  "DetailedFuncs with nil functions ignores notifications",
			build: func(*ctrlTestRecorder) ResourceEventHandler { return ResourceEventHandlerDetailedFuncs{} },
			want:  nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &ctrlTestRecorder{}
			call(tc.build(rec))
			if !slices.Equal(rec.events, tc.want) {
				t.Errorf("events %q, want %q", rec.events, tc.want)
			}
		})
	}
}

func TestFilteringResourceEventHandler(t *testing.T) {
	in, out := fifoTestObj("in", 1), fifoTestObj("out", 1)
	inTomb := DeletedFinalStateUnknown{Key: "in", Obj: in}
	// accept lets through objects named "in", and tombstones whose key is "in".
	accept := func(obj interface{}) bool {
		switch o := obj.(type) {
		case *fifoTestItem:
			return o.Name == "in"
		case DeletedFinalStateUnknown:
			return o.Key == "in"
		}
		return false
	}
	cases := []struct {
		name string
		call func(h ResourceEventHandler)
		want []string
	}{
		{"add accepted", func(h ResourceEventHandler) { h.OnAdd(in, true) }, []string{"add in=1 initial"}},
		{"add rejected", func(h ResourceEventHandler) { h.OnAdd(out, true) }, nil},
		{"update both accepted", func(h ResourceEventHandler) { h.OnUpdate(in, in) }, []string{"update in=1 -> in=1"}},
		{"update starts passing: add, not initial", func(h ResourceEventHandler) { h.OnUpdate(out, in) }, []string{"add in=1"}},
		{"update stops passing: delete of the old object", func(h ResourceEventHandler) { h.OnUpdate(in, out) }, []string{"delete in=1"}},
		{"update both rejected", func(h ResourceEventHandler) { h.OnUpdate(out, out) }, nil},
		{"delete accepted", func(h ResourceEventHandler) { h.OnDelete(in) }, []string{"delete in=1"}},
		{"delete rejected", func(h ResourceEventHandler) { h.OnDelete(out) }, nil},
		{"tombstone goes to the filter as is", func(h ResourceEventHandler) { h.OnDelete(inTomb) }, []string{"delete tomb in=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &ctrlTestRecorder{}
			tc.call(FilteringResourceEventHandler{FilterFunc: accept, Handler: rec})
			if !slices.Equal(rec.events, tc.want) {
				t.Errorf("events %q, want %q", rec.events, tc.want)
			}
		})
	}
}
