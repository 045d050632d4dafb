package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bullpen-hq/bullpen"
)

const memoryHelp = `
commands:
  list     list an agent's memory (newest first; best first with -q)
  add      teach an agent an entry
  pin      pin an entry (always recalled); --off unpins
  edit     change an entry's text or kind
  forget   forget an entry for real (the history keeps who and when)
  history  consolidations, merges, expiries and forgets, newest first
  export   print an agent's memory as JSON Lines
  import   add entries from JSON Lines (a file or stdin)`

func (e *env) memory(args []string) error {
	return e.sub("memory", args, e.memorySubs(), memoryHelp)
}

// memorySubs are the subcommands of bullpen memory.
func (e *env) memorySubs() map[string]func([]string) error {
	return map[string]func([]string) error{
		"list": e.memoryList, "add": e.memoryAdd, "pin": e.memoryPin, "edit": e.memoryEdit,
		"forget": e.memoryForget, "history": e.memoryHistory, "export": e.memoryExport, "import": e.memoryImport,
	}
}

// memoryAgent resolves @HANDLE (or an agent ID) to the agent's ID.
func (e *env) memoryAgent(name string) (int64, error) {
	a, err := e.c.AgentNamed(e.ctx, name)
	if err != nil {
		return 0, err
	}
	return a.ID, nil
}

// entryID parses an entry's ID, with or without its "#".
func entryID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, bullpen.Errorf(bullpen.EINVALID, "%q is not an entry ID", s)
	}
	return id, nil
}

