package e2b

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// fileOut is a written file, as envd answers an upload.
type fileOut struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
}

// download streams a file: GET /files?path=….
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	me, id, err := s.sandboxOf(r.Context())
	if err == nil {
		_, err = cleanPath(r.URL.Query().Get("path"))
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	p := r.URL.Query().Get("path")
	fi, err := s.cfg.Boxes.Stat(r.Context(), me, id, p)
	if err == nil && fi.IsDir {
		err = bullpen.Errorf(bullpen.EINVALID, "%s is a directory", p)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	rc, err := s.cfg.Boxes.ReadFile(r.Context(), me, id, p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": path.Base(fi.Path)}))
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, rc)
}

// upload writes files: POST /files?path=… with the bytes as the body
// (application/octet-stream) or as multipart parts named "file" (each
// part's filename is its path when the query names none). Parent
// directories are made.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	me, id, err := s.sandboxOf(r.Context())
	if err != nil {
		s.writeError(w, err)
		return
	}
	if r.Header.Get("Content-Encoding") != "" {
		s.writeError(w, bullpen.Errorf(bullpen.EUNSUPPORTED, "compressed uploads are not supported: send the bytes as they are"))
		return
	}
	query := r.URL.Query().Get("path")
	write := func(p string, body io.Reader) (fileOut, error) {
		if _, err := cleanPath(p); err != nil {
			return fileOut{}, err
		}
		ctx := r.Context()
		if dir := path.Dir(p); dir != "." && dir != "/" {
			if err := s.cfg.Boxes.Mkdir(ctx, me, id, dir, true); err != nil {
				return fileOut{}, err
			}
		}
		if err := s.cfg.Boxes.WriteFile(ctx, me, id, p, body, 0o644); err != nil {
			return fileOut{}, err
		}
		fi, err := s.cfg.Boxes.Stat(ctx, me, id, p)
		if err != nil {
			return fileOut{}, err
		}
		return fileOut{Name: path.Base(fi.Path), Type: "file", Path: fi.Path}, nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var out []fileOut
	if ct != "multipart/form-data" {
		f, err := write(query, r.Body)
		if err != nil {
			s.writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, []fileOut{f})
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "bad multipart body: %s", clip(err.Error())))
		return
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "bad multipart body: %s", clip(err.Error())))
			return
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		// The SDKs name each file by the part's filename, whole path and
		// all (mime/multipart's FileName keeps only its base).
		p := rawFilename(part.Header.Get("Content-Disposition"))
		if p == "" {
			p = query
		}
		f, err := write(p, part)
		part.Close()
		if err != nil {
			s.writeError(w, err)
			return
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "no file part in the upload"))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// rawFilename is the filename parameter of a Content-Disposition, with
// its directories (mime/multipart's FileName keeps only the base name).
func rawFilename(cd string) string {
	_, params, err := mime.ParseMediaType(cd)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(params["filename"])
}
