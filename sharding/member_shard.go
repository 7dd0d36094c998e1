package sharding

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcache/cache/informers"
)

// leaseType is the Lease type the ring's informers hold.
type leaseType = coordinationv1.Lease

// ErrInvalidOptions is wrapped by the errors New returns for unusable Options.
var ErrInvalidOptions = errors.New("sharding: invalid options")

// Resource is one resource whose objects the ring's members reconcile.
type Resource struct {
	// Resource is the resource (group, version, plural name).
	Resource schema.GroupVersionResource
	// Key returns an object's shard key. Defaults to KeyByName.
	Key KeyFunc
	// Namespace limits the sharded objects (and their controlled objects) to one namespace.
	// Defaults to all namespaces: every object of the resource in the cluster gets a shard
	// label.
	Namespace string
	// Selector limits the sharded objects to those it matches. Defaults to all. Members should
	// use the same selector in their informers (AND it with Shard.TweakListOptions).
	Selector labels.Selector
	// Kind is the kind of the resource's objects ("ConfigMap"). If set, only objects of a
	// Controlled resource whose controller reference names this kind are sharded; objects
	// without a controller reference never are.
	Kind string
	// Controlled lists resources whose objects this resource's objects control (owner
	// reference with controller=true): each follows its owner to the owner's member, so the
	// member's cache holds an owner's controlled objects. The ring's controllers read them but
	// do not reconcile them as keys of their own; they move without a drain, after their owner.
	Controlled []schema.GroupVersionResource
	// ShardField, with SelectByHash, keys the objects by a field the API server can hash
	// itself — FieldUID or FieldNamespace — so that members select their objects with a
	// server-side shard selector where the server supports it (ListOptions.ShardSelector, the
	// ShardedListAndWatch feature), and client-side otherwise. Empty (the default) keys them by
	// Key and selects client-side. Controlled objects follow their owner: with FieldNamespace
	// they share its namespace (selected server-side too); with FieldUID they follow the UID in
	// their controller reference, which a server cannot select by, so they are selected
	// client-side (every member receives every event of a Controlled resource). Must be empty
	// with SelectByLabels.
	//
	// kcache extension, as is all of this package.
	ShardField string
}

// selects reports whether an object with these labels is one the ring shards.
func (r Resource) selects(lbls map[string]string) bool {
	return r.Selector == nil || r.Selector.Matches(labels.Set(lbls))
}

// key returns the shard key of m, an object of the resource.
func (r Resource) key(m metav1.Object) string {
	if r.Key == nil {
		return KeyByName(m)
	}
	return r.Key(m)
}

// ownerOf returns the identity of m's owner if m, an object of one of r's Controlled
// resources, is sharded with it: it has a controller reference, of r.Kind if that is set.
func (r Resource) ownerOf(m metav1.Object) (*metav1.ObjectMeta, bool) {
	return controllerOwner(m, r.Kind)
}

// controlledKey returns the shard key a controlled object with owner follows: the owner's key
// under r's key function.
func (r Resource) controlledKey(owner *metav1.ObjectMeta) string {
	return r.key(owner)
}

// Selection is how the members of a ring select their objects.
type Selection int

const (
	// SelectByLabels (the default): the sharder labels every sharded object with its member,
	// and members list and watch their label (see SHARDING.md). Every new object gets a label
	// patch, and every moved object a drain, an acknowledgement and an assignment.
	SelectByLabels Selection = iota
	// SelectByHash: members own ranges of the hash of the shard key, computed from the ring's
	// membership, which the sharder publishes on its Lease as an epoch; a member starts on a
	// range only after every other member acknowledged the epoch on its Lease. Nothing is ever
	// written to a sharded object: a membership change costs a few Lease writes, whatever the
	// number of objects. Members select their objects through Shard.ListerWatcher or
	// SelectClient.
	SelectByHash
)

// String returns "labels" or "hash".
func (s Selection) String() string {
	switch s {
	case SelectByLabels:
		return "labels"
	case SelectByHash:
		return "hash"
	}
	return "Selection(" + strconv.Itoa(int(s)) + ")"
}

