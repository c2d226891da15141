package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

const policyUsage = `usage: fwctl policy validate FILE    check a policy: errors (exit 2), warnings (exit 0)
       fwctl policy default          print the embedded default policy`

// policyCmd implements `fwctl policy validate|default`.
func policyCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, policyUsage)
		return 2
	}
	switch args[0] {
	case "validate":
		if len(args) != 2 {
			fmt.Fprintln(stderr, policyUsage)
			return 2
		}
		text, err := os.ReadFile(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		p, err := engine.ParsePolicy(text)
		if err == nil {
			err = p.Check(pgsql.Dialect)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", args[1], err)
			return 2
		}
		for _, w := range p.Warnings() {
			fmt.Fprintf(stdout, "%s: warning: %s\n", args[1], w)
		}
		fmt.Fprintf(stdout, "%s: valid (%d warnings)\n", args[1], len(p.Warnings()))
		return 0
	case "default":
		stdout.Write(pgsql.DefaultPolicyYAML())
		return 0
	}
	fmt.Fprintln(stderr, policyUsage)
	return 2
}
