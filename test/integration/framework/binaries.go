package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names the environment variable that points at the directory holding the etcd and
// kube-apiserver binaries. test/integration/build-servers.sh prints such a directory and
// `make integration` exports it.
const BinDirEnv = "KCACHE_INTEGRATION_BIN"

// Binaries are the paths of the two server executables the harness runs.
type Binaries struct {
	// Etcd is the path of an etcd v3.6 executable.
	Etcd string
	// KubeAPIServer is the path of a kube-apiserver v1.36 executable.
	KubeAPIServer string
}

// BinariesFromEnv finds the servers in the directory named by $KCACHE_INTEGRATION_BIN. It returns
// an error that says how to build them when the variable is unset or a binary is missing.
func BinariesFromEnv() (Binaries, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		return Binaries{}, fmt.Errorf("framework: $%s is not set; run `make integration` from the repository root, "+
			"or export %s=$(test/integration/build-servers.sh)", BinDirEnv, BinDirEnv)
	}
	b := Binaries{
		Etcd:          filepath.Join(dir, "etcd"),
		KubeAPIServer: filepath.Join(dir, "kube-apiserver"),
	}
	var errs []error
	for _, p := range []string{b.Etcd, b.KubeAPIServer} {
		info, err := os.Stat(p)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("framework: server binary: %w", err))
		case info.IsDir() || info.Mode().Perm()&0o111 == 0:
			errs = append(errs, fmt.Errorf("framework: server binary %s is not an executable file", p))
		}
	}
	return b, errors.Join(errs...)
}
