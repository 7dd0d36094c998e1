package cache

import (
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"
)

func TestExpirationCache(t *testing.T) {
	const ttl = time.Minute
	cases := []struct {
		name string
		ttl  time.Duration
		// ops runs with a, b added at t0; it may step the clock.
		ops       func(s Store, clk *testingclock.FakeClock) error
		wantErr   bool
		wantList  []string // names List returns
		wantKeys  []string // ListKeys before List (List drops expired entries)
		wantAfter []string // ListKeys after List
	}{
		{"fresh entries are returned", ttl, func(Store, *testingclock.FakeClock) error { return nil },
			false, []string{"a", "b"}, []string{"ns/a", "ns/b"}, []string{"ns/a", "ns/b"}},
		{"old entries expire lazily", ttl, func(_ Store, clk *testingclock.FakeClock) error {
			clk.Step(ttl + time.Second)
			return nil
		}, false, nil, []string{"ns/a", "ns/b"}, []string{}},
		{"exactly ttl old is not expired", ttl, func(_ Store, clk *testingclock.FakeClock) error {
			clk.Step(ttl)
			return nil
		}, false, []string{"a", "b"}, []string{"ns/a", "ns/b"}, []string{"ns/a", "ns/b"}},
		{"update refreshes the timestamp", ttl, func(s Store, clk *testingclock.FakeClock) error {
			clk.Step(ttl / 2)
			err := s.Update(storeTestPod("ns", "a", "5"))
			clk.Step(ttl/2 + time.Second)
			return err
		}, false, []string{"a"}, []string{"ns/a", "ns/b"}, []string{"ns/a"}},
		{"zero ttl never expires", 0, func(_ Store, clk *testingclock.FakeClock) error {
			clk.Step(1000 * time.Hour)
			return nil
		}, false, []string{"a", "b"}, []string{"ns/a", "ns/b"}, []string{"ns/a", "ns/b"}},
		{"replace stamps everything now", ttl, func(s Store, clk *testingclock.FakeClock) error {
			clk.Step(ttl / 2)
			err := s.Replace([]interface{}{storeTestPod("ns", "b", "6"), storeTestPod("ns", "c", "6")}, "6")
			clk.Step(ttl/2 + time.Second)
			return err
		}, false, []string{"b", "c"}, []string{"ns/b", "ns/c"}, []string{"ns/b", "ns/c"}},
		{"delete", ttl, func(s Store, _ *testingclock.FakeClock) error {
			return s.Delete(storeTestPod("ns", "a", "7"))
		}, false, []string{"b"}, []string{"ns/b"}, []string{"ns/b"}},
		{"bad key on add", ttl, func(s Store, _ *testingclock.FakeClock) error { return s.Add(nil) },
			true, []string{"a", "b"}, []string{"ns/a", "ns/b"}, []string{"ns/a", "ns/b"}},
		{"bad key on replace changes nothing", ttl, func(s Store, _ *testingclock.FakeClock) error {
			return s.Replace([]interface{}{storeTestNoMeta{}}, "9")
		}, true, []string{"a", "b"}, []string{"ns/a", "ns/b"}, []string{"ns/a", "ns/b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1000, 0))
			s := NewExpirationStore(MetaNamespaceKeyFunc, &TTLPolicy{TTL: tc.ttl, Clock: clk})
			_ = s.Add(storeTestPod("ns", "a", "1"))
			_ = s.Add(storeTestPod("ns", "b", "2"))
			err := tc.ops(s, clk)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want one: %v", err, tc.wantErr)
			}
			if err != nil && !errors.As(err, &KeyError{}) {
				t.Errorf("error %v is not a KeyError", err)
			}
			keys := s.ListKeys()
			slices.Sort(keys)
			if !slices.Equal(keys, tc.wantKeys) {
				t.Errorf("ListKeys = %q, want %q", keys, tc.wantKeys)
			}
			var names []string
			for _, o := range s.List() {
				names = append(names, o.(*storeTestObj).Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.wantList) {
				t.Errorf("List = %q, want %q", names, tc.wantList)
			}
			after := s.ListKeys()
			slices.Sort(after)
			if !slices.Equal(after, tc.wantAfter) && !(len(after) == 0 && len(tc.wantAfter) == 0) {
				t.Errorf("ListKeys after List = %q, want %q", after, tc.wantAfter)
			}
			for _, name := range tc.wantList {
				if _, ok, err := s.GetByKey("ns/" + name); !ok || err != nil {
					t.Errorf("GetByKey(ns/%s) = %v, %v", name, ok, err)
				}
				if _, ok, err := s.Get(storeTestPod("ns", name, "")); !ok || err != nil {
					t.Errorf("Get(%s) = %v, %v", name, ok, err)
				}
			}
			if _, _, err := s.Get(nil); err == nil {
				t.Error("Get(nil) did not fail")
			}
			if err := s.Resync(); err != nil {
				t.Errorf("Resync = %v", err)
			}
		})
	}
}

