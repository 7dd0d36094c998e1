package sharding

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func TestNewRejectsBadOptions(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	cases := []struct {
		name string
		opts Options
		want error
	}{
		{"no ring", Options{Namespace: "ns"}, ErrInvalidRing},
		{"bad ring", Options{Ring: "Web", Namespace: "ns"}, ErrInvalidRing},
		{"no namespace", Options{Ring: "web"}, ErrInvalidOptions},
		{"bad timing", Options{Ring: "web", Namespace: "ns", LeaseTiming: LeaseTiming{LeaseDuration: 2500 * time.Millisecond}}, ErrInvalidOptions},
		{"bad identity", Options{Ring: "web", Namespace: "ns", Identity: "Replica_1"}, ErrInvalidMember},
		{"bad name prefix", Options{Ring: "web", Namespace: "ns", Name: "UPPER"}, ErrInvalidMember},
		{"unknown selection", Options{Ring: "web", Namespace: "ns", Selection: Selection(7)}, ErrInvalidOptions},
		{"shard field with labels", Options{Ring: "web", Namespace: "ns",
			Resources: []Resource{{Resource: configMapsGVR, ShardField: FieldUID}}}, ErrInvalidOptions},
		{"bad shard field", Options{Ring: "web", Namespace: "ns", Selection: SelectByHash,
			Resources: []Resource{{Resource: configMapsGVR, ShardField: "object.metadata.name"}}}, ErrInvalidOptions},
		{"shard field and key", Options{Ring: "web", Namespace: "ns", Selection: SelectByHash,
			Resources: []Resource{{Resource: configMapsGVR, ShardField: FieldNamespace, Key: KeyByName}}}, ErrInvalidOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(cfg, tc.opts); !errors.Is(err, tc.want) {
				t.Fatalf("New = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestShardSelection(t *testing.T) {
	s, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{Ring: "web", Namespace: "ns", Name: "replica"})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^replica-[a-z0-9]{5}$`).MatchString(s.Name()) {
		t.Fatalf("member name %q, want replica-<5 random characters>", s.Name())
	}
	o := metav1.ListOptions{LabelSelector: "app=web"}
	s.TweakListOptions(&o)
	if want := "app=web,shard.sharding.kcache.dev/web=" + s.Name(); o.LabelSelector != want {
		t.Fatalf("selector %q, want %q", o.LabelSelector, want)
	}
}

// TestNewAcceptsHashSelection builds members with SelectByHash in the forms the package
// documents: by UID, by namespace with controlled objects, and by a key function.
func TestNewAcceptsHashSelection(t *testing.T) {
	secrets := []schema.GroupVersionResource{{Version: "v1", Resource: "secrets"}}
	for _, r := range []Resource{
		{Resource: configMapsGVR, ShardField: FieldUID},
		{Resource: configMapsGVR, ShardField: FieldUID, Controlled: secrets},
		{Resource: configMapsGVR, ShardField: FieldNamespace, Controlled: secrets},
		{Resource: configMapsGVR, Key: KeyByName, Controlled: secrets},
	} {
		s, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{Ring: "web", Namespace: "ns", Selection: SelectByHash, Resources: []Resource{r}})
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if s.Selection() != SelectByHash || s.Selection().String() != "hash" {
			t.Fatalf("selection %v", s.Selection())
		}
		o := metav1.ListOptions{LabelSelector: "app=web"}
		s.TweakListOptions(&o)
		if o.LabelSelector != "app=web" {
			t.Fatalf("hash selection changed the label selector to %q", o.LabelSelector)
		}
	}
}

func TestMemberName(t *testing.T) {
	long := strings.Repeat("a", 70)
	name, err := memberName(long)
	if err != nil {
		t.Fatal(err)
	}
	if len(name) != 63 || validateMember(name) != nil {
		t.Fatalf("name %q (%d characters) is not a valid member name", name, len(name))
	}
	other, _ := memberName(long)
	if other == name {
		t.Fatal("two incarnations got the same name")
	}
}

func TestWriteConfig(t *testing.T) {
	cases := []struct {
		name      string
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{"client-go defaults are raised", 0, 0, writeQPS, writeBurst},
		{"a low limit is raised", 5, 10, writeQPS, writeBurst},
		{"a higher limit is kept", 500, 1000, 500, 1000},
		{"no limit stays", -1, 0, -1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &rest.Config{Host: "https://x", QPS: tc.qps, Burst: tc.burst}
			got := writeConfig(in)
			if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
				t.Fatalf("QPS %v burst %d, want %v %d", got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
			}
			if in.QPS != tc.qps {
				t.Fatal("the caller's config was changed")
			}
		})
	}
}
