package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bullpen-hq/bullpen/client"
)

func (e *env) login(args []string) error {
	fs := e.flags("login", "login [--server URL] [--token TOKEN]", `
Checks a token against the server and saves both in the config file, so
later commands need neither flag. Without --token, the token is read
from stdin (paste it and press Enter). The file is written with mode
0600.`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 0); err != nil {
		return err
	}
	old, path, err := e.readConfig(true) // login makes the file
	if err != nil {
		return err
	}
	if path == "" {
		return usagef("no config dir: pass --config FILE")
	}
	server := firstOf(e.server, e.io.Getenv("BULLPEN_URL"), old.Server, DefaultServer)
	e.url = server
	token := firstOf(e.token, e.io.Getenv("BULLPEN_TOKEN"))
	if token == "" {
		fmt.Fprintf(e.io.Stderr, "token for %s: ", server)
		line, err := bufio.NewReader(e.io.Stdin).ReadString('\n')
		if token = strings.TrimSpace(line); token == "" {
			if err != nil {
				return usagef("no token: pass --token or paste one on stdin")
			}
			return usagef("no token given")
		}
	}
	c, err := client.New(server, token)
	if err != nil {
		return usagef("%v", err)
	}
	me, err := c.Me(e.ctx)
	if err != nil {
		return err
	}
	if err := writeConfig(path, config{Server: server, Token: token}); err != nil {
		return err
	}
	return e.out(map[string]any{"server": server, "member": me, "config": path},
		fmt.Sprintf("logged in to %s as %s; saved in %s", server, handleOf(me), path))
}

// writeConfig replaces the config file atomically, readable by its owner
// only (it holds a token).
func writeConfig(path string, cfg config) error {
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cli-*.json")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("config: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
