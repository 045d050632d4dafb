package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/bullpen-hq/bullpen"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// ImportTarball imports the image in the tarball at path and names it
// name. Both `docker save` tarballs (manifest.json; they may hold one image
// only) and OCI archives (an OCI image layout packed in a tar) work.
func (s *Store) ImportTarball(ctx context.Context, path, name string) (*Image, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, asNotFound(fmt.Errorf("image: import tarball %s: %w", path, err), fmt.Sprintf("tarball %q not found", path))
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err == nil {
		return s.importImage(ctx, img, name)
	}
	// No manifest.json: perhaps an OCI archive.
	tmp, terr := os.MkdirTemp(filepath.Join(s.dir, "tmp"), "oci-")
	if terr != nil {
		return nil, fmt.Errorf("image: import tarball %s: %w", path, terr)
	}
	defer os.RemoveAll(tmp)
	ok, xerr := extractLayout(path, tmp)
	if xerr != nil || !ok {
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: fmt.Sprintf("%q is not a docker or OCI image tarball", path), Err: errors.Join(err, xerr)}
	}
	return s.ImportLayout(ctx, tmp, name)
}

// extractLayout unpacks the regular files and directories of the tar at
// path into dir, reporting whether it looks like an OCI image layout.
func extractLayout(path, dir string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	seen := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return seen, nil
		}
		if err != nil {
			return false, err
		}
		comps, err := splitName(hdr.Name)
		if err != nil {
			return false, err
		}
		if len(comps) == 0 || hdr.Typeflag != tar.TypeReg {
			continue // directories are made as needed; nothing else belongs in a layout
		}
		p := filepath.Join(append([]string{dir}, comps...)...)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return false, err
		}
		out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return false, err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return false, err
		}
		seen = seen || (len(comps) == 1 && comps[0] == "index.json")
	}
}

// PullOption configures Pull.
type PullOption func(*pullOptions)

type pullOptions struct {
	insecure  bool
	platform  v1.Platform
	transport http.RoundTripper
	auth      authn.Authenticator
	keychain  authn.Keychain
}

// WithInsecure lets Pull talk plain HTTP to the registry. Loopback and
// private-network registries get plain HTTP without it.
func WithInsecure() PullOption { return func(o *pullOptions) { o.insecure = true } }

// WithPlatform picks the image for p from a multi-platform image; the
// default is linux on this machine's architecture.
func WithPlatform(p v1.Platform) PullOption { return func(o *pullOptions) { o.platform = p } }

// WithTransport sets the HTTP transport Pull uses.
func WithTransport(rt http.RoundTripper) PullOption {
	return func(o *pullOptions) { o.transport = rt }
}

// WithAuth sets the credentials Pull presents; the default is anonymous.
func WithAuth(a authn.Authenticator) PullOption { return func(o *pullOptions) { o.auth = a } }

// WithKeychain makes Pull look credentials up in k (for example
// authn.DefaultKeychain, which reads the docker config file).
func WithKeychain(k authn.Keychain) PullOption { return func(o *pullOptions) { o.keychain = k } }

// Pull fetches the image ref ("host[:port]/repo:tag" or "…@sha256:…") from
// its registry and names it imageName. Only layers the store lacks are fetched.
func (s *Store) Pull(ctx context.Context, ref, imageName string, opts ...PullOption) (*Image, error) {
	if err := ValidateName(imageName); err != nil {
		return nil, err
	}
	o := pullOptions{platform: defaultPlatform()}
	for _, opt := range opts {
		opt(&o)
	}
	var nopts []name.Option
	if o.insecure {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "invalid image reference %q: %v", ref, err)
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithPlatform(o.platform)}
	if o.transport != nil {
		ropts = append(ropts, remote.WithTransport(o.transport))
	}
	switch {
	case o.auth != nil:
		ropts = append(ropts, remote.WithAuth(o.auth))
	case o.keychain != nil:
		ropts = append(ropts, remote.WithAuthFromKeychain(o.keychain))
	}
	img, err := remote.Image(r, ropts...)
	if err != nil {
		return nil, pullError(ref, err)
	}
	out, err := s.importImage(ctx, img, imageName)
	if err != nil && bullpen.ErrorCode(err) == bullpen.EINTERNAL {
		var te *transport.Error
		if errors.As(err, &te) {
			return nil, pullError(ref, err)
		}
	}
	return out, err
}

// pullError classifies a registry error.
func pullError(ref string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusNotFound:
			return &bullpen.Error{Code: bullpen.ENOTFOUND, Message: fmt.Sprintf("image %q not found in its registry", ref), Err: err}
		case http.StatusUnauthorized, http.StatusForbidden:
			return &bullpen.Error{Code: bullpen.EFORBIDDEN, Message: fmt.Sprintf("registry refused access to %q", ref), Err: err}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &bullpen.Error{Code: bullpen.EUNAVAILABLE, Message: fmt.Sprintf("cannot pull %q", ref), Err: err}
}
