package mcp_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall measures one tools/call round trip through the real
// server's /mcp, as an agent CLI makes it: the streaming adaptor, the token
// check, the SDK, the agents service and the two tool events'
// transactions, on SQLite. The tool is read_channel of #general.
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	o := openAgents(b, []string{bullpen.ToolReadChannel})
	srv := web.New(web.Config{Logger: quiet}, web.Services{Office: o.off, Agents: o.svc, MCP: o.handler()})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Shutdown(ctx)

	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "0"}, nil)
	s, err := client.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp",
		MaxRetries: -1, DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: bearer{o.token}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	args := map[string]any{"channel": "general"}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if res, err := s.CallTool(cctx, &sdk.CallToolParams{Name: bullpen.ToolReadChannel, Arguments: args}); err != nil || res.IsError {
			b.Fatalf("read_channel: %+v %v", res, err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/call")
}
