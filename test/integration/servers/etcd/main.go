// Command etcd is etcd v3.6.8 built from Go modules, the storage behind the kube-apiserver that
// kcache's integration tests start.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
