package framework

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBinariesFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]os.FileMode // files to create in the directory
		unset   bool
		wantErr string
	}{
		{name: "unset", unset: true, wantErr: "is not set"},
		{name: "empty directory", wantErr: "no such file"},
		{name: "not executable", files: map[string]os.FileMode{"etcd": 0o755, "kube-apiserver": 0o644}, wantErr: "not an executable"},
		{name: "both present", files: map[string]os.FileMode{"etcd": 0o755, "kube-apiserver": 0o755}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, mode := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
					t.Fatal(err)
				}
			}
			if tc.unset {
				t.Setenv(BinDirEnv, "")
			} else {
				t.Setenv(BinDirEnv, dir)
			}
			b, err := BinariesFromEnv()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Etcd != filepath.Join(dir, "etcd") || b.KubeAPIServer != filepath.Join(dir, "kube-apiserver") {
				t.Errorf("binaries %+v, want both in %s", b, dir)
			}
		})
	}
}

func TestWriteCredentials(t *testing.T) {
	dir := t.TempDir()
	c, err := writeCredentials(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := os.ReadFile(c.tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.token + ",admin,admin,system:masters\n"; string(tokens) != want {
		t.Errorf("token file %q, want %q", tokens, want)
	}
	cases := []struct {
		path  string
		parse func([]byte) (any, error)
	}{
		{c.saPrivateKey, func(b []byte) (any, error) { return x509.ParsePKCS1PrivateKey(b) }},
		{c.saPublicKey, func(b []byte) (any, error) { return x509.ParsePKIXPublicKey(b) }},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			data, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			block, _ := pem.Decode(data)
			if block == nil {
				t.Fatalf("%s holds no PEM block", tc.path)
			}
			if _, err := tc.parse(block.Bytes); err != nil {
				t.Errorf("%s: %v", tc.path, err)
			}
		})
	}
	again, err := writeCredentials(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.token == c.token {
		t.Errorf("two clusters got the same token")
	}
}

func TestWriteCredentialsUsers(t *testing.T) {
	c, err := writeCredentials(t.TempDir(), []User{{Name: "alice"}, {Name: "bob", Groups: []string{"audited", "ops"}}})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := os.ReadFile(c.tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := c.userTokens["alice"], c.userTokens["bob"]
	if alice == "" || bob == "" || alice == bob || alice == c.token || bob == c.token {
		t.Fatalf("tokens admin %q, alice %q, bob %q: want three distinct ones", c.token, alice, bob)
	}
	want := c.token + ",admin,admin,system:masters\n" + alice + ",alice,alice\n" + bob + `,bob,bob,"audited,ops"` + "\n"
	if string(tokens) != want {
		t.Errorf("token file %q, want %q", tokens, want)
	}
}

func TestWriteCredentialsInvalidUsers(t *testing.T) {
	for _, users := range [][]User{
		{{Name: ""}},
		{{Name: "admin"}},
		{{Name: "a"}, {Name: "a"}},
		{{Name: "a,b"}},
		{{Name: `a"`}},
		{{Name: "a\nb"}},
		{{Name: "a", Groups: []string{""}}},
		{{Name: "a", Groups: []string{"g,h"}}},
	} {
		dir := t.TempDir()
		if _, err := writeCredentials(dir, users); !errors.Is(err, ErrInvalidUser) {
			t.Errorf("users %q: error %v, want ErrInvalidUser", users, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("users %q: wrote %d files", users, len(entries))
		}
	}
}

func TestConnectionRoundTripsThroughEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     string
		unset   bool
		want    Connection
		wantOK  bool
		wantErr bool
	}{
		{name: "unset", unset: true},
		{name: "malformed", env: "{", wantOK: true, wantErr: true},
		{
			name:   "full",
			env:    Connection{Host: "https://127.0.0.1:1", Token: "t", CAFile: "/ca", EtcdURL: "http://127.0.0.1:2"}.Environ(),
			want:   Connection{Host: "https://127.0.0.1:1", Token: "t", CAFile: "/ca", EtcdURL: "http://127.0.0.1:2"},
			wantOK: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(ConnectionEnv, "")
			if tc.unset {
				os.Unsetenv(ConnectionEnv)
			} else {
				os.Setenv(ConnectionEnv, strings.TrimPrefix(tc.env, ConnectionEnv+"="))
			}
			got, ok, err := ConnectionFromEnv()
			if ok != tc.wantOK || (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ConnectionFromEnv() = %+v, %v, %v; want %+v, %v, error %v", got, ok, err, tc.want, tc.wantOK, tc.wantErr)
			}
			if tc.wantOK && !tc.wantErr {
				cfg := got.Config()
				if cfg.Host != tc.want.Host || cfg.BearerToken != tc.want.Token || cfg.CAFile != tc.want.CAFile || cfg.QPS >= 0 {
					t.Errorf("Config() = host %q token %q CA %q QPS %v", cfg.Host, cfg.BearerToken, cfg.CAFile, cfg.QPS)
				}
			}
		})
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := freePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v are not distinct positive numbers", ports)
		}
		seen[p] = true
	}
}
