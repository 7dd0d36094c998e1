package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

const (
	// apiServerReadyTimeout bounds how long a starting kube-apiserver may take to answer /readyz
	// with ok. Start-up takes 3–10 s on an idle 2-core machine, but more than 2 minutes was
	// seen on one running a dozen other compile and test jobs.
	apiServerReadyTimeout = 5 * time.Minute
	// apiServerStopGrace is how long Stop lets kube-apiserver shut down gracefully before it
	// is killed.
	apiServerStopGrace = 30 * time.Second
)

// APIServer is one kube-apiserver on 127.0.0.1 backed by the cluster's etcd. It keeps its port
// and its certificate directory across Stop/Kill and Start, so a restarted server looks like
// the same server to its clients.
type APIServer struct {
	// Port is the HTTPS port; it does not change across restarts.
	Port int

	name    string
	bin     string
	dir     string
	args    []string
	creds   credentials
	certDir string
	// auditLog is the audit log's path, empty without an audit policy.
	auditLog string

	// mu guards proc.
	mu   sync.Mutex
	proc *process
}

// newAPIServer prepares an instance; Start runs it. auditPolicy is the path of an audit policy
// file, or empty for no audit log.
func newAPIServer(name, bin, dir, etcdURL string, creds credentials, auditPolicy string, extraArgs []string) (*APIServer, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	a := &APIServer{
		Port:    ports[0],
		name:    name,
		bin:     bin,
		dir:     dir,
		creds:   creds,
		certDir: filepath.Join(dir, name+"-certs"),
	}
	a.args = append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(a.Port),
		"--cert-dir=" + a.certDir,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + creds.saPublicKey,
		"--service-account-signing-key-file=" + creds.saPrivateKey,
		"--authorization-mode=AlwaysAllow",
		"--token-auth-file=" + creds.tokenFile,
		"--profiling=false",
		// On SIGTERM, end open watches (clients see a clean end of stream) and exit, instead of
		// waiting for them until the HTTP server's shutdown timeout.
		"--shutdown-watch-termination-grace-period=5s",
	}, extraArgs...)
	if auditPolicy != "" {
		a.auditLog = filepath.Join(dir, name+"-audit.log")
		a.args = append(a.args,
			"--audit-policy-file="+auditPolicy,
			"--audit-log-path="+a.auditLog,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
		)
	}
	return a, nil
}

// Start runs the server (again) on its port and waits until /readyz answers ok. It does
// nothing if the server is already running.
func (a *APIServer) Start(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proc != nil {
		if done, _ := a.proc.exited(); !done {
			return nil
		}
	}
	p, err := startProcess(a.name, a.bin, a.args, filepath.Join(a.dir, a.name+".log"))
	if err != nil {
		return err
	}
	a.proc = p
	if err := waitReady(ctx, p, apiServerReadyTimeout, a.ready); err != nil {
		p.kill()
		return err
	}
	return nil
}

// Stop sends SIGTERM, waits for a graceful shutdown (killing the server after 30s), and
// returns once the process is gone.
func (a *APIServer) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proc != nil {
		a.proc.stop(apiServerStopGrace)
	}
}

// Kill sends SIGKILL: connections drop without a goodbye, as on a crash. It returns once the
// process is gone.
func (a *APIServer) Kill() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proc != nil {
		a.proc.kill()
	}
}

// AuditLogPath is the path of the server's audit log (JSON lines, one audit.k8s.io/v1 Event
// each), or empty when the cluster has no audit policy. The log survives restarts (the
// server appends to it).
func (a *APIServer) AuditLogPath() string { return a.auditLog }

// Host is the server's base URL, https://127.0.0.1:PORT.
func (a *APIServer) Host() string {
	return fmt.Sprintf("https://127.0.0.1:%d", a.Port)
}

// Connection returns what a client needs to reach this server.
func (a *APIServer) Connection() Connection {
	return Connection{
		Host:   a.Host(),
		Token:  a.creds.token,
		CAFile: filepath.Join(a.certDir, "apiserver.crt"),
	}
}

// Config returns a client configuration for this server: the admin token, the server's
// self-signed certificate as the trusted CA, and no client-side rate limit.
func (a *APIServer) Config() *rest.Config {
	return a.Connection().Config()
}

// ready asks /readyz, which answers ok once etcd is reachable and every post-start hook ran.
// Only readiness is probed here, so the certificate is not verified; clients built from Config
// verify it.
func (a *APIServer) ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.Host()+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.creds.token)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		return fmt.Errorf("/readyz answered %d %q", resp.StatusCode, body)
	}
	return nil
}
