package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdReadyTimeout bounds how long a starting etcd may take to report healthy.
const etcdReadyTimeout = 30 * time.Second

// Etcd is a single-member etcd listening on 127.0.0.1, with its data in a directory of its own.
type Etcd struct {
	// URL is the client URL, http://127.0.0.1:PORT.
	URL string

	proc *process
}

// startEtcd runs bin with its data under dir and waits until it reports healthy. It retries on
// fresh ports when the server exits during start-up (a port taken in the meantime).
func startEtcd(ctx context.Context, bin, dir string) (*Etcd, error) {
	var errs []error
	for attempt := range 3 {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		args := []string{
			"--name=default",
			"--data-dir=" + filepath.Join(dir, "etcd-data"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=default=" + peer,
			// The data dir is thrown away after the run; fsync only slows the tests down.
			"--unsafe-no-fsync",
			"--log-level=warn",
		}
		p, err := startProcess("etcd", bin, args, filepath.Join(dir, "etcd.log"))
		if err != nil {
			return nil, err
		}
		e := &Etcd{URL: client, proc: p}
		err = waitReady(ctx, p, etcdReadyTimeout, e.healthy)
		if err == nil {
			return e, nil
		}
		p.kill()
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt+1, err))
		if !errors.Is(err, errExited) {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// healthy asks etcd's /health endpoint.
func (e *Etcd) healthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var h struct {
		Health string `json:"health"`
	}
	if err := json.Unmarshal(body, &h); err != nil || h.Health != "true" {
		return fmt.Errorf("etcd /health answered %d %q", resp.StatusCode, body)
	}
	return nil
}

// Compact compacts etcd's history up to its current revision and returns that revision. After
// it, reads and watches at any older revision fail with "required revision has been
// compacted", which kube-apiserver reports as 410 Gone when it does not serve the request from
// its watch cache.
func (e *Etcd) Compact(ctx context.Context) (int64, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{e.URL},
		DialTimeout: 5 * time.Second,
		Context:     ctx,
		Logger:      zap.NewNop(), // the client's own logs would only repeat the returned errors
	})
	if err != nil {
		return 0, fmt.Errorf("framework: etcd client: %w", err)
	}
	defer cli.Close()
	// Any read reports the store's current revision in its header.
	resp, err := cli.Get(ctx, "/kcache-integration/compact-probe")
	if err != nil {
		return 0, fmt.Errorf("framework: read etcd revision: %w", err)
	}
	rev := resp.Header.Revision
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return 0, fmt.Errorf("framework: compact etcd at revision %d: %w", rev, err)
	}
	return rev, nil
}

// stop shuts etcd down, killing it if it takes longer than 10s.
func (e *Etcd) stop() {
	e.proc.stop(10 * time.Second)
}
