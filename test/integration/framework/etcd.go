package framework

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
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
// its watch cache. It uses etcd's JSON gateway to the v3 KV API (on by default), which spares
// the tests a gRPC client.
func (e *Etcd) Compact(ctx context.Context) (int64, error) {
	// Any read reports the store's current revision in its header.
	var rangeResp struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	probe := base64.StdEncoding.EncodeToString([]byte("/kcache-integration/compact-probe"))
	if err := e.post(ctx, "/v3/kv/range", map[string]any{"key": probe}, &rangeResp); err != nil {
		return 0, fmt.Errorf("framework: read etcd revision: %w", err)
	}
	rev, err := strconv.ParseInt(rangeResp.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("framework: etcd revision %q: %w", rangeResp.Header.Revision, err)
	}
	body := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	if err := e.post(ctx, "/v3/kv/compaction", body, nil); err != nil {
		return 0, fmt.Errorf("framework: compact etcd at revision %d: %w", rev, err)
	}
	return rev, nil
}

// post sends a JSON request to etcd's gateway and decodes the answer into out (if not nil).
func (e *Etcd) post(ctx context.Context, path string, in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", path, resp.StatusCode, bytes.TrimSpace(body))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

// stop shuts etcd down, killing it if it takes longer than 10s.
func (e *Etcd) stop() {
	e.proc.stop(10 * time.Second)
}
