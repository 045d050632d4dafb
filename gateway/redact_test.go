package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/redact"
)

// otherSecret is a configured secret that is no upstream's (the Telegram
// bot token, say): an upstream that echoes it is redacted too.
const otherSecret = "123456:telegram-bot-token-XYZ"

// echoUpstream answers 200 with the key and the other secret in a header
// and in a streamed body, each split across two flushed chunks.
func echoUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Echo-Key", "you sent "+realKey)
		w.Header().Set("X-Echo-Base", "https://alice:base-url-pass@"+r.Host)
		full := fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":\"%s and %s via https://alice:base-url-pass@h/v1\"}}]}\n\ndata: [DONE]\n\n", realKey, otherSecret)
		fl := w.(http.Flusher)
		for _, cut := range []string{realKey[:9], otherSecret[:5], "alice:base"} {
			i := strings.Index(full, cut) + len(cut)
			io.WriteString(w, full[:i])
			fl.Flush()
			time.Sleep(10 * time.Millisecond)
			full = full[i:]
		}
		io.WriteString(w, full)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSuccessfulAnswerRedacted: a 2xx answer, streamed, has no secret in
// its headers, body or record, and neither has the log.
func TestSuccessfulAnswerRedacted(t *testing.T) {
	srv := echoUpstream(t)
	var logs bytes.Buffer
	base := strings.Replace(srv.URL, "http://", "http://alice:base-url-pass@", 1)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: base, APIKey: realKey, Name: "hung"}, func(c *Config) {
		c.Secrets = redact.New(otherSecret)
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	status, hdr, body := r.post(t, "/openai/v1/chat/completions", "bearer", turnToken, `{"model":"m","stream":true,"messages":[]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var hdrs strings.Builder
	hdr.Write(&hdrs)
	recs := r.rec.all()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	views := map[string]string{"body": string(body), "headers": hdrs.String(), "log": logs.String(),
		"record": fmt.Sprintf("%+v", recs[0])}
	for where, text := range views {
		for _, s := range []string{realKey, otherSecret, "base-url-pass", "alice:"} {
			if strings.Contains(text, s) {
				t.Errorf("the %s shows %q: %s", where, s, text)
			}
		}
	}
	if !strings.Contains(string(body), redact.Mask+" and "+redact.Mask) || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("body not passed on whole: %q", body)
	}
	if hdr.Get("X-Echo-Key") != "you sent "+redact.Mask {
		t.Errorf("header X-Echo-Key = %q", hdr.Get("X-Echo-Key"))
	}
}
