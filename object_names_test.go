package cache

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestKeyFuncs(t *testing.T) {
	cases := []struct {
		name        string
		obj         interface{}
		wantKey     string
		wantErr     bool
		wantDelKey  string // DeletionHandlingMetaNamespaceKeyFunc
		wantDelErr  bool
		wantObjName ObjectName // DeletionHandlingObjectToName
	}{
		{"namespaced", storeTestPod("ns", "a", "1"), "ns/a", false, "ns/a", false, ObjectName{"ns", "a"}},
		{"cluster scoped", storeTestPod("", "a", "1"), "a", false, "a", false, ObjectName{"", "a"}},
		{"explicit key", ExplicitKey("x/y"), "x/y", false, "x/y", false, ObjectName{}},
		{"tombstone", DeletedFinalStateUnknown{Key: "ns/gone"}, "", true, "ns/gone", false, ObjectName{"ns", "gone"}},
		{"no metadata", storeTestNoMeta{}, "", true, "", true, ObjectName{}},
		{"nil", nil, "", true, "", true, ObjectName{}},
		// client-go panics on a nil pointer of a metadata type; kcache returns an error.
		{"nil pointer", (*storeTestObj)(nil), "", true, "", true, ObjectName{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := MetaNamespaceKeyFunc(tc.obj)
			if key != tc.wantKey || (err != nil) != tc.wantErr {
				t.Errorf("MetaNamespaceKeyFunc = %q, %v; want %q, error %v", key, err, tc.wantKey, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "object has no meta") {
				t.Errorf("error %q does not say why", err)
			}
			key, err = DeletionHandlingMetaNamespaceKeyFunc(tc.obj)
			if key != tc.wantDelKey || (err != nil) != tc.wantDelErr {
				t.Errorf("DeletionHandlingMetaNamespaceKeyFunc = %q, %v; want %q, error %v", key, err, tc.wantDelKey, tc.wantDelErr)
			}
			if _, isExplicit := tc.obj.(ExplicitKey); isExplicit {
				return // ObjectToName does not understand ExplicitKey
			}
			name, err := DeletionHandlingObjectToName(tc.obj)
			if name != tc.wantObjName || (err != nil) != tc.wantDelErr {
				t.Errorf("DeletionHandlingObjectToName = %v, %v; want %v, error %v", name, err, tc.wantObjName, tc.wantDelErr)
			}
			if err == nil && name.String() != tc.wantDelKey {
				t.Errorf("ObjectName.String = %q, want the key %q", name.String(), tc.wantDelKey)
			}
		})
	}
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	cases := []struct {
		key      string
		wantNS   string
		wantName string
		wantErr  bool
	}{
		{"a", "", "a", false},
		{"ns/a", "ns", "a", false},
		{"", "", "", false},
		{"/a", "", "a", false},
		{"ns/", "ns", "", false},
		{"a/b/c", "", "", true},
		{"//", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			ns, name, err := SplitMetaNamespaceKey(tc.key)
			if ns != tc.wantNS || name != tc.wantName || (err != nil) != tc.wantErr {
				t.Errorf("= %q, %q, %v; want %q, %q, error %v", ns, name, err, tc.wantNS, tc.wantName, tc.wantErr)
			}
			if err != nil && err.Error() != fmt.Sprintf("unexpected key format: %q", tc.key) {
				t.Errorf("error text %q", err)
			}
			parsed, err2 := ParseObjectName(tc.key)
			if parsed != (ObjectName{tc.wantNS, tc.wantName}) || (err2 != nil) != tc.wantErr {
				t.Errorf("ParseObjectName = %v, %v", parsed, err2)
			}
		})
	}
}

func TestObjectName(t *testing.T) {
	cases := []struct {
		name string
		on   ObjectName
		want string
	}{
		{"namespaced", NewObjectName("ns", "a"), "ns/a"},
		{"cluster scoped", NewObjectName("", "a"), "a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.on.String(); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
			ns, n := tc.on.Parts()
			if ns != tc.on.Namespace || n != tc.on.Name {
				t.Errorf("Parts = %q, %q", ns, n)
			}
			nn := tc.on.AsNamespacedName()
			if nn != (types.NamespacedName{Namespace: ns, Name: n}) || NamespacedNameAsObjectName(nn) != tc.on {
				t.Errorf("NamespacedName round trip: %v", nn)
			}
			obj := storeTestPod(ns, n, "1")
			if got, err := ObjectToName(obj); err != nil || got != tc.on {
				t.Errorf("ObjectToName = %v, %v", got, err)
			}
			if got := MetaObjectToName(obj); got != tc.on {
				t.Errorf("MetaObjectToName = %v", got)
			}
		})
	}
}

func TestKeyErrorUnwraps(t *testing.T) {
	cause := errors.New("cause")
	err := error(KeyError{Obj: "thing", Err: cause})
	if !errors.Is(err, cause) {
		t.Error("KeyError does not unwrap to its cause")
	}
	if want := "couldn't create key for object thing: cause"; err.Error() != want {
		t.Errorf("Error = %q, want %q", err.Error(), want)
	}
}