// Options configures a Shard.
type Options struct {
	// Ring is the ring's name; every replica of the controller uses the same. Required; see
	// NewLabels for what is valid.
	Ring string
	// Namespace holds the ring's Leases (the members' and the sharder's). Required.
	Namespace string
	// Name prefixes the member's name, which is Name, "-" and five random characters, so
	// that every incarnation of a replica is a new member (a member whose lease was lost never
	// comes back under its name). Defaults to the host name.
	Name string
	// Identity, if set, is the member's name as it is, instead of Name plus a random suffix.
	// It must never be reused by a later incarnation while objects may still carry it.
	Identity string
	// Resources are the ring's sharded resources. The sharder labels only these.
	Resources []Resource
	// Selection is how members select their objects: SelectByLabels (the default) or
	// SelectByHash. Every replica of a ring must use the same.
	Selection Selection
	// ClientSideSelection, with SelectByHash, never sends shard selectors to the server: every
	// member lists and watches all objects of its resources and drops those outside its ranges
	// before its cache and handlers. Without it, resources with a ShardField are selected on
	// the server when it applies shard selectors (see ServerSelection).
	ClientSideSelection bool
	// LeaseTiming sets the lease durations; zero fields take their defaults.
	LeaseTiming LeaseTiming
	// DisableSharder keeps this replica out of the sharder election.
	DisableSharder bool
	// Concurrency is the number of parallel writes of the sharder. Defaults to 32.
	Concurrency int
	// ResyncPeriod is the interval of the sharder's full passes when nothing changes.
	// Defaults to 1 minute.
	ResyncPeriod time.Duration
	// FollowUpDelay is how long after a pass that left hand-overs pending the next pass
	// starts. Defaults to 500ms.
	FollowUpDelay time.Duration
	// Clock measures lease deadlines and the sharder's timers. Defaults to clock.RealClock{}.
	// client-go's leader election measures its own loop on the real clock.
	Clock clock.WithTickerAndDelayedExecution
	// Logger defaults to klog's background logger.
	Logger *klog.Logger
}

// Shard is one replica's membership in a ring: it holds the replica's member Lease, takes part
// in the sharder election, and gives the replica's controllers the label selector of their
// share and a Gate per resource. Create it with New, call Run, start the controllers once
// Ready is closed, and reconcile through Gate.Do.
type Shard struct {
	name string
	// ranges is the member's state of the hash-range hand-over (SelectByHash), nil otherwise.
	ranges *rangeMember
	dyn    dynamic.Interface
	// serverSide caches ServerSelection's answers; guarded by mu.
	serverSide map[schema.GroupVersionResource]bool
	labels     Labels
	opts       Options
	timing     LeaseTiming
	client     kubernetes.Interface
	meta       metadata.Interface
	fence      *fence
	ready      chan struct{}
	running    sync.Once

	// mu guards gates, serverSide and selectionStats.
	mu             sync.Mutex
	gates          map[schema.GroupVersionResource]*Gate
	selectionStats map[schema.GroupVersionResource]*selectionCounters
}

// New returns the Shard of this replica. It checks opts and builds the clients from config
// (copies: the Leases' client has no client-side rate limit, the object writes at least 100
// per second with bursts of 200); nothing runs until Run.
func New(config *rest.Config, opts Options) (*Shard, error) {
	l, err := NewLabels(opts.Ring)
	if err != nil {
		return nil, err
	}
	if opts.Namespace == "" {
		return nil, fmt.Errorf("%w: no lease namespace", ErrInvalidOptions)
	}
	timing, err := opts.LeaseTiming.withDefaults()
	if err != nil {
		return nil, err
	}
	name := opts.Identity
	if name == "" {
		if name, err = memberName(opts.Name); err != nil {
			return nil, err
		}
	}
	if err := validateMember(name); err != nil {
		return nil, err
	}
	if err := validateSelection(opts); err != nil {
		return nil, err
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 32
	}
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = time.Minute
	}
	if opts.FollowUpDelay <= 0 {
		opts.FollowUpDelay = 500 * time.Millisecond
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		logger := klog.Background()
		opts.Logger = &logger
	}
	// Leases get a client of their own without a client-side rate limit (a few requests per
	// RetryPeriod), so a sharder pass writing thousands of labels never delays a renewal.
	leaseConfig := rest.CopyConfig(config)
	leaseConfig.RateLimiter, leaseConfig.QPS = nil, -1
	client, err := kubernetes.NewForConfig(leaseConfig)
	if err != nil {
		return nil, fmt.Errorf("sharding: %w", err)
	}
	meta, err := metadata.NewForConfig(writeConfig(config))
	if err != nil {
		return nil, fmt.Errorf("sharding: %w", err)
	}
	dyn, err := dynamic.NewForConfig(leaseConfig)
	if err != nil {
		return nil, fmt.Errorf("sharding: %w", err)
	}
	return newShard(name, l, opts, timing, client, meta, dyn), nil
}

// newShard returns a Shard over the given clients; opts and timing are checked and defaulted.
func newShard(name string, l Labels, opts Options, timing LeaseTiming, client kubernetes.Interface, meta metadata.Interface, dyn dynamic.Interface) *Shard {
	s := &Shard{name: name, labels: l, opts: opts, timing: timing, client: client, meta: meta, dyn: dyn,
		fence: newFence(), ready: make(chan struct{}), gates: map[schema.GroupVersionResource]*Gate{},
		serverSide: map[schema.GroupVersionResource]bool{}}
	if opts.Selection == SelectByHash {
		s.ranges = newRangeMember(name, s.fence)
	}
	return s
}

