package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/sqlfw/sqlfw/daemon"
	"github.com/sqlfw/sqlfw/engine"
)

const learnUsage = `usage: fwctl learn start|stop|export [--control-socket PATH] [--database NAME]
       fwctl learn offline [--user U] [--database D] (--file queries.sql | --jsonl queries.jsonl)

start, stop and export ask a running sqlfwd (POST /v1/learn/start, POST
/v1/learn/stop, GET /v1/learn/export on its control socket); export prints the
learned statements as a policy fragment. offline learns from a file of
statements (same formats as fwctl check) and prints the fragment.`

// learn implements `fwctl learn`.
func learn(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("fwctl learn "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", daemon.DefaultControlSocket, "sqlfwd's control socket `path`")
	user := fs.String("user", "", "database user (offline)")
	database := fs.String("database", "", "database: the protected database's name (start/stop/export) or the session's (offline)")
	file := fs.String("file", "", "statements, one per line or ;-terminated (offline)")
	jsonl := fs.String("jsonl", "", "JSON lines {sql, user, database} (offline)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	switch sub {
	case "offline":
		return learnOffline(*user, *database, *file, *jsonl, stdout, stderr)
	case "start", "stop", "export":
	default:
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", *sock)
		}},
	}
	url := "http://sqlfwd/v1/learn/" + sub
	if *database != "" {
		url += "?database=" + *database
	}
	var resp *http.Response
	var err error
	if sub == "export" {
		resp, err = client.Get(url)
	} else {
		resp, err = client.Post(url, "text/plain", nil)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: cannot reach sqlfwd at %s: %v\n", *sock, err)
		return 2
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "fwctl: learn %s: %s %s\n", sub, resp.Status, body)
		return 2
	}
	stdout.Write(body)
	return 0
}

func learnOffline(user, database, file, jsonl string, stdout, stderr io.Writer) int {
	if (file == "") == (jsonl == "") {
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	var items []checkItem
	if file != "" {
		text, err := readInput(file)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		for _, s := range splitStatements(string(text)) {
			items = append(items, checkItem{SQL: s})
		}
	} else {
		text, err := readInput(jsonl)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		if items, err = parseJSONL(text); err != nil {
			fmt.Fprintf(stderr, "fwctl: %s: %v\n", jsonl, err)
			return 2
		}
	}
	l := engine.NewLearner(0)
	for _, it := range items {
		s := engine.Session{User: user, Database: database}
		if it.User != "" {
			s.User = it.User
		}
		if it.Database != "" {
			s.Database = it.Database
		}
		l.Record(it.SQL, &s)
	}
	stdout.Write(l.Export())
	n, _ := l.Len()
	fmt.Fprintf(stderr, "fwctl: %d statements, %d fingerprints\n", len(items), n)
	return 0
}
