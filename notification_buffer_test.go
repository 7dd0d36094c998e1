package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// nbObj is one state of an object in the model: rv grows with every change of any object, uid
// with every creation.
type nbObj struct {
	metav1.ObjectMeta
	rv, uid int
}

// nbModel drives a notificationBuffer with a random event stream, as an informer would send it,
// and plays a handler that stalls and resumes, checking every guarantee of a coalescing
// listener on each delivery.
type nbModel struct {
	t   *testing.T
	buf notificationBuffer

	// source is the informer's cache: key → current state.
	source map[string]*nbObj
	rv     int
	uids   int
	keys   []string
	// initialPending counts initial-list adds pushed and not yet reported processed.
	initialPending int
	initialPushed  int

	// view is what the handler last received per key (absent after a delete).
	view map[string]*nbObj
	// highest is the highest rv the handler has received per key, across deletes.
	highest map[string]int
	// initialKeys are the keys pushed as initial-list adds.
	initialKeys map[string]bool
	// keyless are the notifications without a key, in push order, not yet delivered.
	keyless     []string
	nextKeyless int

	pushed, calls int
	// runs, when set, makes push gather consecutive adds of the same initial flag into one
	// run, pushed with PushRun when something else is pushed (as an informer hands over a
	// list). runLists keeps each run's list and a copy, to check that the buffer never
	// writes to it.
	runs       bool
	run        []interface{}
	runInitial bool
	runLists   [][2][]interface{}
	// plainLog is every pushed notification, to compare when the buffer never coalesces.
	plainLog []notification
	gotLog   []notification
}

func newNBModel(t *testing.T, maxPending, nKeys int) *nbModel {
	m := &nbModel{
		t: t, buf: newNotificationBuffer(maxPending), source: map[string]*nbObj{}, view: map[string]*nbObj{},
		highest: map[string]int{}, initialKeys: map[string]bool{},
	}
	for i := range nKeys {
		m.keys = append(m.keys, fmt.Sprintf("k%d", i))
	}
	return m
}

func (m *nbModel) newState(name string, uid int) *nbObj {
	m.rv++
	return &nbObj{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, rv: m.rv, uid: uid}
}

func (m *nbModel) push(n notification) {
	m.pushed++
	m.plainLog = append(m.plainLog, n)
	if n.isInitialAdd() {
		m.initialPending++
		m.initialPushed++
	}
	if m.runs && n.kind() == notifyAdd {
		if len(m.run) > 0 && m.runInitial != n.isInitialAdd() {
			m.flushRun()
		}
		m.run, m.runInitial = append(m.run, n.obj), n.isInitialAdd()
		return
	}
	m.flushRun()
	m.buf.Push(n)
	m.checkBound()
}

// flushRun pushes the gathered run of adds, if any, with PushRun.
func (m *nbModel) flushRun() {
	if len(m.run) == 0 {
		return
	}
	objs := m.run
	m.run = nil
	m.runLists = append(m.runLists, [2][]interface{}{objs, slices.Clone(objs)})
	before := m.buf.Len()
	m.buf.PushRun(objs, m.runInitial)
	if m.buf.maxPending < 0 {
		if got := m.buf.Len() - before; got != len(objs) {
			m.t.Fatalf("a run of %d adds made Len grow by %d", len(objs), got)
		}
	}
	m.checkBound()
}

// checkBound checks how much the buffer holds.
func (m *nbModel) checkBound() {
	// Memory bound: plain mode never holds more than maxPending; coalescing holds one
	// element per key plus the keyless notifications.
	if !m.buf.coalescing && m.buf.maxPending >= 0 && m.buf.plain.Len() > m.buf.maxPending {
		m.t.Fatalf("plain buffer holds %d > maxPending %d", m.buf.plain.Len(), m.buf.maxPending)
	}
	if m.buf.coalescing && m.buf.Len() > len(m.keys)+len(m.keyless)-m.nextKeyless {
		m.t.Fatalf("coalescing buffer holds %d elements for %d keys", m.buf.Len(), len(m.keys))
	}
}

