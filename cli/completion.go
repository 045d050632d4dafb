package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

func (e *env) completion(args []string) error {
	fs := e.flags("completion", "completion bash|zsh", `
Prints a completion script for bash or zsh. Load it in the running
shell with:  source <(bullpen completion bash)
or keep it:  bullpen completion bash > /etc/bash_completion.d/bullpen
(zsh: bullpen completion zsh > "${fpath[1]}/_bullpen").`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, 1); err != nil {
		return err
	}
	var script string
	switch pos[0] {
	case "bash":
		script = bashCompletion()
	case "zsh":
		script = zshCompletion()
	default:
		return usagef("completion: want bash or zsh, got %q", pos[0])
	}
	_, err = fmt.Fprint(e.io.Stdout, script)
	return err
}

// subCases are the shell case arms that complete a group's subcommands.
func subCases(arm string) string {
	var b strings.Builder
	g := groups()
	for _, name := range slices.Sorted(maps.Keys(g)) {
		fmt.Fprintf(&b, arm, name, strings.Join(g[name], " "))
	}
	return b.String()
}

func bashCompletion() string {
	return `# bash completion for bullpen (bullpen completion bash)
_bullpen() {
	local cur=${COMP_WORDS[COMP_CWORD]} i cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--server | --token | --config) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--server --token --config --json --help" -- "$cur"))
		return
	fi
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "` + strings.Join(allCommands(), " ") + `" -- "$cur"))
		return
	fi
	if ((i + 1 == COMP_CWORD)); then
		case $cmd in
` + subCases("\t\t%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n") + `		completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")) ;;
		esac
	fi
}
complete -o default -F _bullpen bullpen
`
}

func zshCompletion() string {
	return `#compdef bullpen
# zsh completion for bullpen (bullpen completion zsh)
_bullpen() {
	local -a cmds
	cmds=(` + strings.Join(allCommands(), " ") + `)
	local i cmd="" pos=0
	for ((i = 2; i < CURRENT; i++)); do
		case ${words[i]} in
		--server|--token|--config) ((i++)) ;;
		-*) ;;
		*) cmd=${words[i]}; pos=$i; break ;;
		esac
	done
	if [[ ${words[CURRENT]} == -* ]]; then
		compadd -- --server --token --config --json --help
	elif [[ -z $cmd ]]; then
		compadd -- $cmds
	elif ((CURRENT == pos + 1)); then
		case $cmd in
` + subCases("\t\t%s) compadd -- %s ;;\n") + `		completion) compadd -- bash zsh ;;
		*) _files ;;
		esac
	else
		_files
	fi
}
compdef _bullpen bullpen
`
}
