// Command bullpen-kube-init is the helper the kubernetes sandbox driver
// puts in every sandbox Pod (package sandbox/kube/podinit): it installs
// itself into the Pod's shared volume, sets the Pod's egress rules, runs
// as the sandbox container's PID 1 (serving the driver's exec and files
// protocol on the pod network) and does the driver's file operations.
// Build it static (CGO_ENABLED=0) into the Bullpen init image.
package main

import (
	"os"

	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
)

func main() {
	os.Exit(podinit.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
