package main

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// burn hashes mib MiB: a fixed amount of work, so that shares of CPU
// time hold however busy the machine is.
func burn(mib int) {
	b := make([]byte, 1<<20)
	for i := 0; i < mib; i++ {
		s := sha256.Sum256(b)
		b[0] = s[0]
	}
}

// TestSplitCPUDividesByLabel burns one unit of work unlabeled and five
// under the client label, four of them in a goroutine the labeled one
// starts: the server's share must be near 1/6. Unlabeled clients, labels
// that children do not inherit, or a split the wrong way round all give
// 5/6 or more.
func TestSplitCPUDividesByLabel(t *testing.T) {
	const unit = 512 // MiB, about 0.25 s of CPU
	win, err := startCPUWindow()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); burn(unit) }()
	go asClient(context.Background(), func(context.Context) {
		defer wg.Done()
		go func() { defer wg.Done(); burn(4 * unit) }()
		burn(unit)
	})
	wg.Wait()
	p, err := win.stop()
	if err != nil {
		t.Fatal(err)
	}
	s, err := splitCPU(p)
	if err != nil {
		t.Fatal(err)
	}
	samples := len(p.Sample)
	t.Logf("client %v, server %v, %d samples", time.Duration(s.client), time.Duration(s.server), samples)
	if s.client+s.server < int64(500*time.Millisecond) {
		t.Fatalf("only %v of CPU sampled, want the ~1.5 s burnt", time.Duration(s.client+s.server))
	}
	if got := s.serverShare(); got < 0.05 || got > 0.4 {
		t.Errorf("serverShare() = %.2f, want about 1/6 (0.05 to 0.4)", got)
	}
}

// TestRunLabelsOnlyTheBenchsClients runs the real bench briefly and reads
// its profile's stacks: every sample in the bench's receivers, posters or
// their HTTP and websocket client code is labeled bench=client, and every
// sample in the server's code (Bullpen's packages, fasthttp and its
// websocket, SQLite) is not. So the server's listener and handlers were
// started outside the label.
func TestRunLabelsOnlyTheBenchsClients(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server for 2 s")
	}
	cfg := config{db: "sqlite", clients: 30, rate: 500, posters: 4, duration: 2 * time.Second}
	r, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// In a test binary package main's functions are named by its path.
	client := []string{"main.receive", "main.post", benchPkg + ".receive", benchPkg + ".post",
		"github.com/gorilla/websocket.", "net/http.(*persistConn)"}
	server := []string{"github.com/bullpen-hq/bullpen/", "github.com/valyala/fasthttp.", "github.com/fasthttp/websocket.", "modernc.org/sqlite"}
	var clientSamples, serverSamples int64
	for _, s := range r.profile.Sample {
		labeled := s.HasLabel(labelKey, clientLabel)
		inClient, inServer := stackHas(s, client, ""), stackHas(s, server, benchPkg+".")
		switch {
		case inClient && inServer:
			t.Errorf("a sample is in both the bench's and the server's code: %s", stackOf(s))
		case inClient && !labeled:
			t.Errorf("a client sample is not labeled: %s", stackOf(s))
		case inServer && labeled:
			t.Errorf("a server sample is labeled bench=client: %s", stackOf(s))
		}
		if inClient {
			clientSamples += s.Value[0]
		}
		if inServer {
			serverSamples += s.Value[0]
		}
	}
	t.Logf("%d client samples, %d server samples, server share %.2f", clientSamples, serverSamples, r.serverShare)
	if clientSamples < 3 || serverSamples < 3 {
		t.Errorf("%d client and %d server samples, want 3 or more of each", clientSamples, serverSamples)
	}
	if r.serverCPUPerMsg <= 0 || r.serverCPUPerMsg >= r.cpuPerMsg {
		t.Errorf("server CPU per message %v, want more than 0 and less than the total %v", r.serverCPUPerMsg, r.cpuPerMsg)
	}
}

// benchPkg is this package's import path.
const benchPkg = "github.com/bullpen-hq/bullpen/bench/load"

// stackHas reports whether a function of s's stack starts with one of
// the prefixes, and not with except (if not empty).
func stackHas(s *profile.Sample, prefixes []string, except string) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil || except != "" && strings.HasPrefix(line.Function.Name, except) {
				continue
			}
			for _, p := range prefixes {
				if strings.HasPrefix(line.Function.Name, p) {
					return true
				}
			}
		}
	}
	return false
}

func stackOf(s *profile.Sample) string {
	var names []string
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil {
				names = append(names, line.Function.Name)
			}
		}
	}
	return strings.Join(names, " < ")
}
