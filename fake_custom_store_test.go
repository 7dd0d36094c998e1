package cache

import (
	"errors"
	"testing"
)

// TestFakeCustomStore: every method calls its function field, and does nothing without one.
func TestFakeCustomStore(t *testing.T) {
	var calls []string
	errFake := errors.New("fake")
	set := &FakeCustomStore{
		AddFunc:                          func(interface{}) error { calls = append(calls, "Add"); return errFake },
		UpdateFunc:                       func(interface{}) error { calls = append(calls, "Update"); return errFake },
		DeleteFunc:                       func(interface{}) error { calls = append(calls, "Delete"); return errFake },
		ListFunc:                         func() []interface{} { calls = append(calls, "List"); return []interface{}{1} },
		ListKeysFunc:                     func() []string { calls = append(calls, "ListKeys"); return []string{"k"} },
		GetFunc:                          func(interface{}) (interface{}, bool, error) { calls = append(calls, "Get"); return 1, true, nil },
		GetByKeyFunc:                     func(string) (interface{}, bool, error) { calls = append(calls, "GetByKey"); return 1, true, nil },
		ReplaceFunc:                      func([]interface{}, string) error { calls = append(calls, "Replace"); return errFake },
		ResyncFunc:                       func() error { calls = append(calls, "Resync"); return errFake },
		BookmarkFunc:                     func(rv string) { calls = append(calls, "Bookmark "+rv) },
		LastStoreSyncResourceVersionFunc: func() string { calls = append(calls, "LastStoreSyncResourceVersion"); return "42" },
	}
	cases := []struct {
		name string
		call func(s *FakeCustomStore) (interface{}, error)
		want interface{} // result with set's functions; with none it is the zero value
	}{
		{"Add", func(s *FakeCustomStore) (interface{}, error) { return nil, s.Add(1) }, nil},
		{"Update", func(s *FakeCustomStore) (interface{}, error) { return nil, s.Update(1) }, nil},
		{"Delete", func(s *FakeCustomStore) (interface{}, error) { return nil, s.Delete(1) }, nil},
		{"Replace", func(s *FakeCustomStore) (interface{}, error) { return nil, s.Replace(nil, "1") }, nil},
		{"Resync", func(s *FakeCustomStore) (interface{}, error) { return nil, s.Resync() }, nil},
		{"List", func(s *FakeCustomStore) (interface{}, error) { return len(s.List()), nil }, 1},
		{"ListKeys", func(s *FakeCustomStore) (interface{}, error) { return len(s.ListKeys()), nil }, 1},
		{"Get", func(s *FakeCustomStore) (interface{}, error) { _, ok, err := s.Get(1); return ok, err }, true},
		{"GetByKey", func(s *FakeCustomStore) (interface{}, error) { _, ok, err := s.GetByKey("k"); return ok, err }, true},
		{"Bookmark 7", func(s *FakeCustomStore) (interface{}, error) { s.Bookmark("7"); return nil, nil }, nil},
		{"LastStoreSyncResourceVersion", func(s *FakeCustomStore) (interface{}, error) { return s.LastStoreSyncResourceVersion(), nil }, "42"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			got, err := tc.call(set)
			if len(calls) != 1 || calls[0] != tc.name {
				t.Fatalf("calls = %v, want [%s]", calls, tc.name)
			}
			wantErr := tc.want == nil && tc.name != "Bookmark 7"
			if (err != nil) != wantErr || (tc.want != nil && got != tc.want) {
				t.Fatalf("got %v, %v; want %v (error %v)", got, err, tc.want, wantErr)
			}
			got, err = tc.call(&FakeCustomStore{})
			if err != nil || (got != nil && got != 0 && got != false && got != "") {
				t.Fatalf("without a function: got %v, %v", got, err)
			}
		})
	}
}
