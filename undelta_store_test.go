package cache

import (
	"slices"
	"testing"
)

func TestUndeltaStore(t *testing.T) {
	cases := []struct {
		name      string
		call      func(u *UndeltaStore) error
		wantErr   bool
		wantPush  [][]string // names in each push, sorted
		nilPusher bool
	}{
		{"add", func(u *UndeltaStore) error { return u.Add(storeTestPod("ns", "b", "1")) }, false, [][]string{{"a", "b"}}, false},
		{"update", func(u *UndeltaStore) error { return u.Update(storeTestPod("ns", "a", "2")) }, false, [][]string{{"a"}}, false},
		{"delete", func(u *UndeltaStore) error { return u.Delete(storeTestPod("ns", "a", "2")) }, false, [][]string{{}}, false},
		{"replace", func(u *UndeltaStore) error {
			return u.Replace([]interface{}{storeTestPod("ns", "x", "1"), storeTestPod("ns", "y", "1")}, "3")
		}, false, [][]string{{"x", "y"}}, false},
		{"failed add pushes nothing", func(u *UndeltaStore) error { return u.Add(nil) }, true, nil, false},
		{"failed update pushes nothing", func(u *UndeltaStore) error { return u.Update(storeTestNoMeta{}) }, true, nil, false},
		{"failed delete pushes nothing", func(u *UndeltaStore) error { return u.Delete(nil) }, true, nil, false},
		{"failed replace pushes nothing", func(u *UndeltaStore) error {
			return u.Replace([]interface{}{nil}, "1")
		}, true, nil, false},
		{"nil PushFunc", func(u *UndeltaStore) error { return u.Add(storeTestPod("ns", "b", "1")) }, false, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var pushes [][]string
			push := func(objs []interface{}) {
				names := []string{}
				for _, o := range objs {
					names = append(names, o.(*storeTestObj).Name)
				}
				slices.Sort(names)
				pushes = append(pushes, names)
			}
			u := NewUndeltaStore(nil, MetaNamespaceKeyFunc)
			_ = u.Add(storeTestPod("ns", "a", "1"))
			if !tc.nilPusher {
				u.PushFunc = push
			}
			err := tc.call(u)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want one: %v", err, tc.wantErr)
			}
			if len(pushes) != len(tc.wantPush) {
				t.Fatalf("pushes %q, want %q", pushes, tc.wantPush)
			}
			for i := range pushes {
				if !slices.Equal(pushes[i], tc.wantPush[i]) {
					t.Errorf("push %d = %q, want %q", i, pushes[i], tc.wantPush[i])
				}
			}
		})
	}
}

func TestFakeCustomStore(t *testing.T) {
	var calls []string
	rec := func(name string) { calls = append(calls, name) }
	full := &FakeCustomStore{
		AddFunc:      func(interface{}) error { rec("Add"); return nil },
		UpdateFunc:   func(interface{}) error { rec("Update"); return nil },
		DeleteFunc:   func(interface{}) error { rec("Delete"); return nil },
		ListFunc:     func() []interface{} { rec("List"); return []interface{}{1} },
		ListKeysFunc: func() []string { rec("ListKeys"); return []string{"k"} },
		GetFunc:      func(interface{}) (interface{}, bool, error) { rec("Get"); return 1, true, nil },
		GetByKeyFunc: func(string) (interface{}, bool, error) { rec("GetByKey"); return 1, true, nil },
		ReplaceFunc:  func([]interface{}, string) error { rec("Replace"); return nil },
		ResyncFunc:   func() error { rec("Resync"); return nil },
		BookmarkFunc: func(string) { rec("Bookmark") },
		LastStoreSyncResourceVersionFunc: func() string {
			rec("LastStoreSyncResourceVersion")
			return "7"
		},
	}
	all := []string{"Add", "Update", "Delete", "List", "ListKeys", "Get", "GetByKey", "Replace", "Resync", "Bookmark", "LastStoreSyncResourceVersion"}
	cases := []struct {
		name      string
		store     *FakeCustomStore
		wantCalls []string
		wantFound bool
	}{
		{"every field is called", full, all, true},
		{"nil fields do nothing", &FakeCustomStore{}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			var s Store = tc.store
			_ = s.Add(1)
			_ = s.Update(1)
			_ = s.Delete(1)
			list := s.List()
			keys := s.ListKeys()
			_, found, _ := s.Get(1)
			_, foundByKey, _ := s.GetByKey("k")
			_ = s.Replace(nil, "")
			_ = s.Resync()
			s.Bookmark("1")
			rv := s.LastStoreSyncResourceVersion()
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("calls %q, want %q", calls, tc.wantCalls)
			}
			if found != tc.wantFound || foundByKey != tc.wantFound || (len(list) > 0) != tc.wantFound || (len(keys) > 0) != tc.wantFound || (rv != "") != tc.wantFound {
				t.Errorf("results: found %v/%v, list %v, keys %v, rv %q", found, foundByKey, list, keys, rv)
			}
		})
	}
}
