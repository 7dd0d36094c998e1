package cache

import (
	"slices"
	"strings"
	"testing"
)

// TestThreadSafeStoreInterleavedChanges covers the paths where a change lands between a write's
// unlocked work (index values, Replace's new content) and its locked part.
func TestThreadSafeStoreInterleavedChanges(t *testing.T) {
	val := func(name, value string) *storeTestObj {
		o := storeTestPod("ns", name, "1", "app="+value)
		o.Value = value
		return o
	}
	cases := []struct {
		name string
		// meanwhile is what happens concurrently, run once by the hook.
		meanwhile func(c *threadSafeMap)
		// write is the write that gets interleaved.
		write func(c *threadSafeMap) error
		// wantErr is a substring of write's error, or "" for success.
		wantErr string
		// want maps keys to their Value afterwards.
		want map[string]string
		// wantLabel maps label index values to keys, checked when the label index exists.
		wantLabel map[string][]string
	}{
		{
			name:      "update while an index is added",
			meanwhile: func(c *threadSafeMap) { _ = c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			write:     func(c *threadSafeMap) error { return c.update("k1", val("k1", "new")) },
			want:      map[string]string{"k0": "zero", "k1": "new"},
			wantLabel: map[string][]string{"zero": {"k0"}, "new": {"k1"}},
		},
		{
			name:      "update that the added index rejects",
			meanwhile: func(c *threadSafeMap) { _ = c.AddIndexers(Indexers{"value": storeTestFailingIndexFunc}) },
			write:     func(c *threadSafeMap) error { return c.update("k0", val("k0", "bad")) },
			wantErr:   `on index "value"`,
			want:      map[string]string{"k0": "zero"},
		},
		{
			name:      "replace while an index is added",
			meanwhile: func(c *threadSafeMap) { _ = c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			write: func(c *threadSafeMap) error {
				return c.replace([]string{"k1", "k2", "k1"}, []interface{}{val("k1", "a"), val("k2", "b"), val("k1", "c")}, "5")
			},
			want:      map[string]string{"k1": "c", "k2": "b"},
			wantLabel: map[string][]string{"b": {"k2"}, "c": {"k1"}},
		},
		{
			name:      "replace wins over a write that landed first",
			meanwhile: func(c *threadSafeMap) { _ = c.update("k9", val("k9", "late")) },
			write: func(c *threadSafeMap) error {
				return c.replace([]string{"k1"}, []interface{}{val("k1", "a")}, "5")
			},
			want: map[string]string{"k1": "a"},
		},
		{
			name:      "a rejected object keeps the state it had at the swap",
			meanwhile: func(c *threadSafeMap) { _ = c.update("k0", val("k0", "meanwhile")) },
			write: func(c *threadSafeMap) error {
				return c.replace([]string{"k0", "k1"}, []interface{}{storeTestNoMeta{}, val("k1", "a")}, "5")
			},
			wantErr: "object has no meta",
			want:    map[string]string{"k0": "meanwhile", "k1": "a"},
		},
		{
			name:      "an index added while the store is written",
			meanwhile: func(c *threadSafeMap) { _ = c.update("k5", val("k5", "five")) },
			write:     func(c *threadSafeMap) error { return c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			want:      map[string]string{"k0": "zero", "k5": "five"},
			wantLabel: map[string][]string{"zero": {"k0"}, "five": {"k5"}},
		},
		{
			name:      "an index added while the store is replaced",
			meanwhile: func(c *threadSafeMap) { _ = c.replace([]string{"k7"}, []interface{}{val("k7", "seven")}, "3") },
			write:     func(c *threadSafeMap) error { return c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			want:      map[string]string{"k7": "seven"},
			wantLabel: map[string][]string{"seven": {"k7"}},
		},
		{
			name:      "an index added while the same name is added",
			meanwhile: func(c *threadSafeMap) { _ = c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			write:     func(c *threadSafeMap) error { return c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			wantErr:   "indexer conflict",
			want:      map[string]string{"k0": "zero"},
			wantLabel: map[string][]string{"zero": {"k0"}},
		},
		{
			name:      "an index added while a new object would fail it",
			meanwhile: func(c *threadSafeMap) { _ = c.update("k3", val("k3", "bad")) },
			write:     func(c *threadSafeMap) error { return c.AddIndexers(Indexers{"value": storeTestFailingIndexFunc}) },
			wantErr:   `key "k3" on index "value"`,
			want:      map[string]string{"k0": "zero", "k3": "bad"},
		},
		{
			name:      "transaction while an index is added",
			meanwhile: func(c *threadSafeMap) { _ = c.AddIndexers(Indexers{"label": storeTestLabelIndexFunc}) },
			write: func(c *threadSafeMap) error {
				if errs := c.transaction([]ThreadSafeStoreTransaction{
					{Transaction{Type: TransactionTypeAdd, Object: val("k1", "one")}, "k1"},
					{Transaction{Type: TransactionTypeDelete}, "k0"},
				}, nil); errs != nil {
					return errs[0]
				}
				return nil
			},
			want:      map[string]string{"k1": "one"},
			wantLabel: map[string][]string{"one": {"k1"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newThreadSafeMap(Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
			if err := c.update("k0", val("k0", "zero")); err != nil {
				t.Fatal(err)
			}
			c.unlockedHook = func() {
				c.unlockedHook = nil // once, and not for the concurrent change itself
				tc.meanwhile(c)
			}
			err := tc.write(c)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if c.unlockedHook != nil {
				t.Fatal("the write never reached its unlocked work")
			}
			got := map[string]string{}
			for _, key := range c.ListKeys() {
				obj, _ := c.Get(key)
				got[key] = obj.(*storeTestObj).Value
			}
			if len(got) != len(tc.want) {
				t.Errorf("content %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%q = %q, want %q", k, got[k], v)
				}
			}
			if _, hasLabel := c.GetIndexers()["label"]; hasLabel {
				for v, keys := range tc.wantLabel {
					if got, _ := c.IndexKeys("label", v); !slices.Equal(got, keys) {
						t.Errorf("label %q: %q, want %q", v, got, keys)
					}
				}
			} else if tc.wantLabel != nil {
				t.Error("label index missing")
			}
			storeTestCheckState(t, c)
		})
	}
}
