// Command fwctl talks to sqlfwd and checks statements against a policy.
//
//	fwctl stats [--control-socket PATH] [--json] [--watch [--watch-count N]]
//	fwctl status [--json]
//	fwctl connections [--json]
//	fwctl check --protocol postgres [--policy FILE] [--user U] [--database D] "SQL"
//
// check exits 0 when the statement is allowed, 1 when it is denied and 2 on
// an error.
package main

import (
	"fmt"
	"io"
	"os"
)

var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fwctl COMMAND [flags]

commands:
  stats     counters of a running sqlfwd, and where the time went (--json, --watch)
  status    version, uptime, modes, interception and policy checksums
  connections  the open sessions: client, process, user, verdicts
  check     judge statements with a policy, without a daemon
  policy    validate a policy file, or print the default policy
  config    validate a sqlfwd configuration file and its policies
  learn     record a running sqlfwd's statements as an allowlist
  mode      switch a running sqlfwd's mode live
  reload    make a running sqlfwd reload its policies
  protect   add or remove an intercepted address of a running sqlfwd
  audit     verify the hash chain of an audit trail
  bench     open-loop benchmark: what sqlfwd adds over the direct path
  version   print the version
`)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
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
