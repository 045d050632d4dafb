package mcp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// unixTransport sends every request over one unix socket with a token,
// as a sandbox's bridge does.
type unixTransport struct {
	rt    http.RoundTripper
	token string
}

func (u unixTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if u.token != "" {
		r.Header.Set("Authorization", "Bearer "+u.token)
	}
	return u.rt.RoundTrip(r)
}

// The endpoint is a plain http.Handler: served on a unix socket, outside
// the web server, it authenticates, lists and calls tools the same way.
func TestHandlerOnUnixSocket(t *testing.T) {
	ctx := context.Background()
	o := openAgents(t, []string{bullpen.ToolPostMessage})
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: o.handler()}
	go srv.Serve(ln)
	defer srv.Close()
	dial := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	defer dial.CloseIdleConnections()

	resp, err := (&http.Client{Transport: dial}).Post("http://bullpen/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(body), "missing Bearer token") {
		t.Errorf("no token over the socket = %d %s, want 401", resp.StatusCode, body)
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "sock-test", Version: "0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	s, err := client.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: "http://bullpen/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: unixTransport{rt: dial, token: o.token}}}, nil)
	if err != nil {
		t.Fatalf("connect over the socket: %v", err)
	}
	defer s.Close()
	tools, err := s.ListTools(cctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != bullpen.ToolPostMessage {
		t.Fatalf("tools over the socket = %+v, %v", tools, err)
	}
	res, err := s.CallTool(cctx, &sdk.CallToolParams{Name: bullpen.ToolPostMessage, Arguments: map[string]any{"body": "through the socket", "channel": "general"}})
	if err != nil || res.IsError {
		t.Fatalf("post_message over the socket = %+v, %v", res, err)
	}
	general, _ := o.off.ChannelByName(ctx, o.admin, bullpen.GeneralChannel)
	page, err := o.off.ListMessages(ctx, o.admin, general.ID, "", 10)
	if err != nil || len(page.Items) == 0 || page.Items[0].AuthorID != o.agent.ID || page.Items[0].Body != "through the socket" {
		t.Errorf("general = %+v, %v; want @tester's message", page.Items, err)
	}
}
