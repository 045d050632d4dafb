package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/wiki"
	"github.com/gofiber/fiber/v2"
)

// Wiki is what the wiki handlers need; *wiki.Wiki implements it.
type Wiki interface {
	List(ctx context.Context, actor bullpen.Member, o wiki.ListOptions) ([]bullpen.WikiPage, error)
	Tags(ctx context.Context, actor bullpen.Member) ([]bullpen.WikiTagCount, error)
	Page(ctx context.Context, actor bullpen.Member, slug string, includeDeleted bool) (bullpen.WikiPage, error)
	Save(ctx context.Context, actor bullpen.Member, in wiki.SaveInput) (bullpen.WikiPage, error)
	Delete(ctx context.Context, actor bullpen.Member, slug string) (bullpen.WikiPage, error)
	Undelete(ctx context.Context, actor bullpen.Member, slug string) (bullpen.WikiPage, error)
	Restore(ctx context.Context, actor bullpen.Member, slug string, number, base int, summary string) (bullpen.WikiPage, error)
	Revisions(ctx context.Context, actor bullpen.Member, slug string) ([]bullpen.WikiRevision, error)
	Revision(ctx context.Context, actor bullpen.Member, slug string, number int) (bullpen.WikiRevision, error)
	Diff(ctx context.Context, actor bullpen.Member, slug string, from, to int) (wiki.Diff, error)
	Backlinks(ctx context.Context, actor bullpen.Member, slug string) ([]bullpen.WikiPageRef, error)
	Wanted(ctx context.Context, actor bullpen.Member, limit int) ([]bullpen.WikiWanted, error)
	Search(ctx context.Context, actor bullpen.Member, o wiki.SearchOptions) ([]bullpen.WikiSearchHit, error)
	Preview(ctx context.Context, actor bullpen.Member, body string) (string, error)
	Export(ctx context.Context, actor bullpen.Member, w io.Writer, format string) error
	Import(ctx context.Context, actor bullpen.Member, data []byte) (wiki.ImportResult, error)
}

var _ Wiki = (*wiki.Wiki)(nil)

// wikiRoutes serves /api/v1/wiki and the /wiki/{slug} links that rendered
// pages carry (they open the dashboard's wiki panel on that page).
func (s *Server) wikiRoutes(api fiber.Router) {
	w := api.Group("/wiki", s.needWiki)
	w.Get("/pages", s.wikiList)
	w.Post("/pages", s.wikiCreate)
	w.Get("/pages/:slug", s.wikiGet)
	w.Put("/pages/:slug", s.wikiSave)
	w.Delete("/pages/:slug", s.wikiDelete)
	w.Post("/pages/:slug/undelete", s.wikiUndelete)
	w.Get("/pages/:slug/revisions", s.wikiRevisions)
	w.Get("/pages/:slug/revisions/:rev", s.wikiRevision)
	w.Get("/pages/:slug/diff", s.wikiDiff)
	w.Post("/pages/:slug/restore", s.wikiRestore)
	w.Get("/pages/:slug/backlinks", s.wikiBacklinks)
	w.Get("/wanted", s.wikiWanted)
	w.Get("/tags", s.wikiTags)
	w.Get("/search", s.wikiSearch)
	w.Post("/preview", s.wikiPreview)
	w.Get("/export", s.wikiExport)
	w.Post("/import", s.wikiImport)
	s.app.Get("/wiki/:slug", s.authPage, s.wikiLink)
}

func (s *Server) needWiki(c *fiber.Ctx) error {
	if s.svc.Wiki == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the wiki is not configured on this server")
	}
	return c.Next()
}

// slugParam returns the URL-decoded :slug.
func slugParam(c *fiber.Ctx) (string, error) {
	slug, err := url.PathUnescape(c.Params("slug"))
	if err != nil {
		return "", bullpen.Errorf(bullpen.EINVALID, "bad page slug")
	}
	return slug, nil
}

// wikiError writes a save conflict as 409 with the current page beside
// the error, so a client can show both versions; other errors go to the
// error handler.
func wikiError(c *fiber.Ctx, err error) error {
	var ce *wiki.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	var body struct {
		errorBody
		Current bullpen.WikiPage `json:"current"`
	}
	body.Error.Code, body.Error.Message = bullpen.ECONFLICT, bullpen.ErrorMessage(err)
	body.Current = ce.Current
	return c.Status(http.StatusConflict).JSON(body)
}

func boolQuery(c *fiber.Ctx, name string) bool {
	switch c.Query(name) {
	case "1", "true", "yes":
		return true
	}
	return false
}

func (s *Server) wikiList(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 100)
	if err != nil {
		return err
	}
	offset, err := intQuery(c, "offset", 0)
	if err != nil {
		return err
	}
	var byUpdate bool
	switch c.Query("sort") {
	case "", "title":
	case "updated":
		byUpdate = true
	default:
		return bullpen.Errorf(bullpen.EINVALID, "sort must be \"title\" or \"updated\"")
	}
	pages, err := s.svc.Wiki.List(c.UserContext(), actor(c), wiki.ListOptions{Tag: c.Query("tag"),
		Deleted: boolQuery(c, "deleted"), ByUpdate: byUpdate, Limit: int(limit), Offset: int(offset)})
	if err != nil {
		return err
	}
	return c.JSON(list(pages))
}

// createRequest is the body of a new page.
type createRequest struct {
	Slug    string   `json:"slug"`
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	Tags    []string `json:"tags"`
	Summary string   `json:"summary"`
}

