package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sqlfw/sqlfw/config"
)

const configUsage = `usage: fwctl config validate [--json] FILE    check a sqlfwd configuration and the policies it names: errors (exit 2)

--json prints {"file", "valid", "error", "databases"} instead.`

// configCmd implements `fwctl config validate`: what sqlfwd --check-config
// does, for gating a reload or a deployment.
func configCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, configUsage)
		return 0
	}
	if len(args) != 2 || args[0] != "validate" {
		fmt.Fprintln(stderr, configUsage)
		return 2
	}
	cfg, err := config.Load(args[1])
	if cur.json {
		if err == nil {
			err = cfg.Check()
		}
		out := validJSON{File: args[1], Valid: err == nil, Warnings: []string{}}
		if err != nil {
			out.Error = err.Error()
		} else {
			n := len(cfg.Databases)
			out.Databases = &n
		}
		b, _ := json.Marshal(out)
		fmt.Fprintf(stdout, "%s\n", b)
		if err != nil {
			return 2
		}
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err) // it names the file: FILE:LINE:COLUMN: message
		return 2
	}
	// Check normalizes the configuration and builds every policy's engine
	// and TLS, as the daemon's New does; it opens nothing.
	if err := cfg.Check(); err != nil {
		if fe := (*config.FileError)(nil); errors.As(err, &fe) {
			fmt.Fprintln(stderr, err) // FILE:LINE:COLUMN: each problem with a value
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", args[1], err)
		}
		return 2
	}
	fmt.Fprintf(stdout, "%s: valid (%d databases)\n", args[1], len(cfg.Databases))
	return 0
}
