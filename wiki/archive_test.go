package wiki_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestExportImportRoundTrip(t *testing.T) {
	for _, format := range []string{bullpen.WikiFormatTar, bullpen.WikiFormatZip} {
		t.Run(format, func(t *testing.T) {
			each(t, func(t *testing.T, f *fixture) {
				f.save(f.ada, bullpen.WikiSaveInput{Title: `Quote "Me": a title`, Body: "---\nnot front matter\n---\n[[Other]]\n", Tags: []string{"x", "y"}, Summary: "line one"})
				f.save(f.ada, bullpen.WikiSaveInput{Slug: "other", Title: "Other", Body: "plain\r\nwindows\n"})
				f.save(f.ada, bullpen.WikiSaveInput{Title: "Gone", Body: "bye"})
				f.w.Delete(f.ctx, f.ada, "gone")
				var buf bytes.Buffer
				if err := f.w.Export(f.ctx, f.ada, &buf, format); err != nil {
					t.Fatal(err)
				}
				// Into a fresh wiki: the same pages, one revision each.
				g := newFixture(t, freshLike(t, f))
				res, err := g.w.Import(g.ctx, g.ada, buf.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(res.Created) != "[quote-me-a-title other]" || len(res.Updated)+len(res.Unchanged) != 0 {
					t.Fatalf("import = %+v", res)
				}
				p, err := g.w.Page(g.ctx, g.ada, "quote-me-a-title", false)
				if err != nil || p.Title != `Quote "Me": a title` || p.Body != "---\nnot front matter\n---\n[[Other]]\n" || fmt.Sprint(p.Tags) != "[x y]" {
					t.Fatalf("imported page = %+v, %v", p, err)
				}
				r, _ := g.w.Revision(g.ctx, g.ada, p.Slug, 1)
				if r.Summary != "line one" {
					t.Errorf("imported summary = %q", r.Summary)
				}
				if back, _ := g.w.Backlinks(g.ctx, g.ada, "other"); len(back) != 1 {
					t.Errorf("imported links: backlinks(other) = %v", back)
				}
				// Importing the same again changes nothing; back into the
				// source it brings nothing new either.
				res, err = g.w.Import(g.ctx, g.ada, buf.Bytes())
				if err != nil || len(res.Unchanged) != 2 || len(res.Created)+len(res.Updated) != 0 {
					t.Errorf("re-import = %+v, %v", res, err)
				}
			})
		})
	}
}

func TestImportUpdatesAndUndeletes(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Live", Body: "v1"})
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Dead", Body: "v1"})
		f.w.Delete(f.ctx, f.ada, "dead")
		arch := tarOf(t, map[string]string{
			"wiki/live.md": "---\ntitle: Live\ntags:\n  - a\n  - 'b'\nsummary: from archive\n---\nv2\n",
			"dead.md":      "---\ntitle: \"Dead\"\n---\nv1",
			"new.md":       "---\ntitle: New page\nslug: brand-new\ntags: [z, 'w']\n---\n",
			".DS_Store":    "junk",
		})
		res, err := f.w.Import(f.ctx, f.ada, arch)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(res.Created, res.Updated, res.Unchanged) != "[brand-new] [dead live] []" {
			t.Errorf("import = %+v", res)
		}
		live, _ := f.w.Page(f.ctx, f.ada, "live", false)
		if live.Revision != 2 || live.Body != "v2\n" || fmt.Sprint(live.Tags) != "[a b]" {
			t.Errorf("live = %+v", live)
		}
		if dead, err := f.w.Page(f.ctx, f.ada, "dead", false); err != nil || dead.Revision != 2 {
			t.Errorf("dead = %+v, %v; want undeleted at revision 2", dead, err)
		}
		_, err = f.w.Import(f.ctx, f.agent, arch)
		wantCode(t, "agent import", err, bullpen.EFORBIDDEN)
	})
}

// A bad archive, or one bad file among good ones, imports nothing.
func TestImportRejectsBadArchives(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		good := "---\ntitle: Good\n---\nbody"
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(tarOf(t, map[string]string{"a.md": good, "b.md": "no front matter"}))
		zw.Close()
		tests := []struct {
			name string
			data []byte
			code string
			msg  string
		}{
			{"empty", nil, bullpen.EINVALID, "empty"},
			{"garbage", []byte("this is not an archive at all, not even close...."), bullpen.EINVALID, "not a tar"},
			{"truncated zip", []byte("PK\x03\x04garbage"), bullpen.EINVALID, "zip"},
			{"no md files", tarOf(t, map[string]string{".hidden": "x"}), bullpen.EINVALID, "no .md files"},
			{"not md", tarOf(t, map[string]string{"a.md": good, "b.txt": "x"}), bullpen.EINVALID, "not a .md file"},
			{"no front matter", tarOf(t, map[string]string{"a.md": good, "b.md": "hello"}), bullpen.EINVALID, "front matter"},
			{"unclosed front matter", tarOf(t, map[string]string{"b.md": "---\ntitle: x\n"}), bullpen.EINVALID, "closing"},
			{"no title", tarOf(t, map[string]string{"b.md": "---\ntags: [a]\n---\n"}), bullpen.EINVALID, "no title"},
			{"bad quoted", tarOf(t, map[string]string{"b.md": "---\ntitle: \"oops\n---\n"}), bullpen.EINVALID, "quoted"},
			{"bad slug", tarOf(t, map[string]string{"Bad Name.md": good}), bullpen.EINVALID, "slug"},
			{"bad tag", tarOf(t, map[string]string{"b.md": "---\ntitle: B\ntags: [\"a b\"]\n---\n"}), bullpen.EINVALID, "tag"},
			{"duplicate", tarOf(t, map[string]string{"x/a.md": good, "y/a.md": good}), bullpen.EINVALID, "both"},
			{"control chars", tarOf(t, map[string]string{"a.md": good, "b.md": "---\ntitle: B\n---\n\x01"}), bullpen.EINVALID, "control"},
			{"gzip with a bad file", gz.Bytes(), bullpen.EINVALID, "front matter"},
			{"zip with a bad file", zipOf(t, map[string]string{"a.md": good, "b.md": "---\n---\n"}), bullpen.EINVALID, "no title"},
			{"too big", tarOf(t, map[string]string{"a.md": "---\ntitle: A\n---\n" + strings.Repeat("x", bullpen.MaxWikiBody+1)}), bullpen.ETOOLARGE, ""},
		}
		for _, tt := range tests {
			_, err := f.w.Import(f.ctx, f.ada, tt.data)
			wantCode(t, tt.name, err, tt.code)
			if !strings.Contains(bullpen.ErrorMessage(err), tt.msg) {
				t.Errorf("%s: message %q lacks %q", tt.name, bullpen.ErrorMessage(err), tt.msg)
			}
		}
		if list, _ := f.w.List(f.ctx, f.ada, bullpen.WikiListOptions{}); len(list) != 0 {
			t.Errorf("%d pages after bad imports, want 0", len(list))
		}
		if n := len(f.events(bullpen.EventWikiPageSaved)); n != 0 {
			t.Errorf("%d events after bad imports, want 0", n)
		}
	})
}

func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, _ := zw.Create(name)
		w.Write([]byte(files[name]))
	}
	zw.Close()
	return buf.Bytes()
}