func (s *Server) wikiCreate(c *fiber.Ctx) error {
	var in createRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	p, err := s.svc.Wiki.Save(c.UserContext(), actor(c), wiki.SaveInput{Slug: in.Slug, Title: in.Title, Body: in.Body,
		Tags: in.Tags, Summary: in.Summary})
	if err != nil {
		return wikiError(c, err)
	}
	return c.Status(http.StatusCreated).JSON(p)
}

func (s *Server) wikiGet(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	p, err := s.svc.Wiki.Page(c.UserContext(), actor(c), slug, boolQuery(c, "deleted"))
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// saveRequest is the body of a page save. base_revision is required: the
// revision the edit started from (0 creates the page). Tags left out keep
// the page's tags.
type saveRequest struct {
	Title        string   `json:"title"`
	Body         string   `json:"body"`
	Tags         []string `json:"tags"`
	Summary      string   `json:"summary"`
	BaseRevision *int     `json:"base_revision"`
}

func (s *Server) wikiSave(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	var in saveRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.BaseRevision == nil {
		return bullpen.Errorf(bullpen.EINVALID, "base_revision is required: the revision you edited (0 to create the page)")
	}
	p, err := s.svc.Wiki.Save(c.UserContext(), actor(c), wiki.SaveInput{Slug: slug, Title: in.Title, Body: in.Body,
		Tags: in.Tags, Summary: in.Summary, BaseRevision: *in.BaseRevision})
	if err != nil {
		return wikiError(c, err)
	}
	return c.JSON(p)
}

func (s *Server) wikiDelete(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	p, err := s.svc.Wiki.Delete(c.UserContext(), actor(c), slug)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) wikiUndelete(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	p, err := s.svc.Wiki.Undelete(c.UserContext(), actor(c), slug)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) wikiRevisions(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	revs, err := s.svc.Wiki.Revisions(c.UserContext(), actor(c), slug)
	if err != nil {
		return err
	}
	return c.JSON(list(revs))
}

func (s *Server) wikiRevision(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	n, err := idParam(c, "rev")
	if err != nil {
		return err
	}
	rev, err := s.svc.Wiki.Revision(c.UserContext(), actor(c), slug, int(n))
	if err != nil {
		return err
	}
	return c.JSON(rev)
}

func (s *Server) wikiDiff(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	from, err := intQuery(c, "from", 0)
	if err != nil {
		return err
	}
	to, err := intQuery(c, "to", 0)
	if err != nil {
		return err
	}
	d, err := s.svc.Wiki.Diff(c.UserContext(), actor(c), slug, int(from), int(to))
	if err != nil {
		return err
	}
	return c.JSON(d)
}

// restoreRequest names the revision to restore and, optionally, the
// revision the restore is based on (0: whatever is current).
type restoreRequest struct {
	Revision     int    `json:"revision"`
	BaseRevision int    `json:"base_revision"`
	Summary      string `json:"summary"`
}

func (s *Server) wikiRestore(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	var in restoreRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.Revision <= 0 {
		return bullpen.Errorf(bullpen.EINVALID, "revision must be a positive integer")
	}
	p, err := s.svc.Wiki.Restore(c.UserContext(), actor(c), slug, in.Revision, in.BaseRevision, in.Summary)
	if err != nil {
		return wikiError(c, err)
	}
	return c.JSON(p)
}

func (s *Server) wikiBacklinks(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	refs, err := s.svc.Wiki.Backlinks(c.UserContext(), actor(c), slug)
	if err != nil {
		return err
	}
	return c.JSON(list(refs))
}

func (s *Server) wikiWanted(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 100)
	if err != nil {
		return err
	}
	wanted, err := s.svc.Wiki.Wanted(c.UserContext(), actor(c), int(limit))
	if err != nil {
		return err
	}
	return c.JSON(list(wanted))
}

func (s *Server) wikiTags(c *fiber.Ctx) error {
	tags, err := s.svc.Wiki.Tags(c.UserContext(), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(list(tags))
}

func (s *Server) wikiSearch(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 20)
	if err != nil {
		return err
	}
	hits, err := s.svc.Wiki.Search(c.UserContext(), actor(c), wiki.SearchOptions{Query: c.Query("q"), Tag: c.Query("tag"),
		Prefix: boolQuery(c, "prefix"), Limit: int(limit)})
	if err != nil {
		return err
	}
	return c.JSON(list(hits))
}

// previewRequest is markdown to render.
type previewRequest struct {
	Body string `json:"body"`
}

func (s *Server) wikiPreview(c *fiber.Ctx) error {
	var in previewRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	html, err := s.svc.Wiki.Preview(c.UserContext(), actor(c), in.Body)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"html": html})
}

func (s *Server) wikiExport(c *fiber.Ctx) error {
	format := c.Query("format", wiki.FormatTar)
	var buf bytes.Buffer
	if err := s.svc.Wiki.Export(c.UserContext(), actor(c), &buf, format); err != nil {
		return err
	}
	ctype := "application/x-tar"
	if format == wiki.FormatZip {
		ctype = "application/zip"
	}
	c.Set(fiber.HeaderContentType, ctype)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="wiki-%s.%s"`, time.Now().UTC().Format("20060102"), format))
	return c.Send(buf.Bytes())
}

// wikiImport takes the archive as the raw request body (tar, tar.gz or
// zip), within the server's body limit.
func (s *Server) wikiImport(c *fiber.Ctx) error {
	res, err := s.svc.Wiki.Import(c.UserContext(), actor(c), c.Body())
	if err != nil {
		return err
	}
	return c.JSON(res)
}

// wikiLink opens the dashboard with the wiki panel on a page.
func (s *Server) wikiLink(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	return c.Redirect("/c/"+office.GeneralChannel+"#wiki/"+url.PathEscape(slug), http.StatusSeeOther)
}
