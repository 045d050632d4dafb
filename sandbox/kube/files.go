package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
)

// fileOp runs "file ARGS…" through the helper, as the sandbox user, and
// returns its output (nil when out is given).
func (d *Driver) fileOp(ctx context.Context, id string, stdin io.Reader, out io.Writer, args ...string) ([]byte, error) {
	r, err := d.running(ctx, id, "use the files of")
	if err != nil {
		return nil, err
	}
	var buf, errb bytes.Buffer
	if out == nil {
		out = &buf
	}
	code, err := d.exec.stream(ctx, objName(r.Info.ID), append([]string{helperPath, "file"}, args...), stdin, out, &errb)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fileErr(args[0]+" "+args[1], code, errb.String())
	}
	return buf.Bytes(), nil
}

// fileErr maps the helper's exit status to an error code, as the local
// runtime maps errno values.
func fileErr(op string, code int, msg string) error {
	msg = strings.TrimSpace(msg)
	switch code {
	case podinit.ExitNotFound:
		return bullpen.Errorf(bullpen.ENOTFOUND, "%s: no such file or directory", op)
	case podinit.ExitExists:
		return bullpen.Errorf(bullpen.ECONFLICT, "%s: %s", op, msg)
	case podinit.ExitInvalid:
		return bullpen.Errorf(bullpen.EINVALID, "%s: %s", op, msg)
	case podinit.ExitTooLarge:
		return bullpen.Errorf(bullpen.ETOOLARGE, "%s: disk quota exceeded", op)
	}
	return fmt.Errorf("kube: %s: exit %d: %s", op, code, msg)
}

// ReadFile streams a file out of the sandbox.
func (d *Driver) ReadFile(ctx context.Context, id, p string) (io.ReadCloser, error) {
	fi, err := d.Stat(ctx, id, p)
	if err != nil {
		return nil, err
	}
	if fi.IsDir {
		return nil, bullpen.Errorf(bullpen.EINVALID, "%s is a directory", p)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := d.fileOp(ctx, id, nil, pw, "read", p)
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// WriteFile streams src into a file (replaced whole when src ends
// cleanly); its directory must exist.
func (d *Driver) WriteFile(ctx context.Context, id, p string, src io.Reader, mode os.FileMode) error {
	if mode == 0 {
		mode = 0o644
	}
	_, err := d.fileOp(ctx, id, src, nil, "write", p, strconv.FormatUint(uint64(mode.Perm()), 8))
	return err
}

// ListFiles lists a directory.
func (d *Driver) ListFiles(ctx context.Context, id, dir string) ([]sandbox.FileInfo, error) {
	out, err := d.fileOp(ctx, id, nil, nil, "list", dir)
	if err != nil {
		return nil, err
	}
	var list []sandbox.FileInfo
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("kube: list %s: %w", dir, err)
	}
	return list, nil
}

// Stat describes a file (a symbolic link itself, not its target).
func (d *Driver) Stat(ctx context.Context, id, p string) (sandbox.FileInfo, error) {
	out, err := d.fileOp(ctx, id, nil, nil, "stat", p)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	var fi sandbox.FileInfo
	if err := json.Unmarshal(out, &fi); err != nil {
		return fi, fmt.Errorf("kube: stat %s: %w", p, err)
	}
	return fi, nil
}

// Mkdir makes a directory (and its parents with parents).
func (d *Driver) Mkdir(ctx context.Context, id, p string, parents bool) error {
	args := []string{"mkdir", p}
	if parents {
		args = append(args, "-p")
	}
	_, err := d.fileOp(ctx, id, nil, nil, args...)
	return err
}

// Remove removes a file or an empty directory (any directory with
// recursive).
func (d *Driver) Remove(ctx context.Context, id, p string, recursive bool) error {
	args := []string{"remove", p}
	if recursive {
		args = append(args, "-r")
	}
	_, err := d.fileOp(ctx, id, nil, nil, args...)
	return err
}

// Rename moves a file or a directory.
func (d *Driver) Rename(ctx context.Context, id, from, to string) error {
	_, err := d.fileOp(ctx, id, nil, nil, "rename", from, to)
	return err
}
