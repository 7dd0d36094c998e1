package framework

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// User is a user the API server authenticates by a token of its own, besides the harness's
// admin: a test gives each of several clients its own user, so that the audit log (see
// Options.AuditPolicy) tells which client made a request. Every user is authorized for
// everything (the server runs with --authorization-mode=AlwaysAllow).
type User struct {
	// Name is the user name. It must be non-empty, differ from "admin" and from the other
	// users' names, and contain no comma, quote or line break.
	Name string
	// Groups are the user's groups (same character rules as Name), for audit policy rules
	// that select users by group.
	Groups []string
}

// credentials are the files kube-apiserver needs for service accounts and token
// authentication, generated fresh for every cluster.
type credentials struct {
	// token authenticates as user "admin" in group system:masters.
	token string
	// userTokens holds the token of each extra User, by name.
	userTokens map[string]string
	// tokenFile, saPublicKey and saPrivateKey are paths inside the cluster directory.
	tokenFile, saPublicKey, saPrivateKey string
}

// ErrInvalidUser is wrapped by the error Start returns for a User it cannot write into the
// token file.
var ErrInvalidUser = errors.New("framework: invalid user")

// checkUsers returns an error wrapping ErrInvalidUser for the first unusable user.
func checkUsers(users []User) error {
	seen := map[string]bool{"admin": true}
	bad := func(s string) bool { return s == "" || strings.ContainsAny(s, ",\"\r\n") }
	for _, u := range users {
		if bad(u.Name) || seen[u.Name] {
			return fmt.Errorf("%w: name %q is empty, taken or has a comma, quote or line break", ErrInvalidUser, u.Name)
		}
		seen[u.Name] = true
		for _, g := range u.Groups {
			if bad(g) {
				return fmt.Errorf("%w: %s: group %q is empty or has a comma, quote or line break", ErrInvalidUser, u.Name, g)
			}
		}
	}
	return nil
}

// writeCredentials creates an RSA service-account key pair and a static token file in dir, with
// a token for the admin and one for each of users.
func writeCredentials(dir string, users []User) (credentials, error) {
	if err := checkUsers(users); err != nil {
		return credentials{}, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return credentials{}, fmt.Errorf("framework: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return credentials{}, fmt.Errorf("framework: service-account public key: %w", err)
	}
	token := func() string {
		var raw [16]byte
		_, _ = rand.Read(raw[:]) // crypto/rand.Read never returns an error
		return hex.EncodeToString(raw[:])
	}
	c := credentials{
		token:        token(),
		userTokens:   map[string]string{},
		tokenFile:    filepath.Join(dir, "tokens.csv"),
		saPublicKey:  filepath.Join(dir, "sa.pub"),
		saPrivateKey: filepath.Join(dir, "sa.key"),
	}
	// A line is token,user,uid[,"group,group"].
	lines := []string{c.token + ",admin,admin,system:masters"}
	for _, u := range users {
		tok := token()
		c.userTokens[u.Name] = tok
		line := tok + "," + u.Name + "," + u.Name
		if len(u.Groups) > 0 {
			line += `,"` + strings.Join(u.Groups, ",") + `"`
		}
		lines = append(lines, line)
	}
	files := []struct {
		path string
		data []byte
	}{
		{c.saPrivateKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})},
		{c.saPublicKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})},
		{c.tokenFile, []byte(strings.Join(lines, "\n") + "\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return credentials{}, fmt.Errorf("framework: write %s: %w", f.path, err)
		}
	}
	return c, nil
}
