package main

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/kcache/cache/sharding"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestSelectionFlag checks -selection: labels by default, hash on request (the ConfigMaps keyed
// by UID, the selection logged from the shard), and anything else refused.
func TestSelectionFlag(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want       sharding.Selection
		clientSide bool
		fails      bool
	}{
		{nil, sharding.SelectByLabels, false, false},
		{[]string{"-selection", "labels"}, sharding.SelectByLabels, false, false},
		{[]string{"-selection", "hash"}, sharding.SelectByHash, false, false},
		{[]string{"-selection", "hash", "-client-side"}, sharding.SelectByHash, true, false},
		{[]string{"-selection", "ranges"}, 0, false, true},
	} {
		_, f, err := parseFlags(flag.ContinueOnError, tc.args)
		if (err != nil) != tc.fails {
			t.Fatalf("%v: error %v", tc.args, err)
		}
		if tc.fails {
			continue
		}
		if f.selection != tc.want || f.clientSide != tc.clientSide {
			t.Fatalf("%v: selection %v, client-side %v", tc.args, f.selection, f.clientSide)
		}
		shard, err := newShard(&rest.Config{Host: "https://127.0.0.1:1"}, f)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if shard.Selection() != tc.want {
			t.Fatalf("%v: the shard selects by %v", tc.args, shard.Selection())
		}
	}
}
