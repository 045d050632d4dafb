package openai_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
)

// Each timeout fires at its own phase, against a server that stalls there,
// and the error says which, fast, without retrying a silent provider.
func TestTimeoutsFireAtTheirPhase(t *testing.T) {
	stallHeaders := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Delay: time.Minute, Text: "late"}
	})
	defer stallHeaders.Close()
	stallStream := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "one two three four five", ChunkSize: 4, ChunkDelay: time.Minute}
	})
	defer stallStream.Close()
	silent := llmtest.NewSilent()
	defer silent.Close()
	tests := []struct {
		name, base, phase, want string
	}{
		{"first byte, headers never come", stallHeaders.BaseURL(), llm.PhaseFirstByte, "first-byte timeout"},
		{"first byte, connection accepted and silent", silent.BaseURL(), llm.PhaseFirstByte, "first-byte timeout"},
		{"idle, stream stalls after a delta", stallStream.BaseURL(), llm.PhaseIdle, "idle timeout"},
		{"connect, accept queue full", fullListener(t), llm.PhaseConnect, "connect timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Only the phase under test has a short timeout.
			to := llm.Timeouts{Connect: 5 * time.Second, FirstByte: 5 * time.Second, Idle: 5 * time.Second}
			switch short := 300 * time.Millisecond; tc.phase {
			case llm.PhaseConnect:
				to.Connect = short
			case llm.PhaseFirstByte:
				to.FirstByte = short
			default:
				to.Idle = short
			}
			p := openai.New(openai.Config{BaseURL: tc.base, Model: "m", MaxRetries: -1, Timeouts: to})
			start := time.Now()
			_, err := p.Complete(context.Background(), userReq("hi"), nil)
			took := time.Since(start)
			if err == nil || !strings.Contains(bullpen.ErrorMessage(err), tc.want) || bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
				t.Fatalf("Complete() error = %v (code %s), want EUNAVAILABLE naming %q", err, bullpen.ErrorCode(err), tc.want)
			}
			var te *llm.TimeoutError
			if !errors.As(err, &te) || te.Phase != tc.phase {
				t.Errorf("Complete() error %v does not wrap a %s *llm.TimeoutError", err, tc.phase)
			}
			if took > 4*time.Second {
				t.Errorf("Complete() took %s with a 300ms %s timeout", took, tc.phase)
			}
			t.Logf("%s fired after %s", tc.phase, took.Round(time.Millisecond))
		})
	}
}

// A per-call setting (a role's) overrides the provider's timeouts.
func TestTimeoutsPerCall(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Delay: 600 * time.Millisecond, Text: "answered"}
	})
	defer f.Close()
	p := openai.New(openai.Config{BaseURL: f.BaseURL(), Model: "m", MaxRetries: -1, Timeouts: llm.Timeouts{FirstByte: 100 * time.Millisecond}})
	if _, err := p.Complete(context.Background(), userReq("hi"), nil); err == nil {
		t.Fatal("Complete() with a 100ms first-byte timeout on a 600ms server succeeded")
	}
	ctx := llm.WithTimeouts(context.Background(), llm.Timeouts{FirstByte: 5 * time.Second})
	resp, err := p.Complete(ctx, userReq("hi"), nil)
	if err != nil || resp.Text != "answered" {
		t.Fatalf("Complete() with a per-call 5s first-byte timeout = %q, %v; want the answer", resp.Text, err)
	}
}

// fullListener returns a base URL whose listener never accepts and whose
// accept queue is full, so that a new connection's handshake hangs.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := syscall.Getsockname(fd)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	for i := 0; i < 8; i++ { // fill the queue; later handshakes get no answer
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	return "http://" + addr + "/v1"
}
