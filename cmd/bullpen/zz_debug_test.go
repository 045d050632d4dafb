package main

import (
	"fmt"
	"testing"
)

func dumpEvents(t *testing.T, o *cliOffice, since int64) {
	for _, ev := range o.events(since) {
		s := string(ev.Payload)
		if len(s) > 400 {
			s = s[:400]
		}
		fmt.Println("EV", ev.At.Format("15:04:05.000"), ev.Type, s)
	}
}
