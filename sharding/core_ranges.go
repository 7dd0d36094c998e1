package sharding

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The hash-range form of assignment, for selecting a member's objects without writing to
// them: the 64-bit FNV-1a hash space of shard keys — the hash Kubernetes' shard selectors
// (ListOptions.ShardSelector, the ShardedListAndWatch feature) compute of an object's
// metadata.uid or metadata.namespace — is cut into hashSegments equal segments, and each
// segment goes to one live member by the same rendezvous hashing as keys (Assign). Every
// observer of the same members computes the same ranges; when a member joins or leaves, only
// the segments it wins or held move, as with keys.

// hashSegments is the number of equal segments of the hash space. More segments balance the
// members better (each member's share of segments is binomial) but make longer selectors
// (about hashSegments/N ranges per member before adjacent ones merge); 128 keeps a member of
// three within a few percent of a third and its selector to a few kilobytes.
const hashSegments = 128

// segmentWidth is the width of one segment: 2^64 / hashSegments.
const segmentWidth = uint64(1) << (64 - 7)

// Shard selector fields: the object fields a server's shard selector can hash (KEP-5866).
const (
	// FieldUID hashes the object's UID: objects spread evenly, and an object's controlled
	// objects (which have UIDs of their own) land anywhere.
	FieldUID = "object.metadata.uid"
	// FieldNamespace hashes the object's namespace: a namespace's objects, controlled ones
	// included, land on one member.
	FieldNamespace = "object.metadata.namespace"
)

// HashRange is a range [Start, End) of the 64-bit hash space of shard keys. End is exclusive;
// End == 0 stands for 2^64, the end of the space.
type HashRange struct {
	Start, End uint64
}

// Contains reports whether hash h lies in r.
func (r HashRange) Contains(h uint64) bool {
	return h >= r.Start && (r.End == 0 || h < r.End)
}

// HashKey returns the 64-bit FNV-1a hash of a shard key: the hash a server's shard selector
// computes of the selected field's value.
func HashKey(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// HashRanges returns, for every one of members, the hash ranges it owns: sorted, adjacent
// ones merged, together covering the whole hash space once. A member that wins no segment has
// no entry. No members give an empty map. The result depends only on the set of names.
func HashRanges(members []string) map[string][]HashRange {
	out := map[string][]HashRange{}
	if len(members) == 0 {
		return out
	}
	owned := map[string]*segments{}
	for i, m := range segmentOwners(members) {
		if owned[m] == nil {
			owned[m] = &segments{}
		}
		owned[m].add(i)
	}
	for m, s := range owned {
		out[m] = s.ranges()
	}
	return out
}

// InRanges reports whether hash h lies in one of ranges.
func InRanges(h uint64, ranges []HashRange) bool {
	return slices.ContainsFunc(ranges, func(r HashRange) bool { return r.Contains(h) })
}

// ShardSelector returns the server-side shard selector (ListOptions.ShardSelector) that
// selects the objects whose field — FieldUID or FieldNamespace — hashes into one of ranges:
// shardRange(field, 'start', 'end') terms joined by " || ", bounds as quoted 0x-prefixed
// 16-digit hex (the end of the space as '0x10000000000000000'). No ranges give "", which a
// server reads as no selection: callers with no ranges must not list at all.
func ShardSelector(field string, ranges []HashRange) (string, error) {
	if field != FieldUID && field != FieldNamespace {
		return "", fmt.Errorf("%w: shard selector field %q (want %s or %s)", ErrInvalidOptions, field, FieldUID, FieldNamespace)
	}
	terms := make([]string, 0, len(ranges))
	for _, r := range ranges {
		end := fmt.Sprintf("0x%016x", r.End)
		if r.End == 0 {
			end = "0x10000000000000000"
		}
		terms = append(terms, fmt.Sprintf("shardRange(%s, '0x%016x', '%s')", field, r.Start, end))
	}
	return strings.Join(terms, " || "), nil
}

// keyHash is the hash of a shard key that only clients compute (a Key function's): FNV-1a,
// then the SplitMix64 finalizer. Plain FNV-1a changes only its low 48 bits when the last byte
// of the key changes, so keys that differ only there ("cm-1" … "cm-9") would share a segment;
// servers hash plainly, so the fields they select by (HashKey) cannot be mixed.
func keyHash(key string) uint64 {
	h := HashKey(key)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// hashOf returns the hash of m's shard key, m an object of r: the server's hash of the field
// its shard selector would hash (r.ShardField), or else keyHash of r's key.
func (r Resource) hashOf(m metav1.Object) uint64 {
	switch r.ShardField {
	case FieldUID:
		return HashKey(string(m.GetUID()))
	case FieldNamespace:
		return HashKey(m.GetNamespace())
	}
	return keyHash(r.key(m))
}

// controlledHashOf returns the hash that m, an object of one of r's Controlled resources,
// follows: its owner's, and false if m is not sharded with an owner of r (see ownerOf). With
// FieldNamespace an object and its owner share the namespace; with FieldUID it is the hash of
// the owner's UID, which the controller reference carries (a server cannot select by it: the
// object is selected client-side).
func (r Resource) controlledHashOf(m metav1.Object) (uint64, bool) {
	owner, ok := r.ownerOf(m)
	if !ok {
		return 0, false
	}
	switch r.ShardField {
	case FieldNamespace:
		return HashKey(m.GetNamespace()), true
	case FieldUID:
		return HashKey(string(owner.UID)), true
	}
	return keyHash(r.controlledKey(owner)), true
}
