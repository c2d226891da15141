package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	protocol := fs.String("protocol", "postgres", "postgres")
	policyPath := fs.String("policy", "", "policy `file` (default: the embedded default policy)")
	user := fs.String("user", "", "database user of the session")
	database := fs.String("database", "", "database of the session")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *protocol != "postgres" {
		fmt.Fprintf(stderr, "fwctl: protocol %q is not supported yet (postgres)\n", *protocol)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, `usage: fwctl check [--protocol postgres] [--policy FILE] [--user U] [--database D] "SQL"`)
		return 2
	}
	pol := engine.DefaultPolicy()
	if *policyPath != "" {
		text, err := os.ReadFile(*policyPath)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		pol, err = engine.ParsePolicy(text)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %s: %v\n", *policyPath, err)
			return 2
		}
	}
	eng, err := engine.New(pol, engine.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	sess := engine.Session{User: *user, Database: *database}
	t0 := time.Now()
	v := eng.JudgePostgres([]byte(fs.Arg(0)), &sess)
	el := time.Since(t0)
	rule := v.RuleID
	if rule == "" {
		rule = "-"
	}
	fmt.Fprintf(stdout, "verdict:    %s\nrule:       %s\n", v.Action, rule)
	if v.Reason != "" {
		fmt.Fprintf(stdout, "reason:     %s\n", v.Reason)
	}
	fmt.Fprintf(stdout, "statements: %d\nevaluation: %s\n", v.Statements, el)
	if v.Action == engine.ActionDeny {
		return 1
	}
	return 0
}