// event pushes one random change of the source, or a resync, or a keyless notification.
func (m *nbModel) event(r *rand.Rand, initial bool) {
	key := m.keys[r.IntN(len(m.keys))]
	name := key
	cur, exists := m.source["ns/"+key]
	switch p := r.IntN(100); {
	case initial:
		if exists {
			return
		}
		m.uids++
		obj := m.newState(name, m.uids)
		m.source["ns/"+key] = obj
		m.initialKeys["ns/"+key] = true
		m.push(addNotification(obj, true))
	case p < 3:
		label := fmt.Sprintf("keyless-%d", len(m.keyless))
		m.keyless = append(m.keyless, label)
		m.push(updateNotification(label, label))
	case !exists:
		m.uids++
		obj := m.newState(name, m.uids)
		m.source["ns/"+key] = obj
		m.push(addNotification(obj, false))
	case p < 15:
		// A watch delete carries the object as the server deleted it (a new version); a
		// delete found by a relist carries the cached object in a tombstone.
		delete(m.source, "ns/"+key)
		var old interface{} = m.newState(name, cur.uid)
		if p < 8 {
			old = DeletedFinalStateUnknown{Key: "ns/" + key, Obj: cur}
		}
		m.push(deleteNotification(old))
	case p < 25:
		m.push(updateNotification(cur, cur)) // resync
	default:
		obj := m.newState(name, cur.uid)
		m.source["ns/"+key] = obj
		m.push(updateNotification(cur, obj))
	}
}

// deliver pops one element, if any, and checks what the handler would receive.
func (m *nbModel) deliver() bool {
	d, ok, _ := m.buf.Pop()
	if !ok {
		return false
	}
	m.initialPending -= d.initialAdds
	if m.initialPending < 0 {
		m.t.Fatalf("more initial adds reported processed than pushed")
	}
	if !d.call {
		return true
	}
	m.calls++
	m.gotLog = append(m.gotLog, d.n)
	n := d.n
	if label, ok := n.obj.(string); ok {
		if m.nextKeyless >= len(m.keyless) || m.keyless[m.nextKeyless] != label {
			m.t.Fatalf("keyless notification %q out of order", label)
		}
		m.nextKeyless++
		return true
	}
	obj := finalStateOf(n.obj).(*nbObj)
	key := "ns/" + obj.Name
	last, seen := m.view[key]
	if obj.rv < m.highest[key] {
		m.t.Fatalf("%s went backwards: rv %d after %d", key, obj.rv, m.highest[key])
	}
	m.highest[key] = obj.rv
	switch n.kind() {
	case notifyAdd:
		if seen {
			m.t.Fatalf("OnAdd for %s, which the handler has (rv %d)", key, last.rv)
		}
		if n.isInitialAdd() && !m.initialKeys[key] {
			m.t.Fatalf("initial-list add for %s, which was not in the initial list", key)
		}
		m.view[key] = obj
	case notifyUpdate:
		if !seen || n.oldObj() != last {
			m.t.Fatalf("OnUpdate for %s: old object %v is not what the handler last received (%v)", key, n.oldObj(), last)
		}
		m.view[key] = obj
	case notifyDelete:
		if !seen {
			m.t.Fatalf("OnDelete for %s, which the handler does not have", key)
		}
		delete(m.view, key)
	}
	return true
}

// finish drains the buffer and checks the handler's view equals the source.
func (m *nbModel) finish() {
	m.flushRun()
	for m.deliver() {
	}
	for _, l := range m.runLists {
		if !slices.Equal(l[0], l[1]) {
			m.t.Fatal("a run's list was written to")
		}
	}
	if m.buf.coalescing || m.buf.byKey != nil {
		m.t.Fatal("buffer still coalescing after draining")
	}
	if m.initialPending != 0 {
		m.t.Fatalf("%d initial adds never reported processed", m.initialPending)
	}
	if m.nextKeyless != len(m.keyless) {
		m.t.Fatalf("%d of %d keyless notifications delivered", m.nextKeyless, len(m.keyless))
	}
	if len(m.view) != len(m.source) {
		m.t.Fatalf("handler view has %d keys, source %d", len(m.view), len(m.source))
	}
	for k, obj := range m.source {
		if m.view[k] != obj {
			m.t.Fatalf("handler view of %s is %v, source has %v", k, m.view[k], obj)
		}
	}
	if got := uint64(m.calls) + m.buf.coalescedAway; got != uint64(m.pushed) {
		m.t.Fatalf("calls %d + coalesced away %d != pushed %d", m.calls, m.buf.coalescedAway, m.pushed)
	}
}

// nbRun plays one random scenario: an initial list, then events while the handler stalls and
// resumes at random points.
func nbRun(t *testing.T, seed uint64, maxPending, nKeys, steps int) *nbModel {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := newNBModel(t, maxPending, nKeys)
	m.runs = r.IntN(2) == 0
	for range r.IntN(2 * nKeys) {
		m.event(r, true)
	}
	stalled := r.IntN(2) == 0
	for range steps {
		if r.IntN(10) == 0 {
			stalled = !stalled
		}
		if r.IntN(8) == 0 {
			m.flushRun()
			m.runs = !m.runs
		}
		if !stalled && r.IntN(3) == 0 {
			for range 1 + r.IntN(4) {
				m.deliver()
			}
		}
		m.event(r, false)
	}
	m.finish()
	return m
}

