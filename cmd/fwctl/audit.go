package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sqlfw/sqlfw/daemon"
)

// auditCmd: fwctl audit verify FILE — check the hash chain of an audit
// trail. Exit 0 intact, 1 broken, 2 error.
func auditCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: fwctl audit verify FILE")
		return 2
	}
	f, err := os.Open(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	defer f.Close()
	n, head, err := daemon.VerifyAudit(f)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: audit %s: %v (after %d intact records)\n", args[1], err, n)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d records, chain intact; head sha256 %s\n", args[1], n, head)
	return 0
}
