package main

// fwctl completion bash|zsh|fish: a shell completion script, made from the
// commands' own usage texts (commandUsage) so that it names exactly the
// commands, verbs and flags that --help shows.

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
)

const completionUsage = `usage: fwctl completion bash|zsh|fish

prints a completion script for the shell:
  bash:  source <(fwctl completion bash)      or save it in /etc/bash_completion.d/fwctl
  zsh:   source <(fwctl completion zsh)       (uses zsh's bashcompinit)
  fish:  fwctl completion fish | source       or save it in ~/.config/fish/completions/fwctl.fish`

var (
	flagRE = regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	// "fwctl learn start|stop|export": the verbs after the command
	verbRE = regexp.MustCompile(`fwctl ([a-z]+) ([a-z]+(?:\|[a-z]+)*)\b`)
	// bench's "commands:" list: "  run       run a profile ..."
	listRE = regexp.MustCompile(`(?m)^  ([a-z]+) {2,}`)
)

// commandWords is what completes after "fwctl CMD": its verbs and flags.
type commandWords struct {
	verbs, flags []string
}

// completionWords derives every command's verbs and flags from its usage.
func completionWords() map[string]commandWords {
	out := map[string]commandWords{}
	for cmd, u := range commandUsage {
		var w commandWords
		for _, m := range verbRE.FindAllStringSubmatch(u, -1) {
			if m[1] != cmd {
				continue
			}
			w.verbs = append(w.verbs, strings.Split(m[2], "|")...)
		}
		if strings.Contains(u, "\ncommands:\n") {
			for _, m := range listRE.FindAllStringSubmatch(u[strings.Index(u, "\ncommands:\n"):], -1) {
				w.verbs = append(w.verbs, m[1])
			}
		}
		w.flags = append(flagRE.FindAllString(u, -1), "--help")
		w.verbs, w.flags = uniq(w.verbs), uniq(w.flags)
		out[cmd] = w
	}
	return out
}

func uniq(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

func completionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, completionUsage)
		return 2
	}
	words := completionWords()
	cmds := make([]string, 0, len(words)+2)
	for c := range words {
		cmds = append(cmds, c)
	}
	cmds = uniq(append(cmds, "version", "help"))
	switch args[0] {
	case "bash", "zsh":
		if args[0] == "zsh" {
			fmt.Fprintln(stdout, "autoload -U +X bashcompinit && bashcompinit")
		}
		writeBashCompletion(stdout, cmds, words)
	case "fish":
		writeFishCompletion(stdout, cmds, words)
	default:
		fmt.Fprintln(stderr, completionUsage)
		return 2
	}
	return 0
}

func writeBashCompletion(w io.Writer, cmds []string, words map[string]commandWords) {
	fmt.Fprintf(w, `# fwctl completion for bash (fwctl completion bash)
_fwctl() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words="" cmd="" at=0 i
	# the command is the first word that is neither a global flag nor the
	# value of --control-socket (global flags may stand before it)
	for ((i = 1; i < COMP_CWORD; i++)); do
		case "${COMP_WORDS[i]}" in
		--control-socket) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]} at=$i; break ;;
		esac
	done
	case "$prev" in
	--policy|--file|--jsonl|--pg-log|--mysql-log|--anchors|--key-file|--targets|--out|--baseline|--config|--control-socket)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--protocol)
		COMPREPLY=($(compgen -W %q -- "$cur"))
		return ;;
	esac
	if [ -z "$cmd" ]; then
		if [[ "$cur" == -* ]]; then
			COMPREPLY=($(compgen -W "--control-socket --json --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W %q -- "$cur"))
		fi
		return
	fi
	case "$cmd" in
`, strings.Join(protocolNames(), " "), strings.Join(cmds, " "))
	for _, c := range cmds {
		cw, ok := words[c]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "\t%s)\n", c)
		if len(cw.verbs) > 0 {
			fmt.Fprintf(w, "\t\tif [ \"$COMP_CWORD\" -eq $((at + 1)) ] && [[ \"$cur\" != -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(cw.verbs, " "))
		}
		fmt.Fprintf(w, "\t\twords=%q ;;\n", strings.Join(cw.flags, " "))
	}
	fmt.Fprint(w, `	esac
	if [[ "$cur" == -* ]]; then
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _fwctl fwctl
`)
}

func writeFishCompletion(w io.Writer, cmds []string, words map[string]commandWords) {
	fmt.Fprintln(w, "# fwctl completion for fish (fwctl completion fish)")
	fmt.Fprintf(w, "complete -c fwctl -f -n __fish_use_subcommand -a %q\n", strings.Join(cmds, " "))
	for _, c := range cmds {
		cw, ok := words[c]
		if !ok {
			continue
		}
		if len(cw.verbs) > 0 {
			fmt.Fprintf(w, "complete -c fwctl -f -n '__fish_seen_subcommand_from %s' -a %q\n", c, strings.Join(cw.verbs, " "))
		}
		for _, f := range cw.flags {
			fmt.Fprintf(w, "complete -c fwctl -n '__fish_seen_subcommand_from %s' -l %s\n", c, strings.TrimPrefix(f, "--"))
		}
	}
}