// TestNotificationBufferModel checks every guarantee of the coalescing buffer over many random
// streams, and that without maxPending the stream passes unchanged.
func TestNotificationBufferModel(t *testing.T) {
	cases := []struct {
		name       string
		maxPending int
		keys       int
	}{
		{"never coalesces", -1, 8},
		{"coalesces at once", 0, 8},
		{"small bound", 3, 8},
		{"bound above keys", 20, 8},
		{"many keys", 10, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			episodes := uint64(0)
			for seed := range uint64(300) {
				m := nbRun(t, seed, tc.maxPending, tc.keys, 400)
				episodes += m.buf.episodes
				if tc.maxPending < 0 && fmt.Sprint(m.gotLog) != fmt.Sprint(m.plainLog) {
					t.Fatalf("seed %d: stream changed without maxPending", seed)
				}
			}
			if (episodes == 0) != (tc.maxPending < 0) {
				t.Fatalf("%d coalescing episodes", episodes)
			}
		})
	}
}

// FuzzNotificationBuffer runs the model on fuzzer-chosen seeds and sizes.
func FuzzNotificationBuffer(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(4))
	f.Add(uint64(7), uint8(5), uint8(30))
	f.Fuzz(func(t *testing.T, seed uint64, maxPending, keys uint8) {
		nbRun(t, seed, int(maxPending%64)-1, 1+int(keys%64), 300)
	})
}

// TestNotificationBufferResolve pins the notification each folded sequence turns into.
func TestNotificationBufferResolve(t *testing.T) {
	v1 := &nbObj{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, rv: 1}
	v2 := &nbObj{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, rv: 2}
	v3 := &nbObj{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, rv: 3}
	add := func(o *nbObj, initial bool) notification {
		return addNotification(o, initial)
	}
	upd := func(o, n *nbObj) notification { return updateNotification(o, n) }
	del := func(o interface{}) notification { return deleteNotification(o) }
	cases := []struct {
		name        string
		in          []notification
		want        string
		initialAdds int
	}{
		{"single delete unchanged", []notification{del(v1)}, "delete 1", 0},
		{"adds and updates", []notification{add(v1, false), upd(v1, v2), upd(v2, v3)}, "add 3 initial=false", 0},
		{"initial add stays initial", []notification{add(v1, true), upd(v1, v2)}, "add 2 initial=true", 1},
		{"updates", []notification{upd(v1, v2), upd(v2, v3)}, "update 1->3", 0},
		{"resyncs", []notification{upd(v2, v2), upd(v2, v2)}, "update 2->2", 0},
		{"update then delete", []notification{upd(v1, v2), del(v2)}, "delete tombstone 2", 0},
		{"delete then re-create", []notification{del(v1), add(v2, false)}, "update 1->2", 0},
		{"relist delete then re-create", []notification{del(DeletedFinalStateUnknown{Key: "ns/a", Obj: v1}), add(v2, false)}, "update 1->2", 0},
		{"appeared and vanished", []notification{add(v1, true), del(v1)}, "nothing", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newNotificationBuffer(0) // coalesces from the first push on
			for _, n := range tc.in {
				b.Push(n)
			}
			d, ok, _ := b.Pop()
			if !ok {
				t.Fatal("nothing to pop")
			}
			if got := nbDescribe(d); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if d.initialAdds != tc.initialAdds {
				t.Fatalf("initialAdds %d, want %d", d.initialAdds, tc.initialAdds)
			}
			if _, ok, _ := b.Pop(); ok {
				t.Fatal("more than one delivery for one key")
			}
		})
	}
}

func nbDescribe(d delivery) string {
	if !d.call {
		return "nothing"
	}
	rv := func(o interface{}) int { return finalStateOf(o).(*nbObj).rv }
	switch d.n.kind() {
	case notifyAdd:
		return fmt.Sprintf("add %d initial=%v", rv(d.n.newObj()), d.n.isInitialAdd())
	case notifyUpdate:
		return fmt.Sprintf("update %d->%d", rv(d.n.oldObj()), rv(d.n.newObj()))
	default:
		if _, ok := d.n.oldObj().(DeletedFinalStateUnknown); ok {
			return fmt.Sprintf("delete tombstone %d", rv(d.n.oldObj()))
		}
		return fmt.Sprintf("delete %d", rv(d.n.oldObj()))
	}
}

