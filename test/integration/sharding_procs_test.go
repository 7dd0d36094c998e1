package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kcache/cache/examples/sharded/checksum"
	"github.com/kcache/cache/sharding"
	"github.com/kcache/cache/test/integration/framework"
)

// The replicas of TestShardingProcesses authenticate as users of their own, so that the API
// server's audit log tells which process made each write; the test's writer is one more user.
// The audit policy logs, for these users only, every write to ConfigMaps, Secrets and Leases
// with the response: labels and resourceVersion, which member is whose, and in hash mode the
// epochs and acknowledgements the Leases carry.
const (
	procsGroup  = "kcache:sharding-procs"
	procsWriter = "procs-writer"
)

// procsReplicas are the replica processes' users, which are also their member names' prefixes.
var procsReplicas = []string{"procs-a", "procs-b", "procs-c", "procs-d", "procs-e", "procs-f"}

// procsUsers returns the users the shared cluster authenticates for TestShardingProcesses.
func procsUsers() []framework.User {
	var out []framework.User
	for _, name := range append(slices.Clone(procsReplicas), procsWriter) {
		out = append(out, framework.User{Name: name, Groups: []string{procsGroup}})
	}
	return out
}

// procsAuditPolicy is the shared cluster's audit policy: nothing but the writes of
// TestShardingProcesses's users.
const procsAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  userGroups: ["` + procsGroup + `"]
  verbs: ["create", "update", "patch", "delete"]
  resources:
  - group: ""
    resources: ["configmaps", "secrets"]
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: None
`

// shardingProcsObjectsEnv sets the number of ConfigMaps TestShardingProcesses shards (default
// 400).
const shardingProcsObjectsEnv = "KCACHE_SHARDING_PROCS_OBJECTS"

// shardingProcsAllEnv, set to any value, makes TestShardingProcesses run hash mode with
// client-side selection too (the selection of servers without shard selectors), which adds
// about two minutes.
const shardingProcsAllEnv = "KCACHE_SHARDING_PROCS_ALL"

// Timing of TestShardingProcesses. The members' leases last procsLease (renewed every
// second, given up after 3 s of failed renewals): short enough for a test of a few minutes,
// long enough that six processes, kube-apiserver and etcd on two cores renew in time. The
// writer changes a random ConfigMap's data procsWriteRate times a second in every phase; a
// phase's event comes after its first procsWritesBefore writes.
const (
	procsLease        = 6 * time.Second
	procsWriteRate    = 40
	procsWritesBefore = 80
	// procsSettleTimeout bounds every wait for the ring to settle and the Secrets to converge.
	procsSettleTimeout = 2 * time.Minute
)

// TestShardingProcesses runs examples/sharded as separate processes against the real API
// server — kcache and controller-runtime replicas, each authenticating as a user of its own,
// with leases of procsLease — and drives the ring through a join, a clean leave (SIGTERM), a
// crash of a member (SIGKILL) and a crash of the sharder's process (SIGKILL), while a writer
// changes the ConfigMaps' data. After every event the writer stops and every ConfigMap's Secret
// must come to hold the SHA-256 of its data. Then it judges the run from the API server's audit
// log (see sharding_audit_test.go): no Secret write outside its process's ownership of the
// ConfigMap (0 double reconciles), the owner changes, and how long after each crash the dead
// process's ConfigMaps were reassigned — at most procsLease + 5 s after a member's crash, at
// most 2 × procsLease + 5 s after the sharder's.
//
// Subtest labels runs the example's label mode; hash its zero-write mode (-selection hash,
// selected on the server, which runs with ShardedListAndWatch), where in addition no replica
// may write to a ConfigMap or a Secret's labels; "hash client-side" (with
// $KCACHE_SHARDING_PROCS_ALL) selects client-side, as on a server without shard selectors.
func TestShardingProcesses(t *testing.T) {
	if cluster == nil {
		t.Skip("runs in the process that started the cluster: it reads the API server's audit log")
	}
	n := 400
	if v := os.Getenv(shardingProcsObjectsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			t.Fatalf("%s=%q: want a number ≥ 10", shardingProcsObjectsEnv, v)
		}
	}
	bin := buildSharded(t)
	t.Run("labels", func(t *testing.T) { newProcsRun(t, bin, n, "labels").run() })
	t.Run("hash", func(t *testing.T) {
		if !hasFlag(t, bin, "selection") {
			t.Skip("examples/sharded has no -selection flag")
		}
		newProcsRun(t, bin, n, "hash").run()
	})
	t.Run("hash client-side", func(t *testing.T) {
		if os.Getenv(shardingProcsAllEnv) == "" {
			t.Skipf("set %s=1 to run hash mode with client-side selection as well", shardingProcsAllEnv)
		}
		if !hasFlag(t, bin, "client-side") {
			t.Skip("examples/sharded has no -client-side flag")
		}
		newProcsRun(t, bin, n, "hash", "-client-side").run()
	})
}

// buildSharded builds examples/sharded into a temporary directory and returns the binary.
func buildSharded(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sharded")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := framework.ChildCommand(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "examples", "sharded")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/sharded: %v\n%s", err, out)
	}
	t.Logf("built examples/sharded in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// hasFlag reports whether the program bin has the flag name, by its usage message.
func hasFlag(t *testing.T, bin, name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := framework.ChildCommand(ctx, bin, "-help").CombinedOutput() // -help exits 0 or 2
	return bytes.Contains(out, []byte("  -"+name+" ")) || bytes.Contains(out, []byte("  -"+name+"\n"))
}

// shardedProc is one replica process.
type shardedProc struct {
	name              string
	controllerRuntime bool
	cmd               *exec.Cmd
	logPath           string
	// stopped is set when the test signals the process.
	stopped bool
	// done is closed when the process has exited, with waitErr.
	done    chan struct{}
	waitErr error
}

func (p *shardedProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// wait waits up to timeout for the process to exit and reports whether it did.
func (p *shardedProc) wait(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

// procsEvent is one event of the run, for the report.
type procsEvent struct {
	what, proc string
	// kind is "start", "join", "leave", "crash" or "sharder crash".
	kind string
	// at is the event's time; end when the phase ended (the ring settled, every Secret right).
	at, end time.Time
	// writes is the number of ConfigMap changes the writer made in the phase.
	writes int
	// converged is how long after the writer's last change every Secret was right.
	converged time.Duration
}

// procsRun is one run of TestShardingProcesses in a namespace of its own.
type procsRun struct {
	t   *testing.T
	bin string
	n   int
	// selection is the example's -selection: "labels" or "hash"; extraArgs more flags.
	selection string
	extraArgs []string
	ns        string
	ring      string
	labels    sharding.Labels
	dir       string
	// admin reads the state; writer creates and changes the ConfigMaps.
	admin, writer kubernetes.Interface
	procs         map[string]*shardedProc
	events        []procsEvent
	ctx           context.Context
}

func newProcsRun(t *testing.T, bin string, n int, selection string, extraArgs ...string) *procsRun {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &procsRun{t: t, bin: bin, n: n, selection: selection, extraArgs: extraArgs, dir: t.TempDir(), procs: map[string]*shardedProc{}, ctx: ctx,
		ring: "procs-" + strconv.Itoa(rand.IntN(1e6))}
	var err error
	if r.labels, err = sharding.NewLabels(r.ring); err != nil {
		t.Fatal(err)
	}
	cfg := conn.Config()
	if r.admin, err = kubernetes.NewForConfigAndClient(cfg, httpClientFor(t, cfg)); err != nil {
		t.Fatal(err)
	}
	wc, ok := cluster.UserConnection(procsWriter)
	if !ok {
		t.Fatalf("the cluster has no user %s", procsWriter)
	}
	wcfg := wc.Config()
	if r.writer, err = kubernetes.NewForConfigAndClient(wcfg, httpClientFor(t, wcfg)); err != nil {
		t.Fatal(err)
	}
	r.ns = newNamespace(ctx, t, r.admin.CoreV1())
	return r
}

// report logs a line of the measured results, also to stderr so that `make integration` shows it.
func (r *procsRun) report(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.t.Log(msg)
	fmt.Fprintln(os.Stderr, "sharding processes:", msg)
}

// kubeconfig writes a kubeconfig for user and returns its path.
func (r *procsRun) kubeconfig(user string) string {
	t := r.t
	uc, ok := cluster.UserConnection(user)
	if !ok {
		t.Fatalf("the cluster has no user %s", user)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["it"] = &clientcmdapi.Cluster{Server: uc.Host, CertificateAuthority: uc.CAFile}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: uc.Token}
	cfg.Contexts["it"] = &clientcmdapi.Context{Cluster: "it", AuthInfo: user}
	cfg.CurrentContext = "it"
	path := filepath.Join(r.dir, user+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// start runs the replica process of user name, and returns once it holds its member Lease.
func (r *procsRun) start(name string, controllerRuntime bool) *shardedProc {
	t := r.t
	t.Helper()
	args := []string{
		"-kubeconfig", r.kubeconfig(name), "-namespace", r.ns, "-ring", r.ring, "-name", name,
		"-lease-duration", procsLease.String(), "-renew-deadline", "3s", "-retry-period", "1s",
	}
	if r.selection != "labels" {
		args = append(args, "-selection", r.selection)
	}
	args = append(args, r.extraArgs...)
	if controllerRuntime {
		args = append(args, "-controller-runtime")
	}
	p := &shardedProc{name: name, controllerRuntime: controllerRuntime, logPath: filepath.Join(r.dir, name+".log"), done: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The process gets no context: the test ends it with a signal (and the kernel kills it if
	// the test process dies).
	p.cmd = framework.ChildCommand(context.Background(), r.bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	r.procs[name] = p
	t.Cleanup(func() {
		if p.alive() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			if !p.wait(30 * time.Second) {
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
		if t.Failed() {
			t.Logf("log of %s (last lines):\n%s", name, tail(p.logPath, 30))
		}
	})
	eventually(r.ctx, t, time.Minute, name+" to hold its member lease", func() bool { return r.member(name) != "" })
	return p
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}

// member returns the member name of the process of user name that holds its Lease (the
// newest, if it rejoined), or "".
func (r *procsRun) member(name string) string {
	leases, err := r.admin.CoordinationV1().Leases(r.ns).List(r.ctx, metav1.ListOptions{LabelSelector: r.labels.LeaseSelector().String()})
	if err != nil {
		return ""
	}
	var found string
	var newest time.Time
	for _, l := range leases.Items {
		holder := l.Spec.HolderIdentity
		if strings.HasPrefix(l.Name, name+"-") && holder != nil && *holder == l.Name && l.CreationTimestamp.After(newest) {
			found, newest = l.Name, l.CreationTimestamp.Time
		}
	}
	return found
}

// members returns the member names of the live processes, sorted.
func (r *procsRun) members() []string {
	var out []string
	for name, p := range r.procs {
		if p.alive() {
			if m := r.member(name); m != "" {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// sharder returns the process that holds the sharder Lease, or "".
func (r *procsRun) sharder() string {
	l, err := r.admin.CoordinationV1().Leases(r.ns).Get(r.ctx, r.ring+"-sharder", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	for name := range r.procs {
		if strings.HasPrefix(*l.Spec.HolderIdentity, name+"-") {
			return name
		}
	}
	return ""
}

// wrong lists the server's ConfigMaps and Secrets and returns how many ConfigMaps lack a
// Secret they control holding the checksum of their data, with an example.
func (r *procsRun) wrong() (int, string) {
	cms, err := r.admin.CoreV1().ConfigMaps(r.ns).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		return -1, err.Error()
	}
	secrets, err := r.admin.CoreV1().Secrets(r.ns).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		return -1, err.Error()
	}
	byName := map[string]*corev1.Secret{}
	for i := range secrets.Items {
		byName[secrets.Items[i].Name] = &secrets.Items[i]
	}
	bad, example := 0, ""
	if len(cms.Items) != r.n {
		return -1, fmt.Sprintf("%d ConfigMaps, want %d", len(cms.Items), r.n)
	}
	for _, cm := range cms.Items {
		s := byName[checksum.SecretName(cm.Name)]
		var why string
		switch {
		case s == nil:
			why = "no Secret"
		case metav1.GetControllerOf(s) == nil || metav1.GetControllerOf(s).UID != cm.UID:
			why = "Secret not controlled by it"
		case string(s.Data["sha256"]) != checksum.Of(cm.Data):
			why = "stale checksum"
		default:
			continue
		}
		bad++
		if example == "" {
			example = cm.Name + ": " + why
		}
	}
	return bad, example
}

// placed reports whether every ConfigMap, and its Secret, is labelled with the member
// rendezvous hashing gives it among members, none draining.
func (r *procsRun) placed(members []string) bool {
	if len(members) == 0 {
		return false
	}
	cms, err := r.admin.CoreV1().ConfigMaps(r.ns).List(r.ctx, metav1.ListOptions{})
	if err != nil || len(cms.Items) != r.n {
		return false
	}
	secrets, err := r.admin.CoreV1().Secrets(r.ns).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	secretOwner := map[string]string{}
	for _, s := range secrets.Items {
		secretOwner[s.Name] = s.Labels[r.labels.Shard()]
	}
	for _, cm := range cms.Items {
		want, _ := sharding.Assign(r.ns+"/"+cm.Name, members)
		if cm.Labels[r.labels.Shard()] != want || cm.Labels[r.labels.Drain()] != "" || secretOwner[checksum.SecretName(cm.Name)] != want {
			return false
		}
	}
	return true
}

// epochSettled reports whether the sharder's Lease publishes an epoch of exactly members, and
// every member's Lease acknowledges it (hash mode).
func (r *procsRun) epochSettled(members []string) bool {
	if len(members) == 0 {
		return false
	}
	leases, err := r.admin.CoordinationV1().Leases(r.ns).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	var epoch string
	acks := map[string]string{}
	for _, l := range leases.Items {
		if l.Name == r.ring+"-sharder" {
			epoch = l.Annotations[epochAnnotation]
		}
		acks[l.Name] = l.Annotations[acknowledgedAnnotation]
	}
	num, names, ok := strings.Cut(epoch, ":")
	if !ok || names != strings.Join(members, ",") {
		return false
	}
	for _, m := range members {
		if acks[m] != num {
			return false
		}
	}
	return true
}

// settle waits until the ring has settled on the live members and every Secret is right. It
// returns how long after writerDone (the last change of a ConfigMap) the Secrets were right.
func (r *procsRun) settle(what string, writerDone time.Time) time.Duration {
	t := r.t
	t.Helper()
	eventually(r.ctx, t, procsSettleTimeout, what+": the ConfigMaps to be placed on the live members", func() bool {
		if r.selection == "hash" {
			return r.epochSettled(r.members())
		}
		return r.placed(r.members())
	})
	deadline := time.Now().Add(procsSettleTimeout)
	for {
		bad, example := r.wrong()
		if bad == 0 {
			return time.Since(writerDone)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d ConfigMaps have no right checksum Secret %v after the last change (e.g. %s): the controller did not converge",
				what, bad, procsSettleTimeout, example)
		}
		timer := time.NewTimer(250 * time.Millisecond)
		select {
		case <-r.ctx.Done():
			timer.Stop()
			t.Fatal(r.ctx.Err())
		case <-timer.C:
		}
	}
}

// writer changes random ConfigMaps' data at procsWriteRate a second, total times, and then
// stops by itself. before is closed after the first procsWritesBefore changes.
type writer struct {
	before chan struct{}
	done   chan struct{}
	// At done: the time of the last change, and the first error.
	last time.Time
	err  error
}

func (r *procsRun) write(total int) *writer {
	w := &writer{before: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(time.Second / procsWriteRate)
		defer tick.Stop()
		for i := range total {
			if i == procsWritesBefore {
				close(w.before)
			}
			select {
			case <-r.ctx.Done():
				w.err = r.ctx.Err()
				return
			case <-tick.C:
			}
			name := fmt.Sprintf("cm-%05d", rand.IntN(r.n))
			patch := fmt.Sprintf(`{"data":{"value":"%d-%d"}}`, time.Now().UnixNano(), i)
			if _, err := r.writer.CoreV1().ConfigMaps(r.ns).Patch(r.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && w.err == nil {
				w.err = err
			}
			w.last = time.Now()
		}
		if total <= procsWritesBefore {
			close(w.before)
		}
	}()
	return w
}

func (w *writer) wait(t *testing.T) {
	t.Helper()
	<-w.done
	if w.err != nil {
		t.Fatalf("writer: %v", w.err)
	}
}

// phase runs one event while the writer changes ConfigMaps (total changes, the event after the
// first procsWritesBefore), then waits for the ring to settle and the Secrets to converge.
func (r *procsRun) phase(kind, proc string, total int, event func()) {
	t := r.t
	t.Helper()
	w := r.write(total)
	select {
	case <-w.before:
	case <-w.done:
	}
	at := time.Now()
	event()
	w.wait(t)
	converged := r.settle(kind+" "+proc, w.last)
	r.events = append(r.events, procsEvent{what: kind + " " + proc, kind: kind, proc: proc, at: at, end: time.Now(), writes: total, converged: converged})
	r.report("%s %s: ring settled, Secrets right %v after the last of %d changes", kind, proc, converged.Round(time.Millisecond), total)
}

func (r *procsRun) run() {
	t := r.t
	// Five replicas, kcache and controller-runtime variants alternating.
	for i, name := range procsReplicas[:5] {
		r.start(name, i%2 == 1)
	}
	start := time.Now()
	createMany(r.ctx, t, r.n, 8, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"value": "0"}}
		_, err := r.writer.CoreV1().ConfigMaps(r.ns).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	converged := r.settle("start", time.Now())
	r.events = append(r.events, procsEvent{what: "start", kind: "start", at: start, end: time.Now(), converged: converged})
	r.report("start: %d ConfigMaps on %d replicas, Secrets right %v after the last create (%v after the first)",
		r.n, len(r.members()), converged.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	// A sixth replica joins.
	r.phase("join", procsReplicas[5], 8*procsWriteRate, func() { r.start(procsReplicas[5], true) })

	// A replica that is not the sharder leaves cleanly: SIGTERM, and it exits 0.
	leaving := r.pick(false)
	r.phase("leave", leaving, 8*procsWriteRate, func() {
		p := r.procs[leaving]
		p.stopped = true
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		if !p.wait(30 * time.Second) {
			t.Fatalf("%s did not exit within 30s of SIGTERM", leaving)
		}
		if p.waitErr != nil {
			t.Errorf("%s exited with %v after SIGTERM, want status 0", leaving, p.waitErr)
		}
	})

	// A member that is not the sharder is killed: its lease expires, the sharder reassigns.
	crashed := r.pick(false)
	r.phase("crash", crashed, int((procsLease+8*time.Second).Seconds())*procsWriteRate, func() { r.kill(crashed) })

	// The sharder's process is killed: another replica wins the sharder lease after it
	// expires, and reassigns the dead member's ConfigMaps one lease duration later.
	sharder := r.pick(true)
	r.phase("sharder crash", sharder, int((2*procsLease+8*time.Second).Seconds())*procsWriteRate, func() { r.kill(sharder) })

	r.judge()
}

// pick returns a live process that holds the sharder lease (sharder) or does not.
func (r *procsRun) pick(sharder bool) string {
	t := r.t
	t.Helper()
	var holder string
	eventually(r.ctx, t, time.Minute, "a live process to hold the sharder lease", func() bool {
		holder = r.sharder()
		return holder != "" && r.procs[holder].alive()
	})
	if sharder {
		return holder
	}
	// Prefer a kcache replica: the one that used to stay wrong after a crash.
	var names []string
	for name, p := range r.procs {
		if p.alive() && name != holder {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		pa, pb := r.procs[a].controllerRuntime, r.procs[b].controllerRuntime
		if pa != pb {
			if !pa {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(names) == 0 {
		t.Fatal("no live process besides the sharder")
	}
	return names[0]
}

// kill sends SIGKILL to the process of name and waits for it to exit.
func (r *procsRun) kill(name string) {
	p := r.procs[name]
	p.stopped = true
	_ = p.cmd.Process.Kill()
	if !p.wait(30 * time.Second) {
		r.t.Fatalf("%s did not exit after SIGKILL", name)
	}
}

// judge reads the audit log and checks the run against the targets.
func (r *procsRun) judge() {
	t := r.t
	writes, err := readAuditLog(cluster.APIServer.AuditLogPath(), r.ns)
	if err != nil {
		t.Fatal(err)
	}
	a := newShardAudit(writes, procsReplicas, checksum.SecretSuffix)
	if r.selection == "hash" {
		// The example keys a ConfigMap by its UID (and its Secret by its owner's UID).
		a.hashPeriods(r.ring+"-sharder", func(cm string) (uint64, bool) {
			for _, w := range a.cmWrites[cm] {
				if w.uid != "" {
					return sharding.HashKey(w.uid), true
				}
			}
			return 0, false
		})
	} else {
		a.labelPeriods(r.labels.Shard())
	}
	// The replicas' writes to the sharded objects themselves: the label patches of ConfigMaps
	// and of their Secrets (their creates and updates are the controller's work).
	sharded := 0
	for _, w := range writes {
		if w.ok() && slices.Contains(procsReplicas, w.user) && (w.resource == "configmaps" || w.resource == "secrets" && w.verb == "patch") {
			sharded++
		}
	}
	r.report("audit: the replicas wrote %d times to the sharded ConfigMaps and their Secrets' labels", sharded)
	if r.selection == "hash" && sharded > 0 {
		t.Errorf("in hash mode the replicas wrote %d times to the sharded objects, want 0", sharded)
	}
	doubles, committed := a.doubleReconciles()
	outside, attempts := a.attemptsOutside()
	acked, reassigned, unknown := a.ownerChanges()
	overlaps := a.overlaps()
	r.report("audit: %d writes; %d Secret writes committed, %d double reconciles; %d attempts, %d outside ownership; %d overlapping ownerships",
		len(writes), committed, len(doubles), attempts, len(outside), len(overlaps))
	for i, o := range overlaps {
		if i == 20 {
			break
		}
		t.Errorf("two members owned a ConfigMap at once: %s", o)
	}
	r.report("audit: %d owner changes (%d handed over by acknowledgement, %d reassigned after the owner was gone)",
		acked+reassigned, acked, reassigned)
	if unknown > 0 {
		t.Errorf("%d ownership periods name a member whose Lease create is not in the audit log", unknown)
	}
	for i, d := range doubles {
		if i == 20 {
			break
		}
		t.Errorf("double reconcile: %s", d)
	}
	for i, o := range outside {
		if i == 20 {
			break
		}
		t.Errorf("Secret write outside ownership: %s", o)
	}
	if committed == 0 || acked == 0 || reassigned == 0 {
		t.Errorf("the audit log shows %d Secret writes, %d acknowledged and %d reassigned owner changes; the run exercised nothing", committed, acked, reassigned)
	}

	r.report("| event | ConfigMap changes in the phase | ConfigMaps moved | last moved after the event (target) | changed while moving: new owner's first write, the last after the event | every Secret right after the last change |")
	for _, ev := range r.events {
		row := func(moved int, last time.Duration, target string, stale string) {
			r.report("| %s | %d | %d | %v%s | %s | %v |", ev.what, ev.writes, moved, last.Round(time.Millisecond), target, stale, ev.converged.Round(time.Millisecond))
		}
		switch ev.kind {
		case "start":
			row(0, 0, "", "–")
		case "join":
			keys, last := a.joinedBy(ev.proc, ev.at, ev.end)
			row(keys, last, "", "–")
			if keys == 0 {
				t.Errorf("%s: no ConfigMap moved to it", ev.what)
			}
		case "leave", "crash", "sharder crash":
			d := a.leftBy(ev.proc, ev.at, ev.end)
			var target time.Duration
			switch ev.kind {
			case "crash":
				target = procsLease + 5*time.Second
			case "sharder crash":
				target = 2*procsLease + 5*time.Second
			}
			targetText := ""
			if target > 0 {
				targetText = fmt.Sprintf(" (≤ %v)", target)
			}
			row(d.keys, d.lastMoved, targetText, fmt.Sprintf("%d of %d, %v", d.fixed, d.stale, d.lastFixed.Round(time.Millisecond)))
			switch {
			case d.keys == 0:
				t.Errorf("%s: the audit log shows no ConfigMap owned by it at the event", ev.what)
			case d.stuck > 0:
				t.Errorf("%s: %d of its ConfigMaps were never reassigned", ev.what, d.stuck)
			case target > 0 && d.lastMoved > target:
				t.Errorf("%s: reassignment took %v, more than %v", ev.what, d.lastMoved, target)
			case d.fixed != d.stale:
				t.Errorf("%s: %d ConfigMaps changed while they moved, but the new owners wrote only %d of their Secrets", ev.what, d.stale, d.fixed)
			}
		}
	}
	for name, p := range r.procs {
		if !p.alive() && !p.stopped {
			t.Errorf("%s exited by itself: %v", name, p.waitErr)
		}
	}
}
