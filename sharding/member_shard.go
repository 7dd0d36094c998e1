package sharding

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	name    string
	labels  Labels
	opts    Options
	timing  LeaseTiming
	client  kubernetes.Interface
	meta    metadata.Interface
	fence   *fence
	ready   chan struct{}
	running sync.Once

	// mu guards gates.
	mu    sync.Mutex
	gates map[schema.GroupVersionResource]*Gate
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
	return &Shard{name: name, labels: l, opts: opts, timing: timing, client: client, meta: meta,
		fence: newFence(), ready: make(chan struct{}), gates: map[schema.GroupVersionResource]*Gate{}}, nil
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

// Selector selects the objects assigned to this member.
func (s *Shard) Selector() labels.Selector { return s.labels.MemberSelector(s.name) }

// TweakListOptions restricts a List or Watch to this member's objects, keeping any label
// selector already set (the two are ANDed).
func (s *Shard) TweakListOptions(o *metav1.ListOptions) {
	sel := s.Selector().String()
	if o.LabelSelector != "" {
		sel = o.LabelSelector + "," + sel
	}
	o.LabelSelector = sel
}

// FactoryOption is the kcache informers factory option that makes every informer of the
// factory list and watch only this member's objects (informers.WithTweakListOptions with
// TweakListOptions). It replaces a tweak set before it; to combine, call TweakListOptions from
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
