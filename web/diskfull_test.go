package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
)

// TestFullDiskAnswers503AndDegradesHealth puts the SQLite database on a
// small tmpfs and fills it: a post then answers 503 "unavailable" with
// Retry-After (not 500 "internal"), /healthz turns degraded and says why,
// and posts succeed again once space is freed.
func TestFullDiskAnswers503AndDegradesHealth(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, db, off, token, web.Config{SandboxesOff: true}, web.Services{Office: off})
	var h health
	if st := ts.do("GET", "/healthz", "", nil, &h); st != 200 || h.Status != "ok" {
		t.Fatalf("healthz before = %d %+v", st, h)
	}
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)

	body := strings.Repeat("a full disk must not lose this ", 500)
	status, hdr, e := 0, http.Header{}, apiError{}
	for i := 0; i < 200 && status != http.StatusServiceUnavailable; i++ {
		status, hdr, e = ts.postJSON("/api/v1/channels/1/messages", map[string]any{"body": body})
		if status != http.StatusCreated && status != http.StatusServiceUnavailable {
			t.Fatalf("post %d on a full disk = %d %+v, want 201 or 503", i, status, e)
		}
	}
	if status != http.StatusServiceUnavailable || e.Error.Code != bullpen.EUNAVAILABLE || hdr.Get("Retry-After") == "" ||
		!strings.Contains(e.Error.Message, "disk is full") {
		t.Fatalf("post on a full disk = %d %+v Retry-After %q, want 503 unavailable naming the full disk, with Retry-After",
			status, e, hdr.Get("Retry-After"))
	}
	var hw struct {
		Status   string `json:"status"`
		Database struct {
			OK     bool   `json:"ok"`
			Writes string `json:"writes"`
		} `json:"database"`
	}
	if st := ts.do("GET", "/healthz", "", nil, &hw); st != 200 || hw.Status != "degraded" || !strings.Contains(hw.Database.Writes, "full") {
		t.Fatalf("healthz on a full disk = %d %+v, want degraded with the writes' failure", st, hw)
	}

	os.Remove(filler)
	if status, _, e := ts.postJSON("/api/v1/channels/1/messages", map[string]any{"body": "space again"}); status != http.StatusCreated {
		t.Fatalf("post after freeing space = %d %+v", status, e)
	}
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for n := 4096; n > 0; n /= 2 { // the last partial blocks too
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
}

// post sends a JSON body as the admin and returns status, header and the
// error body (if any).
func (ts *testServer) postJSON(path string, body any) (int, http.Header, apiError) {
	ts.t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(mustJSON(body)))
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	if resp.StatusCode >= 400 {
		json.NewDecoder(resp.Body).Decode(&e)
	}
	return resp.StatusCode, resp.Header, e
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
