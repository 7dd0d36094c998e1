package sharding

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestStateOf(t *testing.T) {
	l, err := NewLabels("r")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		labels   map[string]string
		shard    string
		draining bool
	}{
		{nil, "", false},
		{map[string]string{"other": "x"}, "", false},
		{map[string]string{l.Shard(): "m1"}, "m1", false},
		{map[string]string{l.Shard(): "m1", l.Drain(): "true"}, "m1", true},
		{map[string]string{l.Drain(): "true"}, "", true},
	}
	for _, tc := range cases {
		shard, draining := l.stateOf(tc.labels)
		if shard != tc.shard || draining != tc.draining {
			t.Errorf("stateOf(%v) = %q, %v; want %q, %v", tc.labels, shard, draining, tc.shard, tc.draining)
		}
	}
}

func TestActionPatch(t *testing.T) {
	l, err := NewLabels("r")
	if err != nil {
		t.Fatal(err)
	}
	labels := func(lbls map[string]interface{}) map[string]interface{} {
		return map[string]interface{}{"metadata": map[string]interface{}{"resourceVersion": "7", "labels": lbls}}
	}
	cases := []struct {
		a    Action
		want map[string]interface{} // nil: no patch
	}{
		{Action{Kind: AssignTo, To: "m2"}, labels(map[string]interface{}{l.Shard(): "m2", l.Drain(): nil})},
		{Action{Kind: Reassign, From: "m1", To: "m2"}, labels(map[string]interface{}{l.Shard(): "m2", l.Drain(): nil})},
		{Action{Kind: DrainFrom, From: "m1", To: "m2"}, labels(map[string]interface{}{l.Drain(): "true"})},
		{Action{Kind: None, From: "m1"}, nil},
		{Action{Kind: Wait, From: "m1"}, nil},
	}
	for _, tc := range cases {
		body, ok, err := l.actionPatch(tc.a, "7")
		if err != nil {
			t.Fatal(err)
		}
		if ok != (tc.want != nil) {
			t.Fatalf("actionPatch(%+v): ok = %v", tc.a, ok)
		}
		if !ok {
			continue
		}
		var got map[string]interface{}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("actionPatch(%+v) = %s, want %v", tc.a, body, tc.want)
		}
	}
}

func TestAcknowledgePatch(t *testing.T) {
	l, err := NewLabels("my-ring")
	if err != nil {
		t.Fatal(err)
	}
	body, err := l.acknowledgePatch("m1", "42")
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	// The label keys contain '/', which a JSON pointer escapes as "~1".
	want := []map[string]string{
		{"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
		{"op": "test", "path": "/metadata/labels/shard.sharding.kcache.dev~1my-ring", "value": "m1"},
		{"op": "test", "path": "/metadata/labels/drain.sharding.kcache.dev~1my-ring", "value": "true"},
		{"op": "remove", "path": "/metadata/labels/shard.sharding.kcache.dev~1my-ring"},
		{"op": "remove", "path": "/metadata/labels/drain.sharding.kcache.dev~1my-ring"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("acknowledgePatch = %s, want %v", body, want)
	}
	// Without a resourceVersion only the labels are tested.
	if body, err = l.acknowledgePatch("m1", ""); err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("acknowledgePatch without a resourceVersion = %s, want %v", body, want[1:])
	}
	if p := labelPointer("a~b/c"); p != "/metadata/labels/a~0b~1c" {
		t.Fatalf("labelPointer(a~b/c) = %q", p)
	}
}
