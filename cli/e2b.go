package cli

import (
	"fmt"
	"strings"
)

const e2bHelp = `
commands:
  env      print the export lines that point the E2B SDKs at this server`

func (e *env) e2b(args []string) error {
	return e.sub("e2b", args, e.e2bSubs(), e2bHelp)
}

// e2bSubs are the subcommands of bullpen e2b.
func (e *env) e2bSubs() map[string]func([]string) error {
	return map[string]func([]string) error{"env": e.e2bEnv}
}

// e2bEnv prints E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY for the
// server. The key in $E2B_API_KEY is kept when this server accepts it;
// otherwise a new one is minted for the token's member.
func (e *env) e2bEnv(args []string) error {
	fs := e.flags("e2b env", "e2b env [--new]", `
Prints the export lines that point the official E2B SDKs at this server:

    eval "$(bullpen e2b env)"

E2B_API_KEY is the key already in the environment when this server
accepts it; otherwise (or with --new) a new E2B key is minted for the
token's member: one of its tokens, revoked like the others.`)
	fresh := fs.Bool("new", false, "mint a new key even if $E2B_API_KEY works")
	if _, err := e.connected(fs, args, 0, 0); err != nil {
		return err
	}
	const apiPath, sandboxPath = "/e2b", "/e2b/sandbox"
	key, minted := e.io.Getenv("E2B_API_KEY"), false
	if *fresh || !strings.HasPrefix(key, "e2b_") || !e.c.E2BKeyWorks(e.ctx, apiPath, key) {
		k, err := e.c.MintE2BKey(e.ctx)
		if err != nil {
			return err
		}
		key, minted = k.Key, true
	}
	base := e.c.Server()
	vars := [][2]string{{"E2B_API_URL", base + apiPath}, {"E2B_SANDBOX_URL", base + sandboxPath}, {"E2B_API_KEY", key}}
	var b strings.Builder
	out := map[string]any{"minted": minted}
	for _, v := range vars {
		fmt.Fprintf(&b, "export %s=%s\n", v[0], shellQuote(v[1]))
		out[v[0]] = v[1]
	}
	return e.out(out, b.String())
}

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