func (e *env) memoryList(args []string) error {
	fs := e.flags("memory list", "memory list [flags] AGENT", `
Lists AGENT's memory entries: ID, kind, pinned, recall count, source and text.`)
	var o bullpen.MemoryListOptions
	fs.StringVar(&o.Query, "q", "", "full-text search (entries with any of its words, best first)")
	fs.StringVar(&o.Kind, "kind", "", "only this kind: fact, lesson, preference or procedure")
	fs.BoolVar(&o.Pinned, "pinned", false, "only pinned entries")
	fs.IntVar(&o.Limit, "limit", 100, "at most this many entries")
	pos, err := e.connected(fs, args, 1, 1)
	if err != nil {
		return err
	}
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	es, err := e.c.Memory(e.ctx, agent, o)
	if err != nil || e.json {
		if err == nil {
			return e.out(es, "")
		}
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	for _, m := range es {
		pin := ""
		if m.Pinned {
			pin = "pinned"
		}
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%d recalls\t%s\t%s\n", m.ID, m.Kind, pin, m.RecallCount, source(m), strings.Join(strings.Fields(m.Text), " "))
	}
	return tw.Flush()
}

func source(m bullpen.MemoryEntry) string {
	if m.SourceID == 0 {
		return "by @" + m.AuthorHandle
	}
	return fmt.Sprintf("%s %d", m.SourceKind, m.SourceID)
}

func (e *env) memoryAdd(args []string) error {
	fs := e.flags("memory add", "memory add [flags] AGENT TEXT...", `
Teaches AGENT an entry. A near-duplicate of an entry it has is merged
into that one.`)
	var in bullpen.MemoryInput
	fs.StringVar(&in.Kind, "kind", bullpen.MemoryFact, "fact, lesson, preference or procedure")
	fs.BoolVar(&in.Pinned, "pin", false, "pin it (recalled in every turn)")
	fs.StringVar(&in.WikiPage, "wiki", "", "a wiki page's slug the entry links")
	pos, err := e.connected(fs, args, 2, -1)
	if err != nil {
		return err
	}
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	in.Text = strings.Join(pos[1:], " ")
	w, err := e.c.WriteMemory(e.ctx, agent, in)
	if err != nil {
		return err
	}
	verb := "added"
	if w.Merged {
		verb = "merged into"
	}
	return e.out(w, fmt.Sprintf("%s #%d", verb, w.ID))
}

func (e *env) memoryPin(args []string) error {
	fs := e.flags("memory pin", "memory pin [flags] AGENT ID", `
Pins entry ID of AGENT, so that every turn recalls it.`)
	off := fs.Bool("off", false, "unpin instead")
	pos, err := e.connected(fs, args, 2, 2)
	if err != nil {
		return err
	}
	on := !*off
	return e.memoryUpdate(pos, bullpen.MemoryUpdate{Pinned: &on})
}

func (e *env) memoryEdit(args []string) error {
	fs := e.flags("memory edit", "memory edit [flags] AGENT ID [TEXT...]", `
Changes entry ID's text (TEXT, when given) and kind (--kind).`)
	kind := fs.String("kind", "", "the new kind")
	pos, err := e.connected(fs, args, 2, -1)
	if err != nil {
		return err
	}
	var u bullpen.MemoryUpdate
	if len(pos) > 2 {
		t := strings.Join(pos[2:], " ")
		u.Text = &t
	}
	if *kind != "" {
		u.Kind = kind
	}
	if u.Text == nil && u.Kind == nil {
		return bullpen.Errorf(bullpen.EINVALID, "nothing to change: give TEXT or --kind")
	}
	return e.memoryUpdate(pos, u)
}

func (e *env) memoryUpdate(pos []string, u bullpen.MemoryUpdate) error {
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	id, err := entryID(pos[1])
	if err != nil {
		return err
	}
	m, err := e.c.UpdateMemory(e.ctx, agent, id, u)
	if err != nil {
		return err
	}
	return e.out(m, fmt.Sprintf("#%d (%s, pinned %v): %s", m.ID, m.Kind, m.Pinned, m.Text))
}

func (e *env) memoryForget(args []string) error {
	fs := e.flags("memory forget", "memory forget [flags] AGENT ID", `
Forgets entry ID of AGENT: it is deleted for real; the history keeps only
who forgot it and when.`)
	pos, err := e.connected(fs, args, 2, 2)
	if err != nil {
		return err
	}
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	id, err := entryID(pos[1])
	if err != nil {
		return err
	}
	if err := e.c.ForgetMemory(e.ctx, agent, id); err != nil {
		return err
	}
	return e.out(map[string]int64{"forgotten": id}, fmt.Sprintf("forgot #%d", id))
}

func (e *env) memoryHistory(args []string) error {
	fs := e.flags("memory history", "memory history [flags] AGENT", `
Lists AGENT's forgets (who, when), consolidations, merges and expiries
(text before and after), one line each.`)
	pos, err := e.connected(fs, args, 1, 1)
	if err != nil {
		return err
	}
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	hs, err := e.c.MemoryHistory(e.ctx, agent)
	if err != nil || e.json {
		if err == nil {
			return e.out(hs, "")
		}
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	for _, h := range hs {
		fmt.Fprintln(tw, historyLine(h))
	}
	return tw.Flush()
}

// historyLine is one history row as a tab-separated line: a
// consolidation's several new entries (one a line in After) are joined
// with " | ", so that a row stays one line of the table.
func historyLine(h bullpen.MemoryHistory) string {
	flat := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ") }
	return fmt.Sprintf("%s\t#%d\t%s\t@%s\t%s\t%s", h.CreatedAt.Format("2006-01-02 15:04"), h.EntryID, h.Action, h.Actor, flat(h.Before), flat(h.After))
}

func (e *env) memoryExport(args []string) error {
	fs := e.flags("memory export", "memory export [flags] AGENT", `
Prints AGENT's memory as JSON Lines, one entry a line, oldest first.`)
	pos, err := e.connected(fs, args, 1, 1)
	if err != nil {
		return err
	}
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	return e.c.ExportMemory(e.ctx, agent, e.io.Stdout)
}

func (e *env) memoryImport(args []string) error {
	fs := e.flags("memory import", "memory import [flags] AGENT [FILE]", `
Adds the entries of FILE (default: stdin), JSON Lines as memory export
prints them. Every line is checked first: one bad line imports nothing.`)
	pos, err := e.connected(fs, args, 1, 2)
	if err != nil {
		return err
	}
	var data []byte
	if len(pos) == 2 && pos[1] != "-" {
		data, err = os.ReadFile(pos[1])
	} else {
		data, err = readAll(e.io.Stdin, 16<<20)
	}
	if err != nil {
		return err
	}
	agent, err := e.memoryAgent(pos[0])
	if err != nil {
		return err
	}
	res, err := e.c.ImportMemory(e.ctx, agent, data)
	if err != nil {
		return err
	}
	return e.out(res, fmt.Sprintf("imported %d, merged %d", res.Imported, res.Merged))
}