// BenchmarkNotificationBuffer measures one push and one pop of an update over 10k objects:
// without a bound (client-go's behaviour), with a bound the handler keeps up with (the cost
// of recording deliveries), and while coalescing with 1000 notifications behind.
func BenchmarkNotificationBuffer(b *testing.B) {
	objs := make([]*nbObj, 10000)
	for i := range objs {
		objs[i] = &nbObj{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("obj-%d", i)}, rv: i}
	}
	cases := []struct {
		name       string
		maxPending int
		behind     int
	}{
		{"unbounded", -1, 0},
		{"bounded/keeping-up", 1000, 0},
		{"bounded/coalescing", 1000, 1001},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			buf := newNotificationBuffer(tc.maxPending)
			for i := range tc.behind {
				o := objs[i%len(objs)]
				buf.Push(updateNotification(o, o))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				o := objs[(i*7919)%len(objs)]
				buf.Push(updateNotification(o, o))
				buf.Pop()
			}
		})
	}
}

// oldObj (tests only) returns the old object of an update or the object of a delete; nil for
// an add.
func (n notification) oldObj() interface{} {
	switch n.kind() {
	case notifyUpdate:
		return n.tag
	case notifyDelete:
		return n.obj
	}
	return nil
}

// newObj (tests only) returns the object of an add or the new object of an update; nil for a delete.
func (n notification) newObj() interface{} {
	if n.kind() == notifyDelete {
		return nil
	}
	return n.obj
}

// TestNotificationEncoding checks that each kind of notification gives back exactly what it was
// built from, including update objects that could be mistaken for a marker: nil, tombstones and
// values of types that cannot be compared.
func TestNotificationEncoding(t *testing.T) {
	obj := &nbObj{rv: 1}
	uncomparable := map[string]int{"a": 1}
	tombstone := DeletedFinalStateUnknown{Key: "ns/a", Obj: obj}
	cases := []struct {
		name           string
		n              notification
		kind           notificationKind
		initial        bool
		oldObj, newObj interface{}
	}{
		{"add", addNotification(obj, false), notifyAdd, false, nil, obj},
		{"initial add", addNotification(obj, true), notifyAdd, true, nil, obj},
		{"update", updateNotification(tombstone, obj), notifyUpdate, false, tombstone, obj},
		{"update from nil", updateNotification(nil, obj), notifyUpdate, false, nil, obj},
		{"update of nil", updateNotification(obj, nil), notifyUpdate, false, obj, nil},
		{"update of uncomparable values", updateNotification(uncomparable, uncomparable), notifyUpdate, false, uncomparable, uncomparable},
		{"delete", deleteNotification(obj), notifyDelete, false, obj, nil},
		{"delete of a tombstone", deleteNotification(tombstone), notifyDelete, false, tombstone, nil},
		{"delete of nil", deleteNotification(nil), notifyDelete, false, nil, nil},
	}
	same := func(a, b interface{}) bool { return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.n.kind(); got != tc.kind {
				t.Errorf("kind() = %v, want %v", got, tc.kind)
			}
			if got := tc.n.isInitialAdd(); got != tc.initial {
				t.Errorf("isInitialAdd() = %v, want %v", got, tc.initial)
			}
			if got := tc.n.oldObj(); !same(got, tc.oldObj) {
				t.Errorf("oldObj() = %#v, want %#v", got, tc.oldObj)
			}
			if got := tc.n.newObj(); !same(got, tc.newObj) {
				t.Errorf("newObj() = %#v, want %#v", got, tc.newObj)
			}
			// The listener calls the handler method of the kind with exactly these objects.
			var calls []string
			h := ResourceEventHandlerDetailedFuncs{
				AddFunc: func(obj interface{}, initial bool) {
					calls = append(calls, fmt.Sprintf("add %#v %v", obj, initial))
				},
				UpdateFunc: func(oldObj, newObj interface{}) {
					calls = append(calls, fmt.Sprintf("update %#v %#v", oldObj, newObj))
				},
				DeleteFunc: func(obj interface{}) { calls = append(calls, fmt.Sprintf("delete %#v", obj)) },
			}
			l := newProcessListener(klog.Background(), h, 0, 0, clock.RealClock{}, newInfTestChecker("up"))
			if !l.deliver(delivery{n: tc.n, call: true}, 0) {
				t.Fatal("deliver reported a failure")
			}
			var want string
			switch tc.kind {
			case notifyAdd:
				want = fmt.Sprintf("add %#v %v", tc.newObj, tc.initial)
			case notifyUpdate:
				want = fmt.Sprintf("update %#v %#v", tc.oldObj, tc.newObj)
			case notifyDelete:
				want = fmt.Sprintf("delete %#v", tc.oldObj)
			}
			if len(calls) != 1 || calls[0] != want {
				t.Errorf("handler calls %q, want [%q]", calls, want)
			}
		})
	}
	if size := unsafe.Sizeof(notification{}); size != 32 {
		t.Errorf("a queued notification takes %d bytes, want 32", size)
	}
}
