package static

import (
	"io/fs"
	"regexp"
	"testing"
)

func TestFS(t *testing.T) {
	for _, name := range []string{"app.css", "app.js", "icons/favicon.svg"} {
		b, err := fs.ReadFile(FS, name)
		if err != nil || len(b) == 0 {
			t.Errorf("ReadFile(%q) = %d bytes, %v; want content", name, len(b), err)
		}
	}
	if _, err := fs.ReadFile(FS, "static.go"); err == nil {
		t.Error("static.go is embedded; want only assets")
	}
}

func TestURL(t *testing.T) {
	versioned := regexp.MustCompile(`^/static/app\.js\?v=[0-9a-f]{12}$`)
	if got := URL("app.js"); !versioned.MatchString(got) {
		t.Errorf("URL(app.js) = %q, want /static/app.js?v=<12 hex>", got)
	}
	if URL("app.js") == URL("app.css") {
		t.Error("app.js and app.css have the same version")
	}
	if got := URL("nope.js"); got != "/static/nope.js" {
		t.Errorf("URL(nope.js) = %q, want /static/nope.js", got)
	}
}
