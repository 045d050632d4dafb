package openapitest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/web/openapi/openapitest"
)

// BenchmarkTransport prints what validation adds to one exchange (a JSON
// request and a JSON answer) over a loopback server: compare the plain
// and validated ns/op.
func BenchmarkTransport(b *testing.B) {
	srv := fakeServer(b, map[string]answer{
		"POST /api/v1/channels/1/messages": {201, "application/json", `{"id":1,"channel_id":1,"author_id":1,"thread_id":0,"body":"hi","html":"<p>hi</p>",` +
			`"mentions":[],"reply_count":0,"source":"api","created_at":"2026-12-01T10:00:00Z","edited_at":null,"deleted":false}`},
	})
	v, err := openapitest.New()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"plain", http.DefaultTransport}, {"validated", v.Transport(http.DefaultTransport)}} {
		b.Run(tc.name, func(b *testing.B) {
			client := &http.Client{Transport: tc.rt}
			for b.Loop() {
				req, _ := http.NewRequest("POST", srv.URL+"/api/v1/channels/1/messages", strings.NewReader(`{"body":"hi"}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
