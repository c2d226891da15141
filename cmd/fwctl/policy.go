package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

const policyUsage = `usage: fwctl policy validate [--json] FILE    check a policy: errors (exit 2), warnings (exit 0)
       fwctl policy default                 print the embedded default policy

--json prints {"file", "valid", "error", "warnings"} instead.`

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
		if cur.json {
			return writeValidJSON(stdout, args[1], err, p)
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
		if cur.json {
			fmt.Fprintln(stderr, "fwctl: policy default prints YAML; --json is for policy validate")
			return 2
		}
		stdout.Write(pgsql.DefaultPolicyYAML())
		return 0
	}
	fmt.Fprintln(stderr, policyUsage)
	return 2
}

// validJSON is what fwctl policy validate --json and fwctl config validate
// --json print.
type validJSON struct {
	File      string   `json:"file"`
	Valid     bool     `json:"valid"`
	Error     string   `json:"error,omitempty"`
	Warnings  []string `json:"warnings"`
	Databases *int     `json:"databases,omitempty"`
}

// writeValidJSON prints the result of validating file; exit 2 when err.
func writeValidJSON(w io.Writer, file string, err error, p *engine.Policy) int {
	out := validJSON{File: file, Valid: err == nil, Warnings: []string{}}
	if err != nil {
		out.Error = err.Error()
	} else if p != nil {
		out.Warnings = append(out.Warnings, p.Warnings()...)
	}
	b, _ := json.Marshal(out)
	fmt.Fprintf(w, "%s\n", b)
	if err != nil {
		return 2
	}
	return 0
}
