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
	"github.com/gofiber/fiber/v2"
)

// Wiki is what the wiki handlers need; *wiki.Wiki implements it.
type Wiki interface {
	List(ctx context.Context, actor bullpen.Member, o bullpen.WikiListOptions) ([]bullpen.WikiPage, error)
	Tags(ctx context.Context, actor bullpen.Member) ([]bullpen.WikiTagCount, error)
	Page(ctx context.Context, actor bullpen.Member, slug string, includeDeleted bool) (bullpen.WikiPage, error)
	Save(ctx context.Context, actor bullpen.Member, in bullpen.WikiSaveInput) (bullpen.WikiPage, error)
	Delete(ctx context.Context, actor bullpen.Member, slug string) (bullpen.WikiPage, error)
	Undelete(ctx context.Context, actor bullpen.Member, slug string) (bullpen.WikiPage, error)
	Restore(ctx context.Context, actor bullpen.Member, slug string, number, base int, summary string) (bullpen.WikiPage, error)
	Revisions(ctx context.Context, actor bullpen.Member, slug string) ([]bullpen.WikiRevision, error)
	Revision(ctx context.Context, actor bullpen.Member, slug string, number int) (bullpen.WikiRevision, error)
	Diff(ctx context.Context, actor bullpen.Member, slug string, from, to int) (bullpen.WikiDiff, error)
	Backlinks(ctx context.Context, actor bullpen.Member, slug string) ([]bullpen.WikiPageRef, error)
	Wanted(ctx context.Context, actor bullpen.Member, limit int) ([]bullpen.WikiWanted, error)
	Search(ctx context.Context, actor bullpen.Member, o bullpen.WikiSearchOptions) ([]bullpen.WikiSearchHit, error)
	Preview(ctx context.Context, actor bullpen.Member, body string) (string, error)
	Export(ctx context.Context, actor bullpen.Member, w io.Writer, format string) error
	Import(ctx context.Context, actor bullpen.Member, data []byte) (bullpen.WikiImportResult, error)
}

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
	var ce *bullpen.WikiConflictError
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
	pages, err := s.svc.Wiki.List(c.UserContext(), actor(c), bullpen.WikiListOptions{Tag: c.Query("tag"),
		Deleted: boolQuery(c, "deleted"), ByUpdate: byUpdate, Limit: int(limit), Offset: int(offset)})
	return replyList(c, pages, err)
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
	return wikiError(c, withBody(c, http.StatusCreated, func(ctx context.Context, me bullpen.Member, in createRequest) (bullpen.WikiPage, error) {
		return s.svc.Wiki.Save(ctx, me, bullpen.WikiSaveInput{Slug: in.Slug, Title: in.Title, Body: in.Body, Tags: in.Tags, Summary: in.Summary})
	}))
}

func (s *Server) wikiGet(c *fiber.Ctx) error {
	return keyed(c, slugParam, func(ctx context.Context, me bullpen.Member, slug string) (bullpen.WikiPage, error) {
		return s.svc.Wiki.Page(ctx, me, slug, boolQuery(c, "deleted"))
	})
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
	return wikiError(c, keyedBody(c, http.StatusOK, slugParam, func(ctx context.Context, me bullpen.Member, slug string, in saveRequest) (bullpen.WikiPage, error) {
		if in.BaseRevision == nil {
			return bullpen.WikiPage{}, bullpen.Errorf(bullpen.EINVALID, "base_revision is required: the revision you edited (0 to create the page)")
		}
		return s.svc.Wiki.Save(ctx, me, bullpen.WikiSaveInput{Slug: slug, Title: in.Title, Body: in.Body,
			Tags: in.Tags, Summary: in.Summary, BaseRevision: *in.BaseRevision})
	}))
}

func (s *Server) wikiDelete(c *fiber.Ctx) error { return keyed(c, slugParam, s.svc.Wiki.Delete) }

func (s *Server) wikiUndelete(c *fiber.Ctx) error { return keyed(c, slugParam, s.svc.Wiki.Undelete) }

