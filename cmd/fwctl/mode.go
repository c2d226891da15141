package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// modeCmd: fwctl mode enforce|monitor|detect|policy [--database NAME]
func modeCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl mode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	db := fs.String("database", "", "the database (default: all)")
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: fwctl mode enforce|monitor|detect|policy [--database NAME] [--control-socket PATH]\n\npolicy clears the live override: the policy's and rules' modes apply again.")
		return 2
	}
	mode := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	q := url.Values{"mode": {mode}}
	if *db != "" {
		q.Set("database", *db)
	}
	body, err := controlCall(*sock, http.MethodPost, "/v1/mode", q)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: mode: %v\n", err)
		return 2
	}
	stdout.Write(body)
	return 0
}

// reloadCmd: fwctl reload — rebuild the policies from their files.
func reloadCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl reload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	body, err := controlCall(*sock, http.MethodPost, "/v1/reload", nil)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: reload: %v\n", err)
		return 2
	}
	stdout.Write(body)
	return 0
}

// protectCmd: fwctl protect add|remove IP:PORT [--database NAME] — change
// what app-host interception redirects, for new connections.
func protectCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl protect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	db := fs.String("database", "", "the database an added address belongs to (default: the only one)")
	if len(args) < 2 || (args[0] != "add" && args[0] != "remove") {
		fmt.Fprintln(stderr, "usage: fwctl protect add|remove IP:PORT [--database NAME] [--control-socket PATH]")
		return 2
	}
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	q := url.Values{"action": {args[0]}, "addr": {args[1]}}
	if *db != "" {
		q.Set("database", *db)
	}
	body, err := controlCall(*sock, http.MethodPost, "/v1/protect", q)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: protect: %v\n", err)
		return 2
	}
	stdout.Write(body)
	return 0
}
