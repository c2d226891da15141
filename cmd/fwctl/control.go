package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sqlfw/sqlfw/control"
)

// controlCall makes one request to sqlfwd's control socket and returns the
// body of a 200 answer; any other answer is an error carrying its body.
func controlCall(sock, method, path string, query url.Values) ([]byte, error) {
	c := control.Client{Socket: sock}
	return c.Call(method, path, query)
}

// fetchView runs the common part of a read-only view command (status,
// connections): it parses --control-socket and --json, fetches path, and
// either prints the raw JSON or decodes it into v. done is true when the
// command is finished (printed, or failed) with exit code code.
func fetchView(name, path string, args []string, stdout, stderr io.Writer, v any) (done bool, code int) {
	fs := flag.NewFlagSet("fwctl "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	asJSON := fs.Bool("json", cur.json, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return true, 2
	}
	body, err := controlCall(*sock, http.MethodGet, path, nil)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %s: %v\n", name, err)
		return true, 2
	}
	if *asJSON {
		stdout.Write(body)
		return true, 0
	}
	if err := json.Unmarshal(body, v); err != nil {
		fmt.Fprintf(stderr, "fwctl: %s: %v\n", name, err)
		return true, 2
	}
	return false, 0
}
