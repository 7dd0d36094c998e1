package integration

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kcache/cache"
)

// notification is one handler call, reduced to what the tests compare.
type notification struct {
	// Kind is "add", "update" or "delete".
	Kind string
	UID  string
	// RV is the (new) object's resource version; OldRV is the old object's, for updates.
	RV, OldRV string
	// Initial is isInInitialList, for adds.
	Initial bool
	// Tombstone is set when OnDelete got a DeletedFinalStateUnknown.
	Tombstone bool
}

func (n notification) String() string {
	s := n.Kind + "@" + n.RV
	if n.Kind == "update" {
		s = n.Kind + "@" + n.OldRV + "->" + n.RV
	}
	if n.Initial {
		s += "(initial)"
	}
	if n.Tombstone {
		s += "(tombstone)"
	}
	return s
}

// handlerLog records what an event handler receives, per object key, in arrival order.
type handlerLog struct {
	// mu guards byKey and errs.
	mu    sync.Mutex
	byKey map[string][]notification
	errs  []string
}

func newHandlerLog() *handlerLog {
	return &handlerLog{byKey: map[string][]notification{}}
}

// Handler returns the event handler that feeds the log.
func (l *handlerLog) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			l.record(obj, notification{Kind: "add", Initial: initial})
		},
		UpdateFunc: func(oldObj, newObj any) {
			l.record(newObj, notification{Kind: "update", OldRV: rvOf(oldObj)})
		},
		DeleteFunc: func(obj any) {
			n := notification{Kind: "delete"}
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				n.Tombstone = true
				if tomb.Obj == nil {
					l.mu.Lock()
					l.byKey[tomb.Key] = append(l.byKey[tomb.Key], n)
					l.mu.Unlock()
					return
				}
				obj = tomb.Obj
			}
			l.record(obj, n)
		},
	}
}

func (l *handlerLog) record(obj any, n notification) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := meta.Accessor(obj)
	if err != nil {
		l.errs = append(l.errs, fmt.Sprintf("%s of %T without metadata", n.Kind, obj))
		return
	}
	n.UID, n.RV = string(m.GetUID()), m.GetResourceVersion()
	key := m.GetNamespace() + "/" + m.GetName()
	l.byKey[key] = append(l.byKey[key], n)
}

// For returns the notifications for key so far.
func (l *handlerLog) For(key string) []notification {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]notification(nil), l.byKey[key]...)
}

// Keys returns how many keys got notifications.
func (l *handlerLog) Keys() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// Errs returns the calls the log could not understand.
func (l *handlerLog) Errs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}

// describe prints a list of notifications compactly for failure messages.
func describe(ns []notification) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// rvOf returns obj's resource version, or "" if obj has no metadata.
func rvOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
