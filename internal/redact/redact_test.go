package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

const key = "sk-live-0123456789abcdef"

func TestStringBlanksSecretsAndUserinfo(t *testing.T) {
	s := New(key, "https://alice:s3cr3t-pw@models.example/v1", "short")
	for in, want := range map[string]string{
		"Incorrect API key provided: " + key:          "Incorrect API key provided: " + Mask,
		"GET https://alice:s3cr3t-pw@models.example/": "GET https://" + Mask + "@models.example/",
		"base http://bob:other@h:8080/v1":             "base http://" + Mask + "@h:8080/v1",
		`{"u":"https:\/\/bob:pw@h\/v1"}`:              `{"u":"https:\/\/` + Mask + `@h\/v1"}`,
		"the password was s3cr3t-pw":                  "the password was " + Mask,
		"short words stay":                            "short words stay",
		"mail me at someone@example.com, https://h/a": "mail me at someone@example.com, https://h/a",
	} {
		if got := s.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var none *Secrets
	if got := none.String("x https://u:p@h y"); got != "x https://"+Mask+"@h y" {
		t.Errorf("nil set: %q", got)
	}
}

// Every split of a stream into two writes, and byte by byte: no secret
// gets through, and everything else arrives unchanged.
func TestStreamSplitsAnywhere(t *testing.T) {
	s := New(key)
	in := `data: {"echo":"` + key + `","base":"https://user:pa55word@h/v1"}` + "\n\ndata: [DONE]\n\n"
	want := s.String(in)
	if strings.Contains(want, key) || strings.Contains(want, "pa55word") {
		t.Fatalf("String missed: %q", want)
	}
	for cut := 0; cut <= len(in); cut++ {
		var out bytes.Buffer
		st := s.Stream(&out)
		st.Write([]byte(in[:cut]))
		st.Write([]byte(in[cut:]))
		st.Flush()
		if out.String() != want {
			t.Fatalf("cut at %d: %q, want %q", cut, out.String(), want)
		}
	}
	var out bytes.Buffer
	st := s.Stream(&out)
	for i := range len(in) {
		st.Write([]byte{in[i]})
	}
	st.Flush()
	if out.String() != want {
		t.Fatalf("byte by byte: %q", out.String())
	}
}

// Text that cannot start a secret is not held back.
func TestStreamHoldsBackOnlyPossibleStarts(t *testing.T) {
	s := New(key)
	var out bytes.Buffer
	st := s.Stream(&out)
	st.Write([]byte("data: {\"text\":\"hello\"}\n\n"))
	if st.Pending() != 0 {
		t.Fatalf("held back %d bytes of ordinary text", st.Pending())
	}
	st.Write([]byte("and then sk-li"))
	if st.Pending() != len("sk-li") {
		t.Fatalf("held back %d bytes, want %d", st.Pending(), len("sk-li"))
	}
}

func TestHeader(t *testing.T) {
	s := New(key)
	h := http.Header{"X-Echo": {"key=" + key}, "Content-Type": {"application/json"}}
	s.Header(h)
	if h.Get("X-Echo") != "key="+Mask || h.Get("Content-Type") != "application/json" {
		t.Fatalf("%v", h)
	}
}

func TestHandler(t *testing.T) {
	s := New(key)
	var buf bytes.Buffer
	log := slog.New(s.Handler(slog.NewTextHandler(&buf, nil)))
	log = log.With("base", "https://u:hunter22@h")
	log.Error("failed with "+key, "err", errors.New("401: "+key), slog.Group("g", "k", key), "n", 3)
	if strings.Contains(buf.String(), key) || strings.Contains(buf.String(), "hunter22") {
		t.Fatalf("log shows a secret: %s", buf.String())
	}
	if !strings.Contains(buf.String(), "n=3") {
		t.Fatalf("log lost an attribute: %s", buf.String())
	}
}

// Secrets added later are redacted from then on (Settings adds keys as it
// reads them).
func TestAddLater(t *testing.T) {
	s := New()
	s.Add(key)
	if s.String(key) != Mask {
		t.Fatal("not redacted")
	}
}
