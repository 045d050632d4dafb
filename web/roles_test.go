package web_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
)

// A role file that fails to load shows in GET /roles with its path and
// the reason, beside the roles that did load.
func TestBadRoleFilesInRoles(t *testing.T) {
	dir := t.TempDir()
	good := "---\nhandle: helper\nname: Helper\ntools: [post_message]\n---\nYou help.\n"
	bad := "---\nhandle: broken\nname: Broken\ntools: [fly_to_the_moon]\n---\nYou break.\n"
	os.WriteFile(filepath.Join(dir, "helper.md"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte(bad), 0o644)
	os.WriteFile(filepath.Join(dir, "nofront.md"), []byte("just text"), 0o644)
	cat, err := agents.LoadCatalog(dir)
	if err == nil || cat == nil {
		t.Fatalf("LoadCatalog = %v, %v; want the catalog and an error", cat, err)
	}
	db, off, token := openOffice(t, store.SQLite)
	svc, err := agents.New(agents.Config{Office: off, DB: db, Catalog: cat, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, db, off, token, web.Config{}, web.Services{Office: off, Agents: svc}, svc.Close)
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var roles struct {
		Items  []bullpen.RoleInfo
		Errors []bullpen.RoleProblem
	}
	if st := ts.do("GET", "/api/v1/roles", ts.Token, nil, &roles); st != 200 {
		t.Fatalf("GET /roles = %d", st)
	}
	var found bool
	for _, r := range roles.Items {
		found = found || r.ID == "local/helper"
	}
	if !found {
		t.Errorf("local/helper is not listed")
	}
	if len(roles.Errors) != 2 {
		t.Fatalf("errors = %+v, want broken.md and nofront.md", roles.Errors)
	}
	byFile := map[string]string{}
	for _, p := range roles.Errors {
		byFile[filepath.Base(p.Path)] = p.Error
	}
	if !strings.Contains(byFile["broken.md"], `unknown tool "fly_to_the_moon"`) || !strings.Contains(byFile["nofront.md"], "front matter") {
		t.Errorf("errors = %+v, want each file with its reason", byFile)
	}
}
