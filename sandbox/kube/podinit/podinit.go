// Package podinit is the small static helper that the kubernetes driver
// (package sandbox/kube) puts in every sandbox Pod, so that any image
// works: the Pod's init container, of the Bullpen image and the only
// container with NET_ADMIN, copies it into a shared emptyDir and sets the
// Pod's egress rules ("prepare": "install" then "netlock"), and the
// sandbox container runs it as PID 1 ("serve": it reaps orphans and
// serves the driver over the pod network, on Port, authenticated with
// the sandbox's token). The driver has it start commands with their
// directory and environment ("exec"), kill them ("kill"), read the
// container's usage ("stats") and do file operations ("file …"), either
// through serve's protocol (Call) or through the apiserver's exec. It
// imports nothing but the standard library, x/sys and nftables.
package podinit

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// Exit statuses of the file operations besides 0 and 1, so that the
// driver maps them to error codes without parsing messages.
const (
	ExitNotFound = 3 // the path does not exist
	ExitExists   = 4 // the target exists (mkdir without parents), a directory is not empty
	ExitInvalid  = 5 // a bad request: not a directory, a directory, bad mode
	ExitTooLarge = 6 // the disk is full
)

// Main runs the subcommand in args (os.Args[1:]) and returns the exit
// status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "bullpen-kube-init: the kubernetes driver's pod helper; subcommands: install DIR, netlock [CIDR…], serve [ADDR], sleep, exec …, kill TAG, stats, file OP …")
		return 2
	}
	switch args[0] {
	case "install":
		if len(args) != 2 {
			return usage(stderr, "install DIR")
		}
		return report(stderr, install(args[1]))
	case "netlock":
		return report(stderr, netlock(args[1:]))
	case "prepare":
		if len(args) < 2 {
			return usage(stderr, "prepare DIR [CIDR…]")
		}
		if err := install(args[1]); err != nil {
			return report(stderr, err)
		}
		return report(stderr, netlock(args[2:]))
	case "sleep":
		sleep()
		return 0
	case "serve":
		return serveMain(args, stderr)
	case "file":
		return file(args[1:], stdin, stdout, stderr)
	case "exec":
		return runExec(args, stdin, stdout, stderr)
	case "stats":
		return report(stderr, stats(stdout))
	case "kill":
		if len(args) != 2 {
			return usage(stderr, "kill TAG")
		}
		return report(stderr, killExec(args[1]))
	case "resize":
		return report(stderr, resizeExec(args))
	}
	return usage(stderr, "prepare DIR [CIDR…] | install DIR | netlock [CIDR…] | serve [ADDR] | sleep | exec TAG DIR OPTS [K=V…] -- CMD… | kill TAG | resize TAG ROWS COLS | stats | file OP …")
}

func usage(stderr io.Writer, s string) int {
	fmt.Fprintln(stderr, "usage: bullpen-kube-init "+s)
	return 2
}

// report prints err and returns its exit status.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, err)
	var ce codedError
	if ok := asCoded(err, &ce); ok {
		return ce.code
	}
	return 1
}

// install copies the running executable to dir, mode 0555.
func install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, "bullpen-kube-init"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o555)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// sleep was PID 1 of the sandbox container before serve (Pods made then
// still run it): it reaps the orphans that commands leave and exits on
// SIGTERM or SIGINT.
func sleep() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
