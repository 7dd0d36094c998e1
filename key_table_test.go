package cache

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestKeyTable drives a keyTable the way storeState does (slots stay dense: a removed key's
// slot is refilled from the last one) against a map, through growth, wrap-around probing and
// shrinking, and checks every key after every step.
func TestKeyTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   int // distinct keys drawn from
		steps  int
		insert float64 // chance that a step adds (or finds) a key rather than removes one
	}{
		{name: "tiny table, heavy churn", keys: 12, steps: 5000, insert: 0.5},
		{name: "grows to 20k", keys: 20000, steps: 30000, insert: 0.9},
		{name: "grows then shrinks", keys: 5000, steps: 40000, insert: 0.35},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.keys)))
			var tab keyTable
			var keys []string
			model := map[string]int{}
			// Fill first when the test is about shrinking.
			if tc.insert < 0.5 {
				for i := range tc.keys {
					k := "k" + strconv.Itoa(i)
					tab.insert(k, len(keys))
					model[k] = len(keys)
					keys = append(keys, k)
				}
			}
			for step := range tc.steps {
				k := "k" + strconv.Itoa(rng.IntN(tc.keys))
				if rng.Float64() < tc.insert {
					if _, ok := model[k]; !ok {
						tab.insert(k, len(keys))
						model[k] = len(keys)
						keys = append(keys, k)
					}
				} else if slot, ok := model[k]; ok {
					tab.removeAt(tab.find(keys, k))
					delete(model, k)
					last := len(keys) - 1
					if slot != last {
						tab.setSlotAt(tab.find(keys, keys[last]), slot)
						keys[slot] = keys[last]
						model[keys[slot]] = slot
					}
					keys = keys[:last]
				}
				if tab.len() != len(model) {
					t.Fatalf("step %d: table holds %d keys, want %d", step, tab.len(), len(model))
				}
				if step%97 == 0 || tc.keys < 100 {
					for i := range tc.keys {
						k := "k" + strconv.Itoa(i)
						got, ok := tab.get(keys, k)
						want, wantOK := model[k]
						if ok != wantOK || got != want {
							t.Fatalf("step %d: get(%q) = %d, %v; want %d, %v", step, k, got, ok, want, wantOK)
						}
					}
				}
			}
			if tc.insert < 0.5 && len(tab.entries) > keyTableSizeFor(len(model))*4 && len(tab.entries) > 1024 {
				t.Errorf("table of %d entries for %d keys did not shrink", len(tab.entries), len(model))
			}
		})
	}
}
