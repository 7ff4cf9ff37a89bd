// Command etcd is upstream etcd's server, built from the published module so
// the tests get a real etcd without downloading release archives.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
