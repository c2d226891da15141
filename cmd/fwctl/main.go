// Command fwctl talks to sqlfwd and checks statements against a policy.
//
//	fwctl [--control-socket PATH] [--json] COMMAND ...
//	fwctl stats [--control-socket PATH] [--json] [--watch [--watch-count N]]
//	fwctl status [--json]
//	fwctl connections [--json]
//	fwctl check --protocol postgres [--policy FILE] [--user U] [--database D] "SQL"
//
// check exits 0 when the statement is allowed, 1 when it is denied and 2 on
// an error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sqlfw/sqlfw/protocol/builtin"
)

var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fwctl [--control-socket PATH] [--json] COMMAND [flags]

commands:
  stats     counters of a running sqlfwd, and where the time went (--json, --watch)
  status    version, uptime, modes, interception and policy checksums
  connections  the open sessions: client, process, user, verdicts
  check     judge statements with a policy, without a daemon
  catalog   dump a database's catalog (views, functions, triggers) for check --catalog
  policy    validate a policy file, or print the default policy
  config    validate a sqlfwd configuration file and its policies
  learn     learn a policy per application, review and promote it (docs/learn.md)
  mode      switch a running sqlfwd's mode live
  reload    make a running sqlfwd reload its configuration and policies (exit 2 if refused)
  protect   add or remove an intercepted address of a running sqlfwd
  audit     verify the hash chain of an audit trail
  bench     open-loop benchmark: what sqlfwd adds over the direct path
  completion  a shell completion script (bash, zsh, fish)
  version   print the version

global flags (before or after the command):
  --control-socket PATH  sqlfwd's control socket
  --json                 print JSON: stats, status, connections, check, policy validate,
                         config validate, learn status and learn diff

environment:
  SQLFW_CONTROL_SOCKET   the control socket when --control-socket is not given

The control socket is, in this order: --control-socket, $SQLFW_CONTROL_SOCKET,
control_socket in /etc/sqlfw/sqlfwd.yaml, /run/sqlfw/control.sock.
Run "fwctl COMMAND --help" for a command's flags; man fwctl for all of them.
`)
}

// commandUsage is what `fwctl COMMAND --help` prints (exit 0), before the
// command parses anything: `fwctl mode --help` must not switch a mode.
var commandUsage = map[string]string{
	"stats":       "usage: fwctl stats [--control-socket PATH] [--json] [--watch]",
	"status":      "usage: fwctl status [--control-socket PATH] [--json]",
	"connections": "usage: fwctl connections [--control-socket PATH] [--json]",
	"check":       checkUsage,
	"catalog":     catalogUsage,
	"policy":      policyUsage,
	"config":      configUsage,
	"learn":       learnUsage,
	"mode":        "usage: fwctl mode enforce|monitor|detect|policy [--database NAME] [--control-socket PATH]\n\npolicy clears the live override: the policy's and rules' modes apply again.",
	"reload":      "usage: fwctl reload [--control-socket PATH]",
	"protect":     "usage: fwctl protect add|remove IP:PORT [--database NAME] [--control-socket PATH]",
	"audit":       "usage: fwctl audit verify [--anchors LOG|-] [--key-file FILE] AUDIT-FILE",
	"bench":       benchUsage,
	"completion":  completionUsage,
}

// wantsHelp reports a -h or --help among a command's arguments.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

func run(args []string, stdout, stderr io.Writer) int {
	builtin.Register() // the protocol table (protocol/builtin)
	args, g, err := extractGlobals(args)
	if err != nil {
		fmt.Fprintln(stderr, "fwctl:", err)
		return 2
	}
	cur = g
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if g.jsonGiven && !jsonCommands[args[0]] && commandUsage[args[0]] != "" {
		fmt.Fprintf(stderr, "fwctl: %s has no --json output\n", args[0])
		return 2
	}
	if u, ok := commandUsage[args[0]]; ok && wantsHelp(args[1:]) {
		fmt.Fprintln(stdout, strings.TrimRight(u, "\n"))
		return 0
	}
	switch args[0] {
	case "stats":
		return stats(args[1:], stdout, stderr)
	case "status":
		return statusCmd(args[1:], stdout, stderr)
	case "connections":
		return connectionsCmd(args[1:], stdout, stderr)
	case "check":
		return check(args[1:], stdout, stderr)
	case "catalog":
		return catalogCmd(args[1:], stdout, stderr)
	case "policy":
		return policyCmd(args[1:], stdout, stderr)
	case "config":
		return configCmd(args[1:], stdout, stderr)
	case "learn":
		return learn(args[1:], stdout, stderr)
	case "mode":
		return modeCmd(args[1:], stdout, stderr)
	case "reload":
		return reloadCmd(args[1:], stdout, stderr)
	case "protect":
		return protectCmd(args[1:], stdout, stderr)
	case "audit":
		return auditCmd(args[1:], stdout, stderr)
	case "bench":
		return benchCmd(args[1:], stdout, stderr)
	case "completion":
		return completionCmd(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "fwctl", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "fwctl: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// parseInterspersed parses flags before and after positional arguments
// (fwctl audit verify FILE --anchors LOG), returning the positionals.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}
