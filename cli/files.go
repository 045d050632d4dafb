package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// remote splits "ID:PATH"; ok is false for a local path.
func remote(arg string) (id, path string, ok bool) {
	if strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, ".") {
		return "", arg, false
	}
	id, path, ok = strings.Cut(arg, ":")
	if !ok || id == "" {
		return "", arg, false
	}
	return id, path, true
}

func (e *env) sandboxCp(args []string) error {
	fs := e.flags("sandbox cp", "sandbox cp [flags] SRC DST", `
Copies one file between this machine and a sandbox, streaming (any size).
One side is ID:PATH; "-" as the local side is stdin or stdout.
  bullpen sandbox cp ./data.csv sb_123:/home/sandbox/data.csv
  bullpen sandbox cp sb_123:/home/sandbox/out.txt -`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 2, 2); err != nil {
		return err
	}
	sid, spath, sremote := remote(pos[0])
	did, dpath, dremote := remote(pos[1])
	if sremote == dremote {
		return usagef("exactly one side of cp must be a sandbox path (ID:PATH)")
	}
	if err := e.connect(); err != nil {
		return err
	}
	if dremote {
		return e.upload(spath, did, dpath)
	}
	return e.download(sid, spath, dpath)
}

func (e *env) upload(local, id, path string) error {
	var r io.Reader = e.io.Stdin
	var mode os.FileMode
	if local != "-" {
		f, err := os.Open(local)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			mode = fi.Mode().Perm()
		}
		r = f
	}
	fi, err := e.c.WriteFile(e.ctx, id, path, r, mode)
	if err != nil {
		return err
	}
	return e.out(fi, fmt.Sprintf("%s: %d bytes", fi.Path, fi.Size))
}

func (e *env) download(id, path, local string) (err error) {
	rc, err := e.c.ReadFile(e.ctx, id, path)
	if err != nil {
		return err
	}
	defer rc.Close()
	var w io.Writer = e.io.Stdout
	if local != "-" {
		f, err := os.Create(local)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("copy %s:%s: %w", id, path, err)
	}
	return nil
}

func (e *env) sandboxLs(args []string) error {
	fs := e.flags("sandbox ls", "sandbox ls [flags] [ID[:DIR]]", `
Without an argument lists your sandboxes (ID, state, image, name); with
ID[:DIR] lists the files of DIR (default: the sandbox's workdir).`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 1); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	if len(pos) == 0 {
		sbs, err := e.c.Sandboxes(e.ctx, nil, false)
		if err != nil || e.json {
			return errors.Join(err, e.outIf(err == nil, sbs))
		}
		for _, s := range sbs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.State, s.Image, s.Name)
		}
		return tw.Flush()
	}
	id, dir, _ := strings.Cut(pos[0], ":")
	if dir == "" {
		dir = "."
	}
	files, err := e.c.ListFiles(e.ctx, id, dir)
	if err != nil || e.json {
		return errors.Join(err, e.outIf(err == nil, files))
	}
	for _, f := range files {
		name := f.Name
		if f.IsDir {
			name += "/"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", f.Mode, f.Size, f.ModTime.Local().Format(time.DateTime), name)
	}
	return tw.Flush()
}

// outIf prints v as JSON when ok.
func (e *env) outIf(ok bool, v any) error {
	if !ok {
		return nil
	}
	return e.out(v, "")
}

func (e *env) sandboxRm(args []string) error {
	fs := e.flags("sandbox rm", "sandbox rm [flags] ID... | ID:PATH", `
Terminates the sandboxes named (their filesystems are deleted), or with
ID:PATH removes a file (-r: a directory tree).`)
	recursive := fs.Bool("r", false, "remove a directory tree (with ID:PATH)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, -1); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	for _, a := range pos {
		if id, path, ok := remote(a); ok {
			err = e.c.RemoveFile(e.ctx, id, path, *recursive)
		} else {
			err = e.c.TerminateSandbox(e.ctx, a)
		}
		if err != nil {
			return err
		}
		if !e.json {
			fmt.Fprintln(e.io.Stdout, "removed", a)
		}
	}
	return nil
}
