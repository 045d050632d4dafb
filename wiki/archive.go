package wiki

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Import limits: a wiki export bigger than this is split by hand.
const (
	maxImportFiles = 10_000
	maxImportBytes = 64 << 20
	maxImportFile  = bullpen.MaxWikiBody + 16<<10
)

// exportBatch is how many pages an export reads at a time.
const exportBatch = 200

// Export writes every live page as <slug>.md with front matter (title,
// slug, tags, the summary of its current revision, revision, updated_at,
// updated_by) into a tar or zip archive.
func (w *Wiki) Export(ctx context.Context, actor bullpen.Member, out io.Writer, format string) error {
	if err := requireMember(actor); err != nil {
		return err
	}
	var aw archiveWriter
	switch format {
	case bullpen.WikiFormatTar, "":
		aw = &tarWriter{tw: tar.NewWriter(out)}
	case bullpen.WikiFormatZip:
		aw = &zipWriter{zw: zip.NewWriter(out)}
	default:
		return bullpen.Errorf(bullpen.EINVALID, "format must be %q or %q", bullpen.WikiFormatTar, bullpen.WikiFormatZip)
	}
	var after int64
	for {
		pages, err := w.db.WikiPages(ctx, store.WikiPageFilter{WithBody: true, ByID: true, AfterID: after, Limit: exportBatch})
		if err != nil {
			return err
		}
		if len(pages) == 0 {
			break
		}
		if err := w.authors(ctx, pages); err != nil {
			return err
		}
		ids := make([]int64, len(pages))
		for i, p := range pages {
			ids[i] = p.ID
		}
		sums, err := w.db.WikiSummaries(ctx, ids)
		if err != nil {
			return err
		}
		for _, p := range pages {
			if err := aw.add(p.Slug+".md", p.UpdatedAt, pageFile(p, sums[p.ID])); err != nil {
				return fmt.Errorf("wiki: export: %w", err)
			}
		}
		after = pages[len(pages)-1].ID
	}
	if err := aw.close(); err != nil {
		return fmt.Errorf("wiki: export: %w", err)
	}
	return nil
}

type archiveWriter interface {
	add(name string, mod time.Time, data []byte) error
	close() error
}

type tarWriter struct{ tw *tar.Writer }

func (t *tarWriter) add(name string, mod time.Time, data []byte) error {
	hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mod, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := t.tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := t.tw.Write(data)
	return err
}

func (t *tarWriter) close() error { return t.tw.Close() }

type zipWriter struct{ zw *zip.Writer }

func (z *zipWriter) add(name string, mod time.Time, data []byte) error {
	f, err := z.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mod})
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return err
}

func (z *zipWriter) close() error { return z.zw.Close() }

// Import reads a tar (optionally gzipped) or zip archive of .md files with
// front matter and saves each as a new revision by actor (creating pages
// that do not exist and bringing deleted ones back; unchanged pages get no
// revision). It is one transaction: a bad archive or a bad file is
// EINVALID (or ETOOLARGE) and nothing is imported. Only people may import.
func (w *Wiki) Import(ctx context.Context, actor bullpen.Member, data []byte) (bullpen.WikiImportResult, error) {
	res := bullpen.WikiImportResult{Created: []string{}, Updated: []string{}, Unchanged: []string{}}
	if err := requireMember(actor); err != nil {
		return res, err
	}
	if actor.Kind != bullpen.KindHuman {
		return res, bullpen.Errorf(bullpen.EFORBIDDEN, "only people can import into the wiki; agents use wiki_write")
	}
	files, err := readArchive(data)
	if err != nil {
		return res, err
	}
	inputs, err := parseFiles(files)
	if err != nil {
		return res, err
	}
	_, err = w.db.Transact(ctx, func(tx *store.Tx) error {
		for _, in := range inputs {
			cur, err := tx.WikiPageForWrite(in.Slug)
			switch {
			case err == nil:
				in.BaseRevision = cur.Revision
			case !bullpen.IsCode(err, bullpen.ENOTFOUND):
				return err
			}
			p, changed, err := w.save(tx, actor, in, saveOpts{undelete: true})
			switch {
			case err != nil:
				return fmt.Errorf("wiki: import %s: %w", in.Slug, err)
			case !changed:
				res.Unchanged = append(res.Unchanged, p.Slug)
			case p.Revision == 1:
				res.Created = append(res.Created, p.Slug)
			default:
				res.Updated = append(res.Updated, p.Slug)
			}
		}
		return nil
	})
	if err != nil {
		return bullpen.WikiImportResult{Created: []string{}, Updated: []string{}, Unchanged: []string{}}, err
	}
	return res, nil
}

