package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcache/cache/sharding"
)

// This file judges a sharded controller from the API server's audit log alone: who wrote which
// ConfigMap's checksum Secret, and who owned the ConfigMap at that moment.
//
// Ownership. In label mode, a ConfigMap's owner is the member its shard label names. Every
// change of that label is a write to the ConfigMap, and the audit policy logs every write to the
// test's ConfigMaps with its response, which carries the labels and the resourceVersion the write
// produced. kube-apiserver's resourceVersions are etcd revisions, one counter for every object,
// so ordering a ConfigMap's writes and its Secret's writes by resourceVersion is the order in
// which etcd committed them. An ownership period of a ConfigMap is a maximal run of its
// committed versions whose shard label names one member, from the write that set the label to
// that member to the write that changed or removed it. A member belongs to the user that
// created its Lease (the audit log has that create too); each replica process authenticates as
// a user of its own, so a user is a process.
//
// Double reconcile. A Secret write (create or update, by a replica's user) is a double
// reconcile if it was committed outside every ownership period of its ConfigMap that belongs to
// its user: at its resourceVersion the ConfigMap was unowned or owned by a member of another
// user. Then two processes wrote one ConfigMap's Secret within one ownership period (or one
// wrote it while nobody owned the ConfigMap), which the hand-over protocol exists to prevent.
// Writes the server refused (a conflict, AlreadyExists) have no resourceVersion; they count as
// attempts, and an attempt is outside ownership if the server received it outside every
// period of its user's members, a period measured here from the moment the server received
// the write that started it to the moment it completed the write that ended it (wide
// boundaries: an attempt flagged by this rule was received after the server had committed the
// end of its user's ownership).