// validateSelection checks the options of the selection mode.
func validateSelection(opts Options) error {
	if opts.Selection != SelectByLabels && opts.Selection != SelectByHash {
		return fmt.Errorf("%w: unknown selection %v", ErrInvalidOptions, opts.Selection)
	}
	for _, r := range opts.Resources {
		switch {
		case r.ShardField == "":
		case opts.Selection != SelectByHash:
			return fmt.Errorf("%w: %s: ShardField needs SelectByHash", ErrInvalidOptions, r.Resource)
		case r.ShardField != FieldUID && r.ShardField != FieldNamespace:
			return fmt.Errorf("%w: %s: ShardField %q (want %s or %s)", ErrInvalidOptions, r.Resource, r.ShardField, FieldUID, FieldNamespace)
		case r.Key != nil:
			return fmt.Errorf("%w: %s: both ShardField and Key", ErrInvalidOptions, r.Resource)
		}
	}
	return nil
}

// Sharder and acknowledgement writes use at least these client-side limits: client-go's
// defaults (5 per second, bursts of 10) would stretch a hand-over of thousands of objects
// over minutes.
const (
	writeQPS   = 100
	writeBurst = 200
)

// writeConfig returns the configuration of the object writes: config, with at least
// writeQPS/writeBurst unless config sets its own rate limiter or no limit (QPS < 0).
func writeConfig(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	if c.RateLimiter == nil && c.QPS >= 0 && c.QPS < writeQPS {
		c.QPS, c.Burst = writeQPS, max(c.Burst, writeBurst)
	}
	return c
}

// memberName returns prefix (default: the host name, lower-cased) plus "-" and five random
// lower-case letters and digits, cut to fit a label value.
func memberName(prefix string) (string, error) {
	if prefix == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("%w: no Name and no host name: %w", ErrInvalidOptions, err)
		}
		prefix = strings.ToLower(host)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	suffix := make([]byte, 5)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	for i, b := range suffix {
		suffix[i] = alphabet[int(b)%len(alphabet)]
	}
	if max := 63 - len(suffix) - 1; len(prefix) > max {
		prefix = strings.TrimRight(prefix[:max], "-.")
	}
	return prefix + "-" + string(suffix), nil
}

// Name returns the member's name: its Lease's name and the shard label value of its objects.
func (s *Shard) Name() string { return s.name }

// Labels returns the ring's label keys.
func (s *Shard) Labels() Labels { return s.labels }

// Selection returns the ring's selection mode.
func (s *Shard) Selection() Selection { return s.opts.Selection }

// Selector selects the objects assigned to this member with SelectByLabels. With SelectByHash
// members select by hash ranges instead (Shard.ListerWatcher, SelectClient), and no object
// carries the label.
func (s *Shard) Selector() labels.Selector { return s.labels.MemberSelector(s.name) }

// TweakListOptions restricts a List or Watch to this member's objects, keeping any label
// selector already set (the two are ANDed), with SelectByLabels; with SelectByHash it changes
// nothing (see FactoryOption).
func (s *Shard) TweakListOptions(o *metav1.ListOptions) {
	if s.opts.Selection == SelectByHash {
		return
	}
	sel := s.Selector().String()
	if o.LabelSelector != "" {
		sel = o.LabelSelector + "," + sel
	}
	o.LabelSelector = sel
}

// FactoryOption is the kcache informers factory option that makes every informer of the
// factory list and watch only this member's objects (informers.WithTweakListOptions with
// TweakListOptions), with SelectByLabels. With SelectByHash it selects nothing (the Gate still
// refuses objects outside the member's ranges): wrap the factory's clients with SelectClient
// instead. It replaces a tweak set before it; to combine, call TweakListOptions from
// your own tweak. Use it for the factory of the ring's resources and their controlled
// resources, not for objects that are not sharded.
func (s *Shard) FactoryOption() informers.SharedInformerOption {
	return informers.WithTweakListOptions(s.TweakListOptions)
}

// Ready is closed once the member holds its lease. Until then, and after Run returns, Gate
// lets no reconcile run.
func (s *Shard) Ready() <-chan struct{} { return s.ready }

// Fenced is closed once the member has stopped acting: its lease could expire, or it is being
// released. Reconciles running at that moment have their contexts cancelled.
func (s *Shard) Fenced() <-chan struct{} { return s.fence.ctx.Done() }
