package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

func (e *env) post(args []string) error {
	fs := e.flags("post", "post [flags] CHANNEL TEXT", `
Posts TEXT in CHANNEL ("#general", "general" or its ID) as the token's
member. @mentions in TEXT wake the agents they name. Prints the message.
TEXT "-" reads the text from stdin.`)
	thread := fs.Int64("thread", 0, "reply in the thread of this message ID")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 2, 2); err != nil {
		return err
	}
	text := pos[1]
	if text == "-" {
		b, err := readAll(e.io.Stdin, 4*bullpen.MaxMessageBody+1)
		if err != nil {
			return err
		}
		text = strings.TrimRight(string(b), "\n")
	}
	if err := e.connect(); err != nil {
		return err
	}
	ch, err := e.c.ChannelNamed(e.ctx, pos[0])
	if err != nil {
		return err
	}
	m, err := e.c.Post(e.ctx, ch.ID, *thread, text)
	if err != nil {
		return err
	}
	return e.out(m, fmt.Sprintf("posted message %d in #%s", m.ID, ch.Name))
}

func (e *env) tail(args []string) error {
	fs := e.flags("tail", "tail [flags]", `
Prints the office's live events as they happen, one per line (JSON lines
with --json). It reconnects by itself when the connection drops or the
server restarts, and resumes after the last event it printed, so none is
missed or repeated. --state FILE keeps that position across runs of tail.`)
	since := fs.Int64("since", -1, "start after this event sequence number (0: from the first stored event; default: from now, or from --state)")
	state := fs.String("state", "", "file that keeps the last printed sequence number, to resume from")
	types := fs.String("type", "", "only these event types, comma-separated (e.g. message.posted,agent.turn_finished)")
	n := fs.Int("n", 0, "exit after this many events (0: run until interrupted)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 0); err != nil {
		return err
	}
	if *state != "" && *since < 0 {
		if raw, err := os.ReadFile(*state); err == nil {
			if *since, err = strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err != nil {
				return usagef("state file %s does not hold a sequence number", *state)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("state: %w", err)
		}
	}
	want := map[string]bool{}
	for _, t := range strings.Split(*types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			want[t] = true
		}
	}
	if err := e.connect(); err != nil {
		return err
	}
	feed, err := e.c.Subscribe(e.ctx, *since)
	if err != nil {
		return err
	}
	defer feed.Close()
	feed.OnReconnect = func(err error) { fmt.Fprintln(e.io.Stderr, "bullpen: tail: reconnecting:", message(err)) }
	for printed := 0; *n == 0 || printed < *n; {
		ev, err := feed.Next(e.ctx)
		if err != nil {
			if e.ctx.Err() != nil {
				return nil // interrupted: a clean end
			}
			return err
		}
		if len(want) == 0 || want[ev.Type] {
			if err := e.printEvent(ev); err != nil {
				return err
			}
			printed++
		}
		if *state != "" {
			if err := os.WriteFile(*state, []byte(strconv.FormatInt(ev.Seq, 10)+"\n"), 0o600); err != nil {
				return fmt.Errorf("state: %w", err)
			}
		}
	}
	return nil
}

func (e *env) printEvent(ev bullpen.Event) error {
	if e.json {
		raw, err := ev.JSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.io.Stdout, "%s\n", raw)
		return err
	}
	ch := ""
	if ev.ChannelID != 0 {
		ch = fmt.Sprintf(" channel=%d", ev.ChannelID)
	}
	_, err := fmt.Fprintf(e.io.Stdout, "%d %s %s%s %s\n", ev.Seq, ev.At.UTC().Format("15:04:05"), ev.Type, ch, ev.Payload)
	return err
}