// auditEvent is the part of an audit.k8s.io/v1 Event the checks read.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	ResponseObject *struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string            `json:"name"`
			UID             string            `json:"uid"`
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
		// Spec is a Lease's.
		Spec struct {
			HolderIdentity *string `json:"holderIdentity"`
		} `json:"spec"`
	} `json:"responseObject"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	Completed       time.Time `json:"stageTimestamp"`
}

// auditWrite is one write request of the audit log.
type auditWrite struct {
	user, verb, resource, name string
	code                       int
	// rv is the resourceVersion the write produced; 0 if it failed.
	rv          uint64
	uid         string
	labels      map[string]string
	annotations map[string]string
	// holder is a Lease's holder after the write.
	holder string
	// received and completed are when the server received the request and completed its
	// response.
	received, completed time.Time
}

func (w auditWrite) ok() bool { return w.code >= 200 && w.code < 300 }

// ownership is one ownership period of a ConfigMap.
type ownership struct {
	member, user string
	// startRV is the version that named member; endRV the one that stopped naming it
	// (math.MaxUint64 while the period is open).
	startRV, endRV uint64
	// started is when the server received the write that started the period; startDone when
	// it completed it; ended when it completed the write that ended it (zero while open).
	started, startDone, ended time.Time
	// endedBy is the user of the write that ended the period.
	endedBy string
}

func (p ownership) open() bool { return p.endRV == math.MaxUint64 }

// shardAudit is what the audit log says about one run of a sharded controller in one
// namespace.
type shardAudit struct {
	// memberUser maps each member (Lease) to the user that created it.
	memberUser map[string]string
	// periods holds each ConfigMap's ownership periods in order, by ConfigMap name.
	periods map[string][]ownership
	// secretWrites holds the creates and updates of each ConfigMap's checksum Secret by the
	// replicas, in the order the server received them, by ConfigMap name.
	secretWrites map[string][]auditWrite
	// cmWrites holds each ConfigMap's committed writes, leaseWrites the committed writes of
	// Leases, in the order of their resourceVersions.
	cmWrites    map[string][]auditWrite
	leaseWrites []auditWrite
	// leaseDeleted holds when the server completed the deletion of each deleted Lease.
	leaseDeleted map[string]time.Time
	// changes holds when each ConfigMap was changed (a committed update or patch by a user
	// other than the replicas'), by ConfigMap name.
	changes map[string][]time.Time
}

// readAuditLog reads the write events of namespace ns from an audit log of JSON lines.
func readAuditLog(path, ns string) ([]auditWrite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []auditWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log %s: %w", path, err)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns || ev.ResponseStatus == nil {
			continue
		}
		w := auditWrite{user: ev.User.Username, verb: ev.Verb, resource: ev.ObjectRef.Resource, name: ev.ObjectRef.Name,
			code: ev.ResponseStatus.Code, received: ev.RequestReceived, completed: ev.Completed}
		if ro := ev.ResponseObject; w.ok() && ro != nil && ro.Kind != "Status" {
			if ro.Metadata.Name != "" {
				w.name = ro.Metadata.Name
			}
			w.labels, w.annotations, w.uid = ro.Metadata.Labels, ro.Metadata.Annotations, ro.Metadata.UID
			if h := ro.Spec.HolderIdentity; h != nil {
				w.holder = *h
			}
			if rv := ro.Metadata.ResourceVersion; rv != "" {
				if w.rv, err = strconv.ParseUint(rv, 10, 64); err != nil {
					return nil, fmt.Errorf("audit log %s: resourceVersion %q: %w", path, rv, err)
				}
			}
		}
		out = append(out, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return out, nil
}

// newShardAudit sorts writes into Lease owners, ConfigMap changes and checksum Secret writes.
// replicas are the users of the replica processes; secretSuffix ends the name of a ConfigMap's
// Secret. labelPeriods or hashPeriods then builds the ownership periods.
func newShardAudit(writes []auditWrite, replicas []string, secretSuffix string) *shardAudit {
	a := &shardAudit{memberUser: map[string]string{}, periods: map[string][]ownership{}, secretWrites: map[string][]auditWrite{},
		changes: map[string][]time.Time{}, cmWrites: map[string][]auditWrite{}, leaseDeleted: map[string]time.Time{}}
	for _, w := range writes {
		switch {
		case w.resource == "leases" && w.ok():
			switch w.verb {
			case "create":
				a.memberUser[w.name] = w.user
			case "delete":
				a.leaseDeleted[w.name] = w.completed
			}
			if w.rv != 0 {
				a.leaseWrites = append(a.leaseWrites, w)
			}
		case w.resource == "configmaps" && w.ok() && w.rv != 0:
			a.cmWrites[w.name] = append(a.cmWrites[w.name], w)
			if (w.verb == "patch" || w.verb == "update") && !slices.Contains(replicas, w.user) {
				a.changes[w.name] = append(a.changes[w.name], w.completed)
			}
		case w.resource == "secrets" && (w.verb == "create" || w.verb == "update") && slices.Contains(replicas, w.user):
			if cm, ok := strings.CutSuffix(w.name, secretSuffix); ok {
				a.secretWrites[cm] = append(a.secretWrites[cm], w)
			}
		}
	}
	byRV := func(x, y auditWrite) int { return cmpUint(x.rv, y.rv) }
	for _, ws := range a.cmWrites {
		slices.SortFunc(ws, byRV)
	}
	slices.SortFunc(a.leaseWrites, byRV)
	for _, ws := range a.secretWrites {
		slices.SortFunc(ws, func(x, y auditWrite) int { return x.received.Compare(y.received) })
	}
	return a
}

// labelPeriods builds the ownership periods of label mode from the ConfigMaps' shard label
// (shardLabel) after each write.
func (a *shardAudit) labelPeriods(shardLabel string) {
	for cm, ws := range a.cmWrites {
		var ps []ownership
		cur := ""
		for _, w := range ws {
			m := w.labels[shardLabel]
			if w.verb == "delete" {
				m = ""
			}
			if m == cur {
				continue
			}
			if cur != "" {
				last := &ps[len(ps)-1]
				last.endRV, last.ended, last.endedBy = w.rv, w.completed, w.user
			}
			if m != "" {
				ps = append(ps, ownership{member: m, user: a.memberUser[m], startRV: w.rv, endRV: math.MaxUint64,
					started: w.received, startDone: w.completed})
			}
			cur = m
		}
		a.periods[cm] = ps
	}
}

// Lease annotations of hash mode: the sharder's Lease publishes the ring's epoch as
// "number:member,member,…"; each member's Lease carries the number of the last epoch it
// acknowledged.
const (
	epochAnnotation        = "sharding.kcache.dev/epoch"
	acknowledgedAnnotation = "sharding.kcache.dev/acknowledged"
)

// hashPeriods builds the ownership periods of hash mode from the Lease writes. Members own
// hash ranges of the shard key (sharding.HashRanges of an epoch's members); keyHash gives each
// ConfigMap's hash. By the protocol, a member may reconcile a key from the moment every other
// member of an epoch that gives it the key has acknowledged exactly that epoch, until it
// acknowledges an epoch that does not give it the key, or its Lease is released, or deleted
// and left out of an epoch. Those are the periods; unlike label periods, two of them could overlap, if the protocol let
// them.
func (a *shardAudit) hashPeriods(sharderLease string, keyHash func(cm string) (uint64, bool)) {
	type epoch struct {
		number  uint64
		members []string
	}
	parseEpoch := func(v string) (epoch, bool) {
		num, names, ok := strings.Cut(v, ":")
		n, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil {
			return epoch{}, false
		}
		e := epoch{number: n}
		if names != "" {
			e.members = strings.Split(names, ",")
		}
		return e, true
	}
	owner := func(h uint64, members []string) string {
		for m, rs := range sharding.HashRanges(members) {
			if sharding.InRanges(h, rs) {
				return m
			}
		}
		return ""
	}
	for cm := range a.cmWrites {
		h, ok := keyHash(cm)
		if !ok {
			continue
		}
		epochs := map[uint64]epoch{}
		var cur epoch
		acks := map[string]uint64{}
		open := map[string]int{} // member → index of its open period in ps
		var ps []ownership
		closePeriod := func(m string, w auditWrite) {
			if i, ok := open[m]; ok {
				ps[i].endRV, ps[i].ended, ps[i].endedBy = w.rv, w.completed, w.user
				delete(open, m)
			}
		}
		for _, w := range a.leaseWrites {
			switch {
			case w.name == sharderLease:
				if e, ok := parseEpoch(w.annotations[epochAnnotation]); ok && e.number > cur.number {
					cur = e
					epochs[e.number] = e
					// A member whose Lease the server deleted before this epoch was written, and
					// which the epoch leaves out, does nothing more. (The audit log has no
					// version for a delete, whose response is a Status: this epoch is the
					// first version known to follow it.)
					for m := range open {
						if deleted, ok := a.leaseDeleted[m]; ok && !slices.Contains(e.members, m) && !deleted.After(w.received) {
							closePeriod(m, w)
						}
					}
				}
			case w.verb == "delete" || w.holder == "":
				// Released or confirmed gone: the member does nothing more.
				closePeriod(w.name, w)
				continue
			default:
				n, err := strconv.ParseUint(w.annotations[acknowledgedAnnotation], 10, 64)
				if err != nil || n == acks[w.name] {
					break
				}
				acks[w.name] = n
				if e, ok := epochs[n]; ok && owner(h, e.members) != w.name {
					closePeriod(w.name, w)
				}
			}
			// Does this write let the key's owner in the current epoch start?
			m := owner(h, cur.members)
			if m == "" {
				continue
			}
			if _, ok := open[m]; ok {
				continue
			}
			ready := true
			for _, x := range cur.members {
				if x != m && acks[x] != cur.number {
					ready = false
					break
				}
			}
			if ready {
				open[m] = len(ps)
				ps = append(ps, ownership{member: m, user: a.memberUser[m], startRV: w.rv, endRV: math.MaxUint64,
					started: w.received, startDone: w.completed})
			}
		}
		// Periods that ended before the ConfigMap existed (ranges moving as the first members
		// joined) are no ownership of it.
		created := a.cmWrites[cm][0].rv
		a.periods[cm] = slices.DeleteFunc(ps, func(p ownership) bool { return p.endRV <= created })
	}
}

func cmpUint(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// doubleReconciles describes every committed Secret write outside its user's ownership, and
// returns the number of committed Secret writes checked.
func (a *shardAudit) doubleReconciles() (found []string, checked int) {
	for cm, ws := range a.secretWrites {
		for _, w := range ws {
			if !w.ok() || w.rv == 0 {
				continue
			}
			checked++
			mine := false
			var others []string
			for _, p := range a.periods[cm] {
				if p.startRV < w.rv && w.rv < p.endRV {
					if p.user == w.user {
						mine = true
					} else {
						others = append(others, fmt.Sprintf("%s (%s, versions %d–%d)", p.member, p.user, p.startRV, p.endRV))
					}
				}
			}
			switch {
			case len(others) > 0:
				found = append(found, fmt.Sprintf("%s: %s %s its Secret at version %d inside the ownership of %s",
					cm, w.user, w.verb, w.rv, strings.Join(others, ", ")))
			case !mine:
				found = append(found, fmt.Sprintf("%s: %s %s its Secret at version %d while nobody owned it", cm, w.user, w.verb, w.rv))
			}
		}
	}
	slices.Sort(found)
	return found, checked
}

// overlaps describes every pair of ownership periods of one ConfigMap, of different members,
// that share a version: two members allowed to reconcile one key at once.
func (a *shardAudit) overlaps() []string {
	var found []string
	for cm, ps := range a.periods {
		for i, p := range ps {
			for _, q := range ps[i+1:] {
				if p.member != q.member && p.startRV < q.endRV && q.startRV < p.endRV {
					found = append(found, fmt.Sprintf("%s: %s (versions %d–%d) and %s (versions %d–%d)",
						cm, p.member, p.startRV, p.endRV, q.member, q.startRV, q.endRV))
				}
			}
		}
	}
	slices.Sort(found)
	return found
}

// attemptsOutside describes every Secret write, committed or refused, that the server received
// outside every ownership period of its user's members, and returns the number checked.
func (a *shardAudit) attemptsOutside() (found []string, checked int) {
	for cm, ws := range a.secretWrites {
	writes:
		for _, w := range ws {
			checked++
			for _, p := range a.periods[cm] {
				if p.user == w.user && !w.received.Before(p.started) && (p.open() || !w.received.After(p.ended)) {
					continue writes
				}
			}
			found = append(found, fmt.Sprintf("%s: %s %s (answered %d) received at %s outside its ownership",
				cm, w.user, w.verb, w.code, w.received.Format("15:04:05.000000")))
		}
	}
	slices.Sort(found)
	return found, checked
}

// ownerChanges counts the changes of owner: periods followed by a period of another member,
// split by who ended the first one — its own member's user (an acknowledged hand-over) or
// another (the sharder reassigning a member that was gone). unknown counts periods whose member
// has no Lease create in the log.
func (a *shardAudit) ownerChanges() (acknowledged, reassigned, unknown int) {
	for _, ps := range a.periods {
		for i, p := range ps {
			if p.user == "" {
				unknown++
			}
			if i == 0 || ps[i-1].member == p.member {
				continue
			}
			if prev := ps[i-1]; prev.endedBy == prev.user {
				acknowledged++
			} else {
				reassigned++
			}
		}
	}
	return acknowledged, reassigned, unknown
}

// departure is how the ConfigMaps a process owned at an event (its crash or its leave) left it.
type departure struct {
	// keys is how many it owned; stuck how many nobody else came to own.
	keys, stuck int
	// lastMoved is how long after the event the last of them got its new owner.
	lastMoved time.Duration
	// stale counts those changed after the event and before their new owner got them (their
	// Secrets were stale then); fixed counts the stale ones the new owner wrote the Secret of
	// before the end of the phase, and lastFixed is how long after the event the last of those
	// first writes came.
	stale, fixed int
	lastFixed    time.Duration
}

// leftBy measures how the ConfigMaps user owned at time at left it, counting new-owner writes up
// to until (the end of the phase).
func (a *shardAudit) leftBy(user string, at, until time.Time) departure {
	var d departure
	for cm, ps := range a.periods {
		for _, p := range ps {
			if p.user != user || p.startDone.After(at) || (!p.open() && !p.ended.After(at)) {
				continue
			}
			d.keys++
			// The new owner: the next period, of another user, that starts after this one ends.
			var next *ownership
			for i := range ps {
				if q := &ps[i]; q.user != user && !p.open() && q.startRV >= p.endRV && (next == nil || q.startRV < next.startRV) {
					next = q
				}
			}
			if next == nil {
				d.stuck++
				continue
			}
			d.lastMoved = max(d.lastMoved, next.startDone.Sub(at))
			if !slices.ContainsFunc(a.changes[cm], func(c time.Time) bool { return c.After(at) && c.Before(next.startDone) }) {
				continue
			}
			d.stale++
			for _, w := range a.secretWrites[cm] {
				if w.user == next.user && w.ok() && w.rv > next.startRV && w.completed.Before(until) {
					d.lastFixed = max(d.lastFixed, w.completed.Sub(at))
					d.fixed++
					break
				}
			}
		}
	}
	return d
}

// joinedBy returns how many ConfigMaps moved to user after at and up to until, and how long
// after at the last of them did.
func (a *shardAudit) joinedBy(user string, at, until time.Time) (keys int, last time.Duration) {
	for _, ps := range a.periods {
		for _, p := range ps {
			if p.user == user && p.startDone.After(at) && !p.startDone.After(until) {
				keys++
				last = max(last, p.startDone.Sub(at))
				break
			}
		}
	}
	return keys, last
}

// TestShardAuditRules checks the audit rules on made-up logs: a clean hand-over by
// acknowledgement, a reassignment after a crash, and the violations they must catch.
func TestShardAuditRules(t *testing.T) {
	const label = "shard"
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	lease := func(member, user string) auditWrite {
		return auditWrite{user: user, verb: "create", resource: "leases", name: member, code: 201}
	}
	cm := func(user string, rv uint64, ms int, owner string) auditWrite {
		var l map[string]string
		if owner != "" {
			l = map[string]string{label: owner}
		}
		return auditWrite{user: user, verb: "patch", resource: "configmaps", name: "a", code: 200, rv: rv, labels: l, received: at(ms - 1), completed: at(ms)}
	}
	secret := func(user string, rv uint64, ms int) auditWrite {
		code := 200
		if rv == 0 {
			code = 409
		}
		return auditWrite{user: user, verb: "update", resource: "secrets", name: "a-sum", code: code, rv: rv, received: at(ms - 1), completed: at(ms)}
	}
	base := []auditWrite{
		lease("m1", "u1"), lease("m2", "u2"), lease("m1x", "u1"),
		cm("writer", 10, 0, ""),      // created without a label
		cm("u1", 20, 10, "m1"),       // the sharder (u1) assigns it to m1
		secret("u1", 30, 20),         // m1 reconciles
		cm("u1", 50, 40, ""),         // m1 acknowledges a drain
		cm("u2", 60, 50, "m2"),       // the sharder (now u2) assigns it to m2
		secret("u2", 70, 60),         // m2 reconciles
		cm("writer", 80, 3000, "m2"), // the data changes after m2 crashed
		cm("u1", 90, 5000, "m1x"),    // m2 crashed; the sharder (u1 again) reassigns it to m1x
		secret("u1", 100, 5100),      // m1x reconciles
		secret("u1", 0, 5200),        // and meets a conflict
	}
	cases := []struct {
		name             string
		extra            []auditWrite
		doubles, outside int
	}{
		{name: "clean"},
		{name: "old owner writes after its acknowledgement", extra: []auditWrite{secret("u1", 75, 70)}, doubles: 1, outside: 1},
		{name: "write while unowned", extra: []auditWrite{secret("u2", 0, 45)}, outside: 1},
		{name: "write committed while unowned", extra: []auditWrite{secret("u2", 55, 45)}, doubles: 1, outside: 1},
		{name: "dead owner's write lands after reassignment", extra: []auditWrite{secret("u2", 120, 6000)}, doubles: 1, outside: 1},
		{name: "refused write of a non-owner", extra: []auditWrite{secret("u2", 0, 30)}, outside: 1},
		{name: "non-owner commits", extra: []auditWrite{secret("u2", 40, 30)}, doubles: 1, outside: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newShardAudit(append(slices.Clone(base), tc.extra...), []string{"u1", "u2"}, "-sum")
			a.labelPeriods(label)
			doubles, _ := a.doubleReconciles()
			outside, _ := a.attemptsOutside()
			if len(doubles) != tc.doubles || len(outside) != tc.outside {
				t.Errorf("doubles %q, attempts outside %q; want %d and %d", doubles, outside, tc.doubles, tc.outside)
			}
			acked, reassigned, unknown := a.ownerChanges()
			if acked != 1 || reassigned != 1 || unknown != 0 {
				t.Errorf("owner changes: %d acknowledged, %d reassigned, %d unknown; want 1, 1, 0", acked, reassigned, unknown)
			}
			want := departure{keys: 1, lastMoved: 4 * time.Second, stale: 1, fixed: 1, lastFixed: 4100 * time.Millisecond}
			if d := a.leftBy("u2", at(1000), at(9000)); d != want {
				t.Errorf("leftBy(u2) = %+v, want %+v", d, want)
			}
			// Before the new owner's write, the stale ConfigMap is not fixed yet.
			want.fixed, want.lastFixed = 0, 0
			if d := a.leftBy("u2", at(1000), at(5050)); d != want {
				t.Errorf("leftBy(u2) up to 5.05s = %+v, want %+v", d, want)
			}
			if keys, last := a.joinedBy("u1", at(1000), at(9000)); keys != 1 || last != 4*time.Second {
				t.Errorf("joinedBy(u1) = %d keys, last %v; want 1, 4s", keys, last)
			}
			if keys, _ := a.joinedBy("u1", at(1000), at(4000)); keys != 0 {
				t.Errorf("joinedBy(u1) up to 4s = %d keys, want 0", keys)
			}
		})
	}
}

// TestShardAuditHashPeriods checks the hash-mode periods on a made-up log: a member alone, a
// join handed over by acknowledgement, a crash confirmed by the sharder, and the writes that
// would break them.
func TestShardAuditHashPeriods(t *testing.T) {
	// A key that m2 owns once it joins m1.
	var h uint64
	for i := range uint64(1 << 10) {
		h = i << 54
		if rs := sharding.HashRanges([]string{"m1", "m2"})["m2"]; sharding.InRanges(h, rs) {
			break
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	lease := func(user, name, verb string, rv uint64, ms int, holder string, ann map[string]string) auditWrite {
		return auditWrite{user: user, verb: verb, resource: "leases", name: name, code: 200, rv: rv, holder: holder,
			annotations: ann, received: at(ms - 1), completed: at(ms)}
	}
	epoch := func(user string, rv uint64, ms int, v string) auditWrite {
		return lease(user, "ring-sharder", "update", rv, ms, "x", map[string]string{epochAnnotation: v})
	}
	ack := func(user, member string, rv uint64, ms int, n string) auditWrite {
		return lease(user, member, "update", rv, ms, member, map[string]string{acknowledgedAnnotation: n})
	}
	secret := func(user string, rv uint64, ms int) auditWrite {
		return auditWrite{user: user, verb: "update", resource: "secrets", name: "a-sum", code: 200, rv: rv, received: at(ms - 1), completed: at(ms)}
	}
	base := []auditWrite{
		{user: "writer", verb: "create", resource: "configmaps", name: "a", code: 201, rv: 5, completed: at(0)},
		lease("u1", "m1", "create", 10, 10, "m1", nil),
		epoch("u1", 20, 20, "1:m1"), // m1 alone: it owns the key at once
		secret("u1", 30, 30),        //
		lease("u2", "m2", "create", 40, 40, "m2", nil),
		epoch("u1", 50, 50, "2:m1,m2"),                // m2 joins and owns the key once m1 acknowledged epoch 2
		secret("u1", 60, 60),                          // m1 still reconciles: it has not acknowledged
		ack("u1", "m1", 70, 70, "2"),                  // m1 hands over
		secret("u2", 80, 80),                          // m2 reconciles
		lease("u1", "m2", "delete", 0, 5000, "", nil), // m2 crashed; the sharder confirmed it gone (a delete's audit has no version)
		epoch("u1", 100, 5010, "3:m1"),
		secret("u1", 110, 5100),
	}
	cases := []struct {
		name    string
		extra   []auditWrite
		doubles int
	}{
		{name: "clean"},
		{name: "new owner before the acknowledgement", extra: []auditWrite{secret("u2", 65, 65)}, doubles: 1},
		{name: "old owner after its acknowledgement", extra: []auditWrite{secret("u1", 85, 85)}, doubles: 1},
		{name: "dead owner after the epoch without it", extra: []auditWrite{secret("u2", 105, 5020)}, doubles: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newShardAudit(append(slices.Clone(base), tc.extra...), []string{"u1", "u2"}, "-sum")
			a.hashPeriods("ring-sharder", func(string) (uint64, bool) { return h, true })
			if o := a.overlaps(); len(o) > 0 {
				t.Errorf("overlapping periods: %q", o)
			}
			doubles, _ := a.doubleReconciles()
			if len(doubles) != tc.doubles {
				t.Errorf("doubles %q, want %d", doubles, tc.doubles)
			}
			acked, reassigned, unknown := a.ownerChanges()
			if acked != 1 || reassigned != 1 || unknown != 0 {
				t.Errorf("owner changes: %d acknowledged, %d reassigned, %d unknown; want 1, 1, 0", acked, reassigned, unknown)
			}
			if d := a.leftBy("u2", at(1000), at(9000)); d.keys != 1 || d.stuck != 0 || d.lastMoved != 4010*time.Millisecond {
				t.Errorf("leftBy(u2) = %+v, want 1 key reassigned after 4.01s", d)
			}
		})
	}
	// A protocol that let m2 start before m1 acknowledged shows as overlapping periods.
	early := slices.Clone(base)
	early[5] = epoch("u1", 50, 50, "2:m2") // m1 missing from the epoch: nobody waits for it
	a := newShardAudit(early, []string{"u1", "u2"}, "-sum")
	a.hashPeriods("ring-sharder", func(string) (uint64, bool) { return h, true })
	if o := a.overlaps(); len(o) != 1 {
		t.Errorf("overlaps %q, want one", o)
	}
}
