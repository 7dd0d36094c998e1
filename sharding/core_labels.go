package sharding

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// RingLabel is the label every member Lease of a ring carries; its value is the ring's name.
	RingLabel = "sharding.kcache.dev/ring"
	// shardLabelPrefix starts the key of the label that names an object's shard.
	shardLabelPrefix = "shard.sharding.kcache.dev/"
	// drainLabelPrefix starts the key of the label that marks an object as draining.
	drainLabelPrefix = "drain.sharding.kcache.dev/"
	// drainValue is the value of the drain label.
	drainValue = "true"
)

// ErrInvalidRing is wrapped by the errors that reject a ring name.
var ErrInvalidRing = errors.New("sharding: invalid ring name")

// ErrInvalidMember is wrapped by the errors that reject a member name.
var ErrInvalidMember = errors.New("sharding: invalid member name")

// Labels names the labels of one ring: the shard label whose value is the member that owns an
// object, and the drain label that asks that member to hand the object over. The zero value
// is not usable; build one with NewLabels.
type Labels struct {
	ring  string
	shard string
	drain string
}

// NewLabels returns the label keys of ring. The ring name becomes the name part of two label
// keys, the value of RingLabel and part of the sharder Lease's name, so it must be a DNS label:
// at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit.
// Other names get an error wrapping ErrInvalidRing.
func NewLabels(ring string) (Labels, error) {
	if ring == "" {
		return Labels{}, fmt.Errorf("%w: empty", ErrInvalidRing)
	}
	if errs := validation.IsDNS1123Label(ring); len(errs) > 0 {
		return Labels{}, fmt.Errorf("%w %q: %s", ErrInvalidRing, ring, strings.Join(errs, "; "))
	}
	// A DNS label is a valid label value and label name, so the keys below are valid.
	return Labels{ring: ring, shard: shardLabelPrefix + ring, drain: drainLabelPrefix + ring}, nil
}

// validateMember checks that name can be a member: the name of its Lease and the value of the
// shard label, so a DNS subdomain name that is also a label value (at most 63 characters,
// lower-case letters, digits, '-' and '.').
func validateMember(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidMember)
	}
	errs := validation.IsDNS1123Subdomain(name)
	errs = append(errs, validation.IsValidLabelValue(name)...)
	if len(errs) > 0 {
		return fmt.Errorf("%w %q: %s", ErrInvalidMember, name, strings.Join(errs, "; "))
	}
	return nil
}

// Ring returns the ring's name.
func (l Labels) Ring() string { return l.ring }

// Shard returns the key of the label whose value names the member that owns an object.
func (l Labels) Shard() string { return l.shard }

// Drain returns the key of the label that asks an object's owner to hand it over.
func (l Labels) Drain() string { return l.drain }

// MemberSelector selects the objects assigned to member: those whose shard label is member.
// A replica's informers list and watch with it, so they carry only the replica's share.
func (l Labels) MemberSelector(member string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{l.shard: member})
}

// UnassignedSelector selects the objects that have no shard label: new objects and objects
// whose owner acknowledged a drain. The sharder watches them.
func (l Labels) UnassignedSelector() labels.Selector {
	req, err := labels.NewRequirement(l.shard, selection.DoesNotExist, nil)
	if err != nil {
		// The key was validated by NewLabels; an error here is a bug in this package.
		panic(fmt.Sprintf("sharding: unassigned selector of a validated ring: %v", err))
	}
	return labels.NewSelector().Add(*req)
}

// LeaseSelector selects the member Leases of the ring.
func (l Labels) LeaseSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{RingLabel: l.ring})
}

// stateOf reads an object's shard state from its labels.
func (l Labels) stateOf(objLabels map[string]string) (shard string, draining bool) {
	return objLabels[l.shard], objLabels[l.drain] != ""
}

// The wire format of the hand-over: the sharder's decisions and the owner's acknowledgement
// are patches of the shard and drain labels, each conditioned so that it applies only to the
// state it was decided on.

// actionPatch returns the JSON merge patch that carries out a on an object read at
// resourceVersion rv; the server refuses it with a conflict if the object changed since.
// AssignTo and Reassign set the shard label to a.To and clear the drain label; DrainFrom sets
// the drain label. Other actions write nothing: ok is false.
func (l Labels) actionPatch(a Action, rv string) (patch []byte, ok bool, err error) {
	lbls := map[string]interface{}{}
	switch a.Kind {
	case AssignTo, Reassign:
		lbls[l.shard] = a.To
		lbls[l.drain] = nil
	case DrainFrom:
		lbls[l.drain] = drainValue
	default:
		return nil, false, nil
	}
	patch, err = json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{"resourceVersion": rv, "labels": lbls},
	})
	return patch, err == nil, err
}

// acknowledgePatch returns the JSON patch by which member hands an object over: it tests that
// the object's resourceVersion is still rv (unless rv is empty), the shard label is still
// member and the drain label is set, then removes both labels. A failed test is answered 422
// Unprocessable Entity, and nothing changes.
func (l Labels) acknowledgePatch(member, rv string) ([]byte, error) {
	var ops []map[string]string
	if rv != "" {
		ops = append(ops, map[string]string{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
	}
	ops = append(ops,
		map[string]string{"op": "test", "path": labelPointer(l.shard), "value": member},
		map[string]string{"op": "test", "path": labelPointer(l.drain), "value": drainValue},
		map[string]string{"op": "remove", "path": labelPointer(l.shard)},
		map[string]string{"op": "remove", "path": labelPointer(l.drain)},
	)
	return json.Marshal(ops)
}

// labelPointer returns the JSON pointer (RFC 6901) of the label key.
func labelPointer(key string) string {
	return "/metadata/labels/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
