package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/web"
)

// A small answer of …/run goes out whole with a Content-Length; a large
// one is streamed (chunked) as it is encoded. Both carry all the output.
func TestSandboxRunAnswerFraming(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	post := func(cmd string) (*http.Response, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"cmd": cmd})
		req, _ := http.NewRequest("POST", s.URL+"/api/v1/sandboxes/"+sb.ID+"/run", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v: %.200s", cmd, err, raw)
		}
		return resp, out
	}
	resp, out := post("echo hi")
	if resp.ContentLength <= 0 || len(resp.TransferEncoding) != 0 {
		t.Errorf("small answer: Content-Length %d, Transfer-Encoding %v; want it whole", resp.ContentLength, resp.TransferEncoding)
	}
	if out["stdout"] != "hi\n" || out["exit_code"] != 0.0 {
		t.Errorf("small answer: %v", out)
	}
	// 256 KiB of two-byte characters: over the inline bound.
	resp, out = post(`s=é; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17; do s=$s$s; done; printf %s "$s"`)
	if resp.ContentLength != -1 || len(resp.TransferEncoding) == 0 {
		t.Errorf("large answer: Content-Length %d, Transfer-Encoding %v; want it streamed", resp.ContentLength, resp.TransferEncoding)
	}
	if got, _ := out["stdout"].(string); got != strings.Repeat("é", 1<<17) || out["stdout_bytes"] != float64(1<<18) {
		t.Errorf("large answer: %d bytes of stdout, stdout_bytes %v", len(got), out["stdout_bytes"])
	}
}
