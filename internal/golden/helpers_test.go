package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// writeGolden makes a testdata/golden folder in a temp dir and moves the
// test there, so TestCheck never touches real golden files.
func writeGolden(t *testing.T, name, body string) error {
	t.Helper()
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(filepath.Join("testdata", "golden"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join("testdata", "golden", name), []byte(body), 0o644)
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func failed(fn func(testing.TB)) bool {
	r := &recorder{}
	fn(r)
	return r.failed
}