func (s *Server) wikiRevisions(c *fiber.Ctx) error {
	return keyedList(c, slugParam, s.svc.Wiki.Revisions)
}

func (s *Server) wikiRevision(c *fiber.Ctx) error {
	return keyed(c, slugParam, func(ctx context.Context, me bullpen.Member, slug string) (bullpen.WikiRevision, error) {
		n, err := idParam(c, "rev")
		if err != nil {
			return bullpen.WikiRevision{}, err
		}
		return s.svc.Wiki.Revision(ctx, me, slug, int(n))
	})
}

func (s *Server) wikiDiff(c *fiber.Ctx) error {
	return keyed(c, slugParam, func(ctx context.Context, me bullpen.Member, slug string) (bullpen.WikiDiff, error) {
		from, err := intQuery(c, "from", 0)
		if err != nil {
			return bullpen.WikiDiff{}, err
		}
		to, err := intQuery(c, "to", 0)
		if err != nil {
			return bullpen.WikiDiff{}, err
		}
		return s.svc.Wiki.Diff(ctx, me, slug, int(from), int(to))
	})
}

// restoreRequest names the revision to restore and, optionally, the
// revision the restore is based on (0: whatever is current).
type restoreRequest struct {
	Revision     int    `json:"revision"`
	BaseRevision int    `json:"base_revision"`
	Summary      string `json:"summary"`
}

func (s *Server) wikiRestore(c *fiber.Ctx) error {
	return wikiError(c, keyedBody(c, http.StatusOK, slugParam, func(ctx context.Context, me bullpen.Member, slug string, in restoreRequest) (bullpen.WikiPage, error) {
		if in.Revision <= 0 {
			return bullpen.WikiPage{}, bullpen.Errorf(bullpen.EINVALID, "revision must be a positive integer")
		}
		return s.svc.Wiki.Restore(ctx, me, slug, in.Revision, in.BaseRevision, in.Summary)
	}))
}

func (s *Server) wikiBacklinks(c *fiber.Ctx) error {
	return keyedList(c, slugParam, s.svc.Wiki.Backlinks)
}

func (s *Server) wikiWanted(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 100)
	if err != nil {
		return err
	}
	wanted, err := s.svc.Wiki.Wanted(c.UserContext(), actor(c), int(limit))
	return replyList(c, wanted, err)
}

func (s *Server) wikiTags(c *fiber.Ctx) error { return listed(c, s.svc.Wiki.Tags) }

func (s *Server) wikiSearch(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 20)
	if err != nil {
		return err
	}
	hits, err := s.svc.Wiki.Search(c.UserContext(), actor(c), bullpen.WikiSearchOptions{Query: c.Query("q"), Tag: c.Query("tag"),
		Prefix: boolQuery(c, "prefix"), Limit: int(limit)})
	return replyList(c, hits, err)
}

// previewRequest is markdown to render.
type previewRequest struct {
	Body string `json:"body"`
}

func (s *Server) wikiPreview(c *fiber.Ctx) error {
	return withBody(c, http.StatusOK, func(ctx context.Context, me bullpen.Member, in previewRequest) (previewView, error) {
		html, err := s.svc.Wiki.Preview(ctx, me, in.Body)
		return previewView{HTML: html}, err
	})
}

// previewView is the answer of a preview.
type previewView struct {
	HTML string `json:"html"`
}

func (s *Server) wikiExport(c *fiber.Ctx) error {
	format := c.Query("format", bullpen.WikiFormatTar)
	var buf bytes.Buffer
	if err := s.svc.Wiki.Export(c.UserContext(), actor(c), &buf, format); err != nil {
		return err
	}
	ctype := "application/x-tar"
	if format == bullpen.WikiFormatZip {
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
	return reply(c, http.StatusOK, res, err)
}

// wikiLink opens the dashboard with the wiki panel on a page.
func (s *Server) wikiLink(c *fiber.Ctx) error {
	slug, err := slugParam(c)
	if err != nil {
		return err
	}
	return c.Redirect("/c/"+bullpen.GeneralChannel+"#wiki/"+url.PathEscape(slug), http.StatusSeeOther)
}