func TestExpirationCacheGetExpires(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := NewExpirationStore(MetaNamespaceKeyFunc, &TTLPolicy{TTL: time.Second, Clock: clk})
	_ = s.Add(storeTestPod("ns", "a", "1"))
	clk.Step(2 * time.Second)
	if _, ok, _ := s.GetByKey("ns/a"); ok {
		t.Error("expired entry returned")
	}
	if keys := s.ListKeys(); len(keys) != 0 {
		t.Errorf("expired entry still stored: %q", keys)
	}
}

func TestExpirationCacheResourceVersion(t *testing.T) {
	cases := []struct {
		name string
		call func(s Store)
		want string
	}{
		{"add", func(s Store) { _ = s.Add(storeTestPod("ns", "a", "3")) }, "3"},
		{"delete", func(s Store) { _ = s.Delete(storeTestPod("ns", "a", "4")) }, "4"},
		{"replace", func(s Store) { _ = s.Replace(nil, "5") }, "5"},
		{"bookmark", func(s Store) { s.Bookmark("6") }, "6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewTTLStore(MetaNamespaceKeyFunc, time.Hour)
			tc.call(s)
			if got := s.LastStoreSyncResourceVersion(); got != tc.want {
				t.Errorf("= %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTTLPolicy(t *testing.T) {
	now := time.Unix(1000, 0)
	cases := []struct {
		name  string
		p     *TTLPolicy
		stamp time.Time
		want  bool
	}{
		{"young", &TTLPolicy{TTL: time.Minute, Clock: testingclock.NewFakeClock(now)}, now.Add(-time.Second), false},
		{"old", &TTLPolicy{TTL: time.Minute, Clock: testingclock.NewFakeClock(now)}, now.Add(-2 * time.Minute), true},
		{"negative ttl", &TTLPolicy{TTL: -1, Clock: testingclock.NewFakeClock(now)}, now.Add(-time.Hour), false},
		{"nil clock is the real clock", &TTLPolicy{TTL: time.Minute}, time.Now().Add(-time.Hour), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.IsExpired(&TimestampedEntry{Timestamp: tc.stamp}); got != tc.want {
				t.Errorf("IsExpired = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFakeExpirationStore(t *testing.T) {
	keyOfEntry := func(obj interface{}) (string, error) {
		return MetaNamespaceKeyFunc(obj.(*TimestampedEntry).Obj)
	}
	cases := []struct {
		name        string
		deletedKeys bool
		wantList    []string
		wantDeleted []string
		wantKeys    []string
	}{
		{"expired keys are reported", true, []string{"keep"}, []string{"ns/drop"}, []string{"ns/keep"}},
		{"without a channel nothing is deleted", false, []string{"keep"}, nil, []string{"ns/drop", "ns/keep"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ch chan string
			if tc.deletedKeys {
				ch = make(chan string, 10)
			}
			policy := &FakeExpirationPolicy{NeverExpire: sets.New("ns/keep"), RetrieveKeyFunc: keyOfEntry}
			s := NewFakeExpirationStore(MetaNamespaceKeyFunc, ch, policy, testingclock.NewFakeClock(time.Unix(0, 0)))
			_ = s.Add(storeTestPod("ns", "keep", "1"))
			_ = s.Add(storeTestPod("ns", "drop", "1"))
			var names []string
			for _, o := range s.List() {
				names = append(names, o.(*storeTestObj).Name)
			}
			if !slices.Equal(names, tc.wantList) {
				t.Errorf("List = %q, want %q", names, tc.wantList)
			}
			var deleted []string
			for len(ch) > 0 {
				deleted = append(deleted, <-ch)
			}
			if !slices.Equal(deleted, tc.wantDeleted) {
				t.Errorf("deleted keys %q, want %q", deleted, tc.wantDeleted)
			}
			keys := s.ListKeys()
			slices.Sort(keys)
			if !slices.Equal(keys, tc.wantKeys) {
				t.Errorf("ListKeys = %q, want %q", keys, tc.wantKeys)
			}
		})
	}
}
