// Command pause is the test cluster's pod sandbox ("pause") container: it
// holds a pod's namespaces open and exits on SIGINT or SIGTERM. No image can
// be pulled where Bullpen's tests run, so scripts/kube/cluster.sh builds this
// static binary into a one-file image and imports it into containerd.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	// As PID 1 of a pod sharing its process namespace, reap orphans.
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			os.Exit(0)
		case <-children:
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
