package podinit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// FileInfo is what "file stat" and "file list" print, as JSON; the
// driver turns it into a sandbox.FileInfo (same field names).
type FileInfo struct {
	Name       string      `json:"name"`
	Path       string      `json:"path"`
	Size       int64       `json:"size"`
	Mode       os.FileMode `json:"mode"`
	ModTime    time.Time   `json:"mod_time"`
	IsDir      bool        `json:"is_dir"`
	LinkTarget string      `json:"link_target,omitempty"`
}

type codedError struct {
	code int
	err  error
}

func (e codedError) Error() string { return e.err.Error() }

func asCoded(err error, ce *codedError) bool { return errors.As(err, ce) }

// classify gives a file error the exit status the driver maps.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOTEMPTY):
		return codedError{ExitExists, err}
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return codedError{ExitInvalid, err}
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EFBIG):
		return codedError{ExitTooLarge, err}
	case errors.Is(err, fs.ErrNotExist):
		return codedError{ExitNotFound, err}
	case errors.Is(err, fs.ErrExist):
		return codedError{ExitExists, err}
	case errors.Is(err, fs.ErrInvalid):
		return codedError{ExitInvalid, err}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return codedError{ExitInvalid, err} // ENOTDIR, EISDIR, ENOTEMPTY …
	}
	return err
}

// file runs one file operation: read P (to stdout), write P MODE (from
// stdin, replacing the file atomically), list D, stat P (JSON), mkdir P
// [-p], remove P [-r], rename FROM TO.
func file(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usage(stderr, "file read|write|list|stat|mkdir|remove|rename PATH …")
	}
	op, p := args[0], args[1]
	flag := len(args) > 2 && (args[2] == "-p" || args[2] == "-r")
	var err error
	switch op {
	case "read":
		err = readTo(p, stdout)
	case "write":
		mode := int64(0o644)
		if len(args) > 2 {
			if mode, err = strconv.ParseInt(args[2], 8, 32); err != nil {
				err = codedError{ExitInvalid, fmt.Errorf("bad mode %q", args[2])}
			}
		}
		if err == nil {
			err = writeFrom(p, os.FileMode(mode)&os.ModePerm, stdin)
		}
	case "stat":
		var fi FileInfo
		if fi, err = stat(p); err == nil {
			err = json.NewEncoder(stdout).Encode(fi)
		}
	case "list":
		var list []FileInfo
		if list, err = listDir(p); err == nil {
			err = json.NewEncoder(stdout).Encode(list)
		}
	case "mkdir":
		if flag {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.Mkdir(p, 0o755)
		}
	case "remove":
		if _, err = os.Lstat(p); err == nil {
			if flag {
				err = os.RemoveAll(p)
			} else {
				err = os.Remove(p)
			}
		}
	case "rename":
		if len(args) != 3 {
			return usage(stderr, "file rename FROM TO")
		}
		err = os.Rename(p, args[2])
	default:
		return usage(stderr, "file read|write|list|stat|mkdir|remove|rename PATH …")
	}
	return report(stderr, classify(err))
}

func readTo(p string, w io.Writer) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return codedError{ExitInvalid, fmt.Errorf("%s is a directory", p)}
	}
	_, err = io.Copy(w, f)
	return err
}

// writeFrom writes r to a temporary file beside p and renames it over p,
// so that a cut stream never leaves half a file: a SIGTERM (serve's
// answer to a dropped connection) removes the temporary file and exits.
func writeFrom(p string, mode os.FileMode, r io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".bullpen-write-*")
	if err != nil {
		return err
	}
	sigs, done := make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(sigs, syscall.SIGTERM)
	defer func() { signal.Stop(sigs); close(done) }()
	go func() {
		select {
		case <-sigs:
			os.Remove(tmp.Name())
			os.Exit(128 + int(syscall.SIGTERM))
		case <-done:
		}
	}()
	_, err = io.Copy(tmp, r)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func stat(p string) (FileInfo, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return FileInfo{}, err
	}
	return infoOf(p, fi), nil
}

func infoOf(p string, fi fs.FileInfo) FileInfo {
	out := FileInfo{Name: fi.Name(), Path: p, Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime().UTC(), IsDir: fi.IsDir()}
	if fi.Mode()&os.ModeSymlink != 0 {
		out.LinkTarget, _ = os.Readlink(p)
	}
	return out
}

func listDir(dir string) ([]FileInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, infoOf(filepath.Join(dir, e.Name()), fi))
	}
	return out, nil
}
