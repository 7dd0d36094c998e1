package cache

import (
	"errors"
)

// DeltaType says what kind of change a Delta records.
type DeltaType string

// The kinds of Delta.
const (
	// Added: the object appeared, as seen by a watch.
	Added DeltaType = "Added"
	// Updated: the object changed, as seen by a watch.
	Updated DeltaType = "Updated"
	// Deleted: the object is gone. Its Object is the last known state, or a
	// DeletedFinalStateUnknown when the deletion was inferred from a relist.
	Deleted DeltaType = "Deleted"
	// Replaced: the object was in a full list (the initial list or a relist after a watch
	// could not be resumed); it may or may not have changed. Emitted per object by DeltaFIFO
	// with EmitDeltaTypeReplaced, and by RealFIFO when it does not replace atomically.
	Replaced DeltaType = "Replaced"
	// ReplacedAll: a full list replaced the queue's view in one step. Its Object is a
	// ReplacedAllInfo holding the whole list. Emitted by RealFIFO in atomic mode.
	ReplacedAll DeltaType = "ReplacedAll"
	// Sync: a periodic resync re-delivers an object that did not change.
	Sync DeltaType = "Sync"
	// SyncAll: a periodic resync of every known object. Its Object is a SyncAllInfo.
	SyncAll DeltaType = "SyncAll"
	// Bookmark: the source has reached a resource version without changing any object. Its
	// Object is a BookmarkInfo.
	Bookmark DeltaType = "Bookmark"
)

// Delta is one change to one object: its Type and the object's state after the change (for a
// deletion, its last state before it).
type Delta struct {
	Type   DeltaType
	Object interface{}
}

// Deltas is the list of changes to one object, oldest first.
type Deltas []Delta

// Oldest returns the first delta, or nil if d is empty.
func (d Deltas) Oldest() *Delta {
	if len(d) > 0 {
		return &d[0]
	}
	return nil
}

// Newest returns the last delta, or nil if d is empty.
func (d Deltas) Newest() *Delta {
	if n := len(d); n > 0 {
		return &d[n-1]
	}
	return nil
}

// ReplacedAllInfo is the Object of a ReplacedAll delta: the resource version and the objects
// of the Replace call that produced it, each already transformed.
type ReplacedAllInfo struct {
	ResourceVersion string
	Objects         []interface{}
}

// SyncAllInfo is the Object of a SyncAll delta. It carries nothing: the consumer re-delivers
// every object it knows.
type SyncAllInfo struct{}

// BookmarkInfo is the Object of a Bookmark delta.
type BookmarkInfo struct {
	ResourceVersion string
}

// TransformFunc rewrites an object before a queue or store keeps it, typically to drop fields
// the program never reads (managedFields, large annotations) and save memory. It may return the
// object it was given, modified in place. It runs on every write, so it must be fast; it is not
// applied to DeletedFinalStateUnknown tombstones.
type TransformFunc func(interface{}) (interface{}, error)

// ErrZeroLengthDeltasObject is wrapped in a KeyError when a key is asked for an empty Deltas.
var ErrZeroLengthDeltasObject = errors.New("0 length Deltas object; can't get key")
