package kubetest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// InitImageName is the Bullpen init image InitImage builds and imports.
const InitImageName = "bullpen.local/kube-init:test"

var (
	initOnce sync.Once
	initErr  error
)

// InitImage builds bullpen-kube-init (the kubernetes sandbox driver's
// helper, cmd/bullpen-kube-init), packs it as an OCI image archive and
// imports it into the test cluster's containerd
// (BULLPEN_TEST_CONTAINERD), once per test binary; it returns the
// image's name (pods use it with imagePullPolicy Never).
func InitImage(tb testing.TB) string {
	tb.Helper()
	initOnce.Do(func() { initErr = buildAndImport() })
	if initErr != nil {
		tb.Fatal(initErr)
	}
	return InitImageName
}

func buildAndImport() error {
	sock := os.Getenv("BULLPEN_TEST_CONTAINERD")
	if sock == "" {
		return fmt.Errorf("BULLPEN_TEST_CONTAINERD is not set: cluster.sh up prints it")
	}
	dir, err := os.MkdirTemp("", "kube-init-image")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bullpen-kube-init")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "github.com/bullpen-hq/bullpen/cmd/bullpen-kube-init")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the helper: %v: %s", err, out)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := ociArchive(InitImageName, bin, archive); err != nil {
		return err
	}
	out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "import", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import: %v: %s", err, out)
	}
	return nil
}

// ociArchive writes an OCI image layout (one uncompressed layer holding
// bin at /bullpen-kube-init) as a tar archive named name.
func ociArchive(name, bin, out string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: "bullpen-kube-init", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	blobs := map[string][]byte{}
	put := func(b []byte) (string, int) {
		s := sha256.Sum256(b)
		d := hex.EncodeToString(s[:])
		blobs[d] = b
		return d, len(b)
	}
	ld, ln := put(layer.Bytes())
	cd, cn := put(fmt.Appendf(nil, `{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/bullpen-kube-init"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}`, ld))
	md, mn := put(fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}`, cd, cn, ld, ln))
	index := fmt.Appendf(nil, `{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"test"}}]}`, md, mn, name)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := tar.NewWriter(f)
	files := []struct {
		name string
		b    []byte
	}{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}, {"index.json", index}}
	for d, b := range blobs {
		files = append(files, struct {
			name string
			b    []byte
		}{"blobs/sha256/" + d, b})
	}
	for _, fl := range files {
		if err := w.WriteHeader(&tar.Header{Name: fl.name, Mode: 0o644, Size: int64(len(fl.b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := w.Write(fl.b); err != nil {
			return err
		}
	}
	return w.Close()
}
