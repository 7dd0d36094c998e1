package framework

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
)

// credentials are the files kube-apiserver needs for service accounts and token
// authentication, generated fresh for every cluster.
type credentials struct {
	// token authenticates as user "admin" in group system:masters.
	token string
	// tokenFile, saPublicKey and saPrivateKey are paths inside the cluster directory.
	tokenFile, saPublicKey, saPrivateKey string
}

// writeCredentials creates an RSA service-account key pair and a static token file in dir.
func writeCredentials(dir string) (credentials, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return credentials{}, fmt.Errorf("framework: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return credentials{}, fmt.Errorf("framework: service-account public key: %w", err)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return credentials{}, fmt.Errorf("framework: token: %w", err)
	}
	c := credentials{
		token:        hex.EncodeToString(raw[:]),
		tokenFile:    filepath.Join(dir, "tokens.csv"),
		saPublicKey:  filepath.Join(dir, "sa.pub"),
		saPrivateKey: filepath.Join(dir, "sa.key"),
	}
	files := []struct {
		path string
		data []byte
	}{
		{c.saPrivateKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})},
		{c.saPublicKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})},
		{c.tokenFile, []byte(c.token + ",admin,admin,system:masters\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return credentials{}, fmt.Errorf("framework: write %s: %w", f.path, err)
		}
	}
	return c, nil
}
