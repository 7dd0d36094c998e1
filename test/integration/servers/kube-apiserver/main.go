// Command kube-apiserver is the upstream Kubernetes API server, v1.36.3, built from Go modules
// so that kcache's integration tests can run it without downloading a prebuilt binary.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
