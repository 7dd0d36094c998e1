package sharding

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func controlledBy(ns, name, owner string) *metav1.ObjectMeta {
	yes := true
	return &metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{
		{Kind: "Other", Name: "not-the-controller"},
		{Kind: "ConfigMap", Name: owner, Controller: &yes},
	}}
}

func TestKeyFuncs(t *testing.T) {
	namespaced := &metav1.ObjectMeta{Namespace: "ns", Name: "a"}
	cluster := &metav1.ObjectMeta{Name: "node-1"}
	owned := controlledBy("ns", "a-secret", "a")
	cases := []struct {
		name string
		fn   KeyFunc
		obj  metav1.Object
		want string
	}{
		{"by name, namespaced", KeyByName, namespaced, "ns/a"},
		{"by name, cluster-scoped", KeyByName, cluster, "node-1"},
		{"by namespace", KeyByNamespace, namespaced, "ns"},
		{"by namespace, cluster-scoped", KeyByNamespace, cluster, "node-1"},
		{"by controller owner", KeyByControllerOwner, owned, "ns/a"},
		{"by controller owner, no controller", KeyByControllerOwner, namespaced, "ns/a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.fn(tc.obj); got != tc.want {
				t.Fatalf("key = %q, want %q", got, tc.want)
			}
		})
	}
	// The point of KeyByControllerOwner: owner and controlled object land together.
	ms := members(5)
	ownerAt, _ := Assign(KeyByName(namespaced), ms)
	ownedAt, _ := Assign(KeyByControllerOwner(owned), ms)
	if ownerAt != ownedAt {
		t.Fatalf("owner on %s, controlled object on %s", ownerAt, ownedAt)
	}
}

// TestControlledObjectRule checks the one rule for controlled objects: which are sharded with
// an owner resource, and the key they follow.
func TestControlledObjectRule(t *testing.T) {
	byNamespace := Resource{Kind: "ConfigMap", Key: KeyByNamespace}
	anyKind := Resource{}
	cases := []struct {
		name    string
		r       Resource
		obj     metav1.Object
		sharded bool
		key     string
	}{
		{"controlled by the owner kind", Resource{Kind: "ConfigMap"}, controlledBy("ns", "s", "a"), true, "ns/a"},
		{"controlled, the owner's key function", byNamespace, controlledBy("ns", "s", "a"), true, "ns"},
		{"controlled by another kind", Resource{Kind: "Widget"}, controlledBy("ns", "s", "a"), false, ""},
		{"no kind set: any controller", anyKind, controlledBy("ns", "s", "a"), true, "ns/a"},
		{"owner references without a controller", anyKind, &metav1.ObjectMeta{Namespace: "ns", Name: "s",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ConfigMap", Name: "a"}}}, false, ""},
		{"no owner", anyKind, &metav1.ObjectMeta{Namespace: "ns", Name: "s"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			owner, ok := tc.r.ownerOf(tc.obj)
			if ok != tc.sharded {
				t.Fatalf("sharded = %v, want %v", ok, tc.sharded)
			}
			if !ok {
				return
			}
			if got := tc.r.controlledKey(owner); got != tc.key {
				t.Fatalf("key = %q, want %q", got, tc.key)
			}
			if KeyByName(owner) != "ns/a" {
				t.Fatalf("owner identity %q, want ns/a", KeyByName(owner))
			}
		})
	}
}

func TestNewLabels(t *testing.T) {
	cases := []struct {
		ring    string
		wantErr bool
	}{
		{"web", false},
		{"my-ring-1", false},
		{"my.ring", true},
		{"Web", true},
		{"a_b", true},
		{strings.Repeat("r", 63), false},
		{"", true},
		{strings.Repeat("r", 64), true},
		{"-web", true},
		{"web/x", true},
		{"we b", true},
	}
	for _, tc := range cases {
		t.Run(tc.ring, func(t *testing.T) {
			l, err := NewLabels(tc.ring)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidRing) {
					t.Fatalf("NewLabels(%q) error = %v, want ErrInvalidRing", tc.ring, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Shard() != "shard.sharding.kcache.dev/"+tc.ring || l.Drain() != "drain.sharding.kcache.dev/"+tc.ring || l.Ring() != tc.ring {
				t.Fatalf("labels of %q: %q %q %q", tc.ring, l.Ring(), l.Shard(), l.Drain())
			}
		})
	}
}

func TestSelectors(t *testing.T) {
	l, err := NewLabels("web")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		sel    string
		labels map[string]string
		want   bool
	}{
		{"member selects its own", l.MemberSelector("m1").String(), map[string]string{l.Shard(): "m1"}, true},
		{"member selects its draining", l.MemberSelector("m1").String(), map[string]string{l.Shard(): "m1", l.Drain(): "true"}, true},
		{"member skips others", l.MemberSelector("m1").String(), map[string]string{l.Shard(): "m2"}, false},
		{"unassigned selects unlabelled", l.UnassignedSelector().String(), map[string]string{"app": "x"}, true},
		{"unassigned skips assigned", l.UnassignedSelector().String(), map[string]string{l.Shard(): "m2"}, false},
		{"leases of the ring", l.LeaseSelector().String(), map[string]string{RingLabel: "web"}, true},
		{"leases of another ring", l.LeaseSelector().String(), map[string]string{RingLabel: "db"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := parseSelector(tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(labelSet(tc.labels)); got != tc.want {
				t.Fatalf("%q matches %v = %v, want %v", tc.sel, tc.labels, got, tc.want)
			}
		})
	}
}

func TestValidateMember(t *testing.T) {
	for _, ok := range []string{"replica-0", "pod.abc-12"} {
		if err := validateMember(ok); err != nil {
			t.Errorf("validateMember(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Replica", "a_b", strings.Repeat("a", 64)} {
		if err := validateMember(bad); !errors.Is(err, ErrInvalidMember) {
			t.Errorf("validateMember(%q) = %v, want ErrInvalidMember", bad, err)
		}
	}
}
