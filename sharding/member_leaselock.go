package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// leaseLock is the Lease lock client-go's leader election drives (the behaviour of
// resourcelock.LeaseLock), which can also write an annotation on the Lease it holds between
// renewals: the zero-write protocol's epoch (on the sharder's Lease) and acknowledgements (on
// a member's). Renewals keep the annotations of the Lease they read. An annotation is written
// only while the lock's last read or write of the Lease showed this identity as the holder,
// with that read's resourceVersion as a precondition: if anyone else wrote the Lease since,
// the write conflicts and is refused (never retried with a value computed earlier).
type leaseLock struct {
	client    coordinationv1client.LeasesGetter
	namespace string
	name      string
	identity  string
	labels    map[string]string

	// mu guards lease, the last Lease read or written, and serializes the lock's requests.
	mu    sync.Mutex
	lease *coordinationv1.Lease
}

var _ resourcelock.Interface = (*leaseLock)(nil)

// errNotHolder is returned by annotate when the Lease is not held by the lock's identity.
var errNotHolder = errors.New("sharding: lease not held")

func newLeaseLock(client coordinationv1client.LeasesGetter, namespace, name, identity string, labels map[string]string) *leaseLock {
	return &leaseLock{client: client, namespace: namespace, name: name, identity: identity, labels: labels}
}

// Get reads the Lease.
func (l *leaseLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lease, err := l.client.Leases(l.namespace).Get(ctx, l.name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	l.lease = lease
	record := resourcelock.LeaseSpecToLeaderElectionRecord(&lease.Spec)
	raw, err := json.Marshal(*record)
	if err != nil {
		return nil, nil, err
	}
	return record, raw, nil
}

// Create creates the Lease with the record and the labels.
func (l *leaseLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.namespace, Labels: maps.Clone(l.labels)},
		Spec:       resourcelock.LeaderElectionRecordToLeaseSpec(&ler),
	}
	created, err := l.client.Leases(l.namespace).Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	l.lease = created
	return nil
}

// Update writes the record (a renewal or a release) over the last Lease read.
func (l *leaseLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == nil {
		return errors.New("sharding: lease not read before an update")
	}
	lease := l.lease.DeepCopy()
	lease.Spec = resourcelock.LeaderElectionRecordToLeaseSpec(&ler)
	if len(l.labels) > 0 && lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	maps.Copy(lease.Labels, l.labels)
	updated, err := l.client.Leases(l.namespace).Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	l.lease = updated
	return nil
}

// annotate sets the annotation key to value on the Lease now. It returns errNotHolder
// (wrapped) if the last read of the Lease showed another holder or the write conflicted with
// a change by someone else.
func (l *leaseLock) annotate(ctx context.Context, key, value string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == nil || l.lease.Spec.HolderIdentity == nil || *l.lease.Spec.HolderIdentity != l.identity {
		return fmt.Errorf("%w: %s/%s", errNotHolder, l.namespace, l.name)
	}
	lease := l.lease.DeepCopy()
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[key] = value
	updated, err := l.client.Leases(l.namespace).Update(ctx, lease, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// Someone else wrote the Lease since the lock last did: refuse; the caller decides
		// again from what it observes next.
		return fmt.Errorf("%w: %s/%s changed: %w", errNotHolder, l.namespace, l.name, err)
	}
	if err != nil {
		return err
	}
	l.lease = updated
	return nil
}

// annotation returns the annotation key of the last Lease read or written.
func (l *leaseLock) annotation(key string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == nil {
		return "", false
	}
	v, ok := l.lease.Annotations[key]
	return v, ok
}

// RecordEvent does nothing: the ring records no events.
func (l *leaseLock) RecordEvent(string) {}

// Identity returns the holder identity the lock writes.
func (l *leaseLock) Identity() string { return l.identity }

// Describe returns namespace/name of the Lease.
func (l *leaseLock) Describe() string { return l.namespace + "/" + l.name }
