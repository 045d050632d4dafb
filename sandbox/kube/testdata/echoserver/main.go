// Command echoserver is the listener TestClusterPorts runs inside a
// sandbox: it echoes each line back on every connection to the port in
// its first argument.
package main

import (
	"bufio"
	"net"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", ":"+os.Args[1])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("listening\n")
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				c.Write([]byte("echo " + line))
			}
		}()
	}
}
