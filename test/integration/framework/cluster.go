// Package framework runs etcd and kube-apiserver on loopback for kcache's integration tests.
//
// A Cluster is one etcd and one kube-apiserver with their data in a temporary directory. The
// servers are child processes that the kernel kills if the test binary dies (Linux), and that
// Stop, a signal handler (HandleSignals) or a test's Cleanup stop otherwise. Every wait is
// bounded.
package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"
)

// KeepEnv names the environment variable that, when set to any value, keeps the cluster
// directory (data, certificates, logs) after Stop.
const KeepEnv = "KCACHE_INTEGRATION_KEEP"

// Options configures a Cluster.
type Options struct {
	// APIServerArgs are extra kube-apiserver flags, appended to the harness's own. Empty by
	// default.
	APIServerArgs []string
	// Users are users with tokens of their own besides the admin (Cluster.UserConnection).
	// None by default.
	Users []User
	// AuditPolicy, if set, is an audit policy (audit.k8s.io/v1 Policy, YAML or JSON) the API
	// servers log by: each writes its audit log as JSON lines to a file in Dir
	// (APIServer.AuditLogPath), in blocking mode, so an event is in the file before its
	// request's response is sent. Empty by default: no audit log.
	AuditPolicy string
}

// auditPolicyFile is the name of the audit policy file in the cluster directory.
const auditPolicyFile = "audit-policy.yaml"

// Cluster is an etcd and a kube-apiserver on 127.0.0.1.
type Cluster struct {
	// Dir holds data, certificates and logs; Stop removes it unless $KCACHE_INTEGRATION_KEEP
	// is set.
	Dir string
	// Etcd is the storage.
	Etcd *Etcd
	// APIServer is the server tests talk to.
	APIServer *APIServer

	bins  Binaries
	opts  Options
	creds credentials

	// mu guards extra and stopped.
	mu      sync.Mutex
	extra   []*APIServer
	stopped bool
}

// Start creates a directory, generates credentials, and starts etcd and a kube-apiserver,
// returning once the API server answers /readyz. On error nothing is left running.
func Start(ctx context.Context, bins Binaries, opts Options) (_ *Cluster, err error) {
	dir, err := os.MkdirTemp("", "kcache-integration-")
	if err != nil {
		return nil, fmt.Errorf("framework: cluster dir: %w", err)
	}
	c := &Cluster{Dir: dir, bins: bins, opts: opts}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.creds, err = writeCredentials(dir, opts.Users); err != nil {
		return nil, err
	}
	if opts.AuditPolicy != "" {
		if err = os.WriteFile(filepath.Join(dir, auditPolicyFile), []byte(opts.AuditPolicy), 0o600); err != nil {
			return nil, fmt.Errorf("framework: audit policy: %w", err)
		}
	}
	if c.Etcd, err = startEtcd(ctx, bins.Etcd, dir); err != nil {
		return nil, err
	}
	if c.APIServer, err = c.newAPIServer("kube-apiserver"); err != nil {
		return nil, err
	}
	if err = c.APIServer.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// StartAPIServer starts one more kube-apiserver on the same etcd, with the same flags and
// credentials but its own port and certificates, as a highly available control plane would
// run. Stop stops it too; callers may stop it earlier.
func (c *Cluster) StartAPIServer(ctx context.Context, name string) (*APIServer, error) {
	a, err := c.newAPIServer(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, errors.New("framework: cluster is stopped")
	}
	c.extra = append(c.extra, a)
	c.mu.Unlock()
	if err := a.Start(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// newAPIServer prepares an API server named name with the cluster's flags, credentials and
// audit policy.
func (c *Cluster) newAPIServer(name string) (*APIServer, error) {
	var policy string
	if c.opts.AuditPolicy != "" {
		policy = filepath.Join(c.Dir, auditPolicyFile)
	}
	return newAPIServer(name, c.bins.KubeAPIServer, c.Dir, c.Etcd.URL, c.creds, policy, c.opts.APIServerArgs)
}

// UserConnection returns how to reach the main API server as user name, one of Options.Users;
// ok is false for any other name.
func (c *Cluster) UserConnection(name string) (conn Connection, ok bool) {
	token, ok := c.creds.userTokens[name]
	if !ok {
		return Connection{}, false
	}
	conn = c.Connection()
	conn.Token = token
	return conn, true
}

// Stop stops every API server, then etcd, then removes Dir (unless $KCACHE_INTEGRATION_KEEP is
// set). It is safe to call more than once and from several goroutines.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	servers := append([]*APIServer{c.APIServer}, c.extra...)
	c.mu.Unlock()

	// API servers first: they hang on to etcd while shutting down.
	var wg sync.WaitGroup
	for _, a := range servers {
		if a != nil {
			wg.Go(a.Stop)
		}
	}
	wg.Wait()
	if c.Etcd != nil {
		c.Etcd.stop()
	}
	if os.Getenv(KeepEnv) == "" {
		_ = os.RemoveAll(c.Dir)
	}
}

// Connection describes how to reach the cluster's main API server and its etcd. It travels to
// child test processes through the environment (see Environ and ConnectionFromEnv).
type Connection struct {
	Host    string `json:"host"`
	Token   string `json:"token"`
	CAFile  string `json:"caFile"`
	EtcdURL string `json:"etcdURL,omitempty"`
}

// ConnectionEnv names the environment variable that carries a Connection as JSON.
const ConnectionEnv = "KCACHE_INTEGRATION_CONNECTION"

// Connection returns how to reach the main API server and etcd.
func (c *Cluster) Connection() Connection {
	conn := c.APIServer.Connection()
	conn.EtcdURL = c.Etcd.URL
	return conn
}

// Config returns a client configuration for the API server: bearer token, the server's
// certificate as trusted CA, no client-side rate limit.
func (conn Connection) Config() *rest.Config {
	return &rest.Config{
		Host:            conn.Host,
		BearerToken:     conn.Token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: conn.CAFile},
		QPS:             -1,
		UserAgent:       "kcache-integration",
	}
}

// Environ returns "KCACHE_INTEGRATION_CONNECTION=<json>", to append to a child's environment.
func (conn Connection) Environ() string {
	data, _ := json.Marshal(conn) // a struct of strings always marshals
	return ConnectionEnv + "=" + string(data)
}

// ConnectionFromEnv reads a Connection from $KCACHE_INTEGRATION_CONNECTION. ok is false when the
// variable is unset.
func ConnectionFromEnv() (conn Connection, ok bool, err error) {
	v, ok := os.LookupEnv(ConnectionEnv)
	if !ok {
		return Connection{}, false, nil
	}
	if err := json.Unmarshal([]byte(v), &conn); err != nil {
		return Connection{}, true, fmt.Errorf("framework: $%s: %w", ConnectionEnv, err)
	}
	return conn, true, nil
}