// archiveFile is one regular file read from an archive.
type archiveFile struct {
	name string
	data []byte
}

func invalidArchive(format string, args ...any) error {
	return bullpen.Errorf(bullpen.EINVALID, "import: "+format, args...)
}

// readArchive detects the format by its magic bytes and reads the files.
func readArchive(data []byte) ([]archiveFile, error) {
	switch {
	case len(data) == 0:
		return nil, invalidArchive("the archive is empty")
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return readZip(data)
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, invalidArchive("bad gzip data: %v", err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, maxImportBytes+1))
		if err != nil {
			return nil, invalidArchive("bad gzip data: %v", err)
		}
		if len(raw) > maxImportBytes {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: the archive unpacks to more than %d MiB", maxImportBytes>>20)
		}
		return readTar(raw)
	}
	return readTar(data)
}

func readTar(data []byte) ([]archiveFile, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	var files []archiveFile
	total := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalidArchive("not a tar, tar.gz or zip archive (%v)", err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return nil, invalidArchive("%q is not a regular file", clipRunes(hdr.Name, 100))
		}
		if skipName(hdr.Name) {
			continue
		}
		if hdr.Size > maxImportFile {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: %q is larger than %d KB", clipRunes(hdr.Name, 100), maxImportFile/1000)
		}
		if total += int(hdr.Size); total > maxImportBytes {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: the archive holds more than %d MiB", maxImportBytes>>20)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, invalidArchive("reading %q: %v", clipRunes(hdr.Name, 100), err)
		}
		files = append(files, archiveFile{name: hdr.Name, data: b})
		if len(files) > maxImportFiles {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: more than %d files", maxImportFiles)
		}
	}
	return files, nil
}

func readZip(data []byte) ([]archiveFile, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, invalidArchive("bad zip archive: %v", err)
	}
	if len(zr.File) > maxImportFiles {
		return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: more than %d files", maxImportFiles)
	}
	var files []archiveFile
	total := 0
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || skipName(f.Name) {
			continue
		}
		if !f.Mode().IsRegular() {
			return nil, invalidArchive("%q is not a regular file", clipRunes(f.Name, 100))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, invalidArchive("reading %q: %v", clipRunes(f.Name, 100), err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxImportFile+1))
		rc.Close()
		if err != nil {
			return nil, invalidArchive("reading %q: %v", clipRunes(f.Name, 100), err)
		}
		if len(b) > maxImportFile {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: %q is larger than %d KB", clipRunes(f.Name, 100), maxImportFile/1000)
		}
		if total += len(b); total > maxImportBytes {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "import: the archive holds more than %d MiB", maxImportBytes>>20)
		}
		files = append(files, archiveFile{name: f.Name, data: b})
	}
	return files, nil
}

// skipName ignores the litter of archivers: macOS resource forks and
// hidden files.
func skipName(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(name, "__MACOSX/") || strings.HasPrefix(base, ".")
}

// parseFiles turns each file into a save, checking names, front matter
// and content; slugs must be unique.
func parseFiles(files []archiveFile) ([]bullpen.WikiSaveInput, error) {
	if len(files) == 0 {
		return nil, invalidArchive("the archive has no .md files")
	}
	seen := map[string]string{}
	out := make([]bullpen.WikiSaveInput, 0, len(files))
	for _, f := range files {
		name := path.Clean(strings.ReplaceAll(f.name, "\\", "/"))
		if !strings.HasSuffix(name, ".md") {
			return nil, invalidArchive("%q is not a .md file", clipRunes(f.name, 100))
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, invalidArchive("%q has an unsafe path", clipRunes(f.name, 100))
		}
		in, err := parsePageFile(f.data)
		if err != nil {
			return nil, invalidArchive("%s: %s", clipRunes(f.name, 100), bullpen.ErrorMessage(err))
		}
		if in.Slug == "" {
			in.Slug = strings.TrimSuffix(path.Base(name), ".md")
		}
		if in.Summary == "" {
			in.Summary = "Imported"
		}
		if in.Tags == nil {
			in.Tags = []string{} // the file says it all
		}
		if err := in.Normalize(); err != nil {
			return nil, bullpen.Errorf(bullpen.ErrorCode(err), "import: %s: %s", clipRunes(f.name, 100), bullpen.ErrorMessage(err))
		}
		if prev, ok := seen[in.Slug]; ok {
			return nil, invalidArchive("%s and %s are both page %q", prev, f.name, in.Slug)
		}
		seen[in.Slug] = f.name
		out = append(out, in)
	}
	return out, nil
}
