package cache

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fifoTestItem is a minimal object with metadata; Val tells versions of one object apart.
type fifoTestItem struct {
	metav1.ObjectMeta
	Val int
}

func fifoTestObj(name string, val int) *fifoTestItem {
	return &fifoTestItem{ObjectMeta: metav1.ObjectMeta{Name: name}, Val: val}
}

// fifoTestKnown is a KeyListerGetter over a map, listing keys in sorted order so that tests
// are deterministic. Keys in failing make GetByKey fail.
type fifoTestKnown struct {
	objs    map[string]interface{}
	failing map[string]bool
	// listOnly keys are listed but not found by GetByKey.
	listOnly map[string]bool
}

func fifoTestKnownOf(objs ...*fifoTestItem) *fifoTestKnown {
	k := &fifoTestKnown{objs: map[string]interface{}{}, failing: map[string]bool{}, listOnly: map[string]bool{}}
	for _, o := range objs {
		k.objs[o.Name] = o
	}
	return k
}

func (k *fifoTestKnown) ListKeys() []string {
	keys := make([]string, 0, len(k.objs)+len(k.listOnly))
	for key := range k.objs {
		keys = append(keys, key)
	}
	for key := range k.listOnly {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

func (k *fifoTestKnown) GetByKey(key string) (interface{}, bool, error) {
	if k.failing[key] {
		return nil, false, errors.New("lookup failed")
	}
	obj, ok := k.objs[key]
	return obj, ok, nil
}

// fifoTestDescribe renders a delta compactly: "Added(1)", "Deleted(tomb 2)", "Deleted(tomb
// nil)", "ReplacedAll(rv a=1,b=2)", "SyncAll", "Bookmark(rv)".
func fifoTestDescribe(d Delta) string {
	switch o := d.Object.(type) {
	case *fifoTestItem:
		return fmt.Sprintf("%s(%d)", d.Type, o.Val)
	case DeletedFinalStateUnknown:
		if item, ok := o.Obj.(*fifoTestItem); ok {
			return fmt.Sprintf("%s(tomb %s %d)", d.Type, o.Key, item.Val)
		}
		return fmt.Sprintf("%s(tomb %s nil)", d.Type, o.Key)
	case ReplacedAllInfo:
		parts := make([]string, 0, len(o.Objects))
		for _, obj := range o.Objects {
			item := obj.(*fifoTestItem)
			parts = append(parts, fmt.Sprintf("%s=%d", item.Name, item.Val))
		}
		return fmt.Sprintf("%s(%s %s)", d.Type, o.ResourceVersion, strings.Join(parts, ","))
	case SyncAllInfo:
		return string(d.Type)
	case BookmarkInfo:
		return fmt.Sprintf("%s(%s)", d.Type, o.ResourceVersion)
	default:
		return fmt.Sprintf("%s(%T)", d.Type, d.Object)
	}
}

// fifoTestDescribeDeltas renders "key: Added(1) Updated(2)"; key is omitted when empty.
func fifoTestDescribeDeltas(key string, ds []Delta) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fifoTestDescribe(d)
	}
	if key == "" {
		return strings.Join(parts, " ")
	}
	return key + ": " + strings.Join(parts, " ")
}

// fifoTestKeyOf returns the test key of a delta's object, or "" for whole-list deltas.
func fifoTestKeyOf(d Delta) string {
	switch o := d.Object.(type) {
	case *fifoTestItem:
		return o.Name
	case DeletedFinalStateUnknown:
		return o.Key
	}
	return ""
}

// fifoTestNoMeta has no metadata, so MetaNamespaceKeyFunc fails on it.
type fifoTestNoMeta struct{}
