package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/bullpen-hq/bullpen/client"
)

const wikiHelp = `
commands:
  get      print a page's text
  put      save a page from a file or stdin (conflict-safe)
  search   full-text search`

func (e *env) wiki(args []string) error {
	return e.sub("wiki", args, e.wikiSubs(), wikiHelp)
}

// wikiSubs are the subcommands of bullpen wiki.
func (e *env) wikiSubs() map[string]func([]string) error {
	return map[string]func([]string) error{
		"get": e.wikiGet, "put": e.wikiPut, "search": e.wikiSearch,
	}
}

func (e *env) wikiGet(args []string) error {
	fs := e.flags("wiki get", "wiki get [flags] PAGE", `
Prints the current text of PAGE (a slug or a title).`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, 1); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	pg, err := e.c.WikiPage(e.ctx, pos[0])
	if err != nil {
		return err
	}
	return e.out(pg, pg.Body)
}

func (e *env) wikiPut(args []string) error {
	fs := e.flags("wiki put", "wiki put [flags] PAGE [FILE]", `
Saves FILE (default: stdin) as the new text of PAGE, creating it when it
does not exist. The save names the revision it edits: --base N, or the
page's current revision when left out. When someone else saved since,
nothing is saved and the exit code is 5 (conflict).`)
	title := fs.String("title", "", "title (default: the page's, or PAGE for a new page)")
	summary := fs.String("m", "", "edit summary")
	base := fs.Int("base", -1, "the revision this edit starts from (0: a new page; default: current)")
	tags := fs.String("tags", "", "comma-separated tags (default: keep the page's)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, 2); err != nil {
		return err
	}
	var body []byte
	if len(pos) == 2 && pos[1] != "-" {
		body, err = os.ReadFile(pos[1])
	} else {
		body, err = readAll(e.io.Stdin, 4<<20)
	}
	if err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	slug, t := pos[0], *title
	if *base < 0 || t == "" {
		cur, err := e.c.WikiPage(e.ctx, slug)
		switch {
		case err == nil:
			slug = cur.Slug
			if *base < 0 {
				*base = cur.Revision
			}
			if t == "" {
				t = cur.Title
			}
		case client.StatusOf(err) == 404:
			*base = max(*base, 0)
			if t == "" {
				t = slug
			}
		default:
			return err
		}
	}
	var tl []string
	if *tags != "" {
		tl = strings.Split(*tags, ",")
	}
	pg, err := e.c.SaveWikiPage(e.ctx, slug, t, string(body), tl, *summary, *base)
	if err != nil {
		return err
	}
	return e.out(pg, fmt.Sprintf("saved %s, revision %d", pg.Slug, pg.Revision))
}

func (e *env) wikiSearch(args []string) error {
	fs := e.flags("wiki search", "wiki search [flags] QUERY", `
Full-text search of the wiki; prints slug, title and a snippet per hit.`)
	limit := fs.Int("limit", 20, "at most this many hits")
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
	hits, err := e.c.SearchWiki(e.ctx, strings.Join(pos, " "), *limit)
	if err != nil || e.json {
		if err == nil {
			return e.out(hits, "")
		}
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Slug, h.Title, strings.Join(strings.Fields(h.Snippet), " "))
	}
	return tw.Flush()
}
