package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/sqlfw/sqlfw/daemon"
)

const configUsage = `usage: fwctl config validate FILE    check a sqlfwd configuration and the policies it names: errors (exit 2)`

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
	cfg, err := daemon.LoadConfig(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", args[1], err)
		return 2
	}
	// New normalizes the configuration and builds every policy's engine;
	// it opens nothing.
	if _, err := daemon.New(cfg, slog.New(slog.DiscardHandler), version); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", args[1], err)
		return 2
	}
	fmt.Fprintf(stdout, "%s: valid (%d databases)\n", args[1], len(cfg.Databases))
	return 0
}
