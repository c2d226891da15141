package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/pgsql"
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
	sock := fs.String("control-socket", control.DefaultSocket, "sqlfwd's control socket `path`")
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
	method, q := http.MethodPost, url.Values{}
	if sub == "export" {
		method = http.MethodGet
	}
	if *database != "" {
		q.Set("database", *database)
	}
	body, err := controlCall(*sock, method, "/v1/learn/"+sub, q)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: learn %s: %v\n", sub, err)
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
	l := engine.NewLearner(pgsql.Dialect, 0)
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
