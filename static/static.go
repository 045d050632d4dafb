// Package static holds the dashboard's stylesheet, script and icons,
// embedded into the binary. The web layer serves FS under /static/.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
)

// Prefix is the URL path under which the web layer serves FS.
const Prefix = "/static/"

// FS holds the stylesheets and scripts (bp.js shared, then one pair per
// feature panel), vendor/ (third-party browser files) and icons/.
//
//go:embed *.css *.js icons vendor
var FS embed.FS

// versions maps each embedded file to a short hash of its content. It is
// computed once: the embedded files never change while the binary runs.
var versions = sync.OnceValue(func() map[string]string {
	v := make(map[string]string)
	_ = fs.WalkDir(FS, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := FS.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		v[name] = hex.EncodeToString(sum[:6])
		return nil
	})
	return v
})

// URL returns the path at which the embedded file name is served, with a
// content hash as query string ("/static/app.js?v=1a2b3c4d5e6f") so that a
// browser may cache it for long and still never run a stale script after an
// upgrade. An unknown name gets the plain path.
func URL(name string) string {
	if v, ok := versions()[name]; ok {
		return Prefix + name + "?v=" + v
	}
	return Prefix + name
}

// Version returns the content hash that URL puts in name's query string,
// and whether name is an embedded file.
func Version(name string) (string, bool) {
	v, ok := versions()[name]
	return v, ok
}
