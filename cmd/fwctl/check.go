package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

const checkUsage = `usage: fwctl check [--policy FILE] [--protocol NAME | --config FILE] [--user U] [--database D] [--client-addr A]
                   [--standard-conforming-strings on|off] [--client-encoding NAME] [--sql-mode MODES] "SQL"
       fwctl check [flags] --file queries.sql
       fwctl check [flags] --jsonl queries.jsonl     ("-" reads standard input)
       fwctl check [flags] --pg-log postgresql.log [--verbose]
       fwctl check [flags] --mysql-log general.log [--verbose]
       fwctl check [flags] --json ...                 (one JSON object per verdict, a line each)
       fwctl check [flags] --catalog snap.json [--explain] ...

--file takes one statement per line, or, when some line ends with ";",
statements ending with ";" at the end of a line (so they may span lines).
Lines starting with "--" outside a statement are skipped. --jsonl takes one
{"sql": ..., "user": ..., "database": ...} object per line; user and database
default to the flags. --pg-log takes a PostgreSQL server log (stderr format
with any log_line_prefix, or jsonlog) and judges the statements it logged
(log_statement = all, or log_min_duration_statement), with the user and
database the log names (user= and db= fields in log_line_prefix, or jsonlog),
and prints a summary by rule; --verbose adds one line per statement.
--mysql-log does the same for a MySQL or MariaDB general log (general_log),
with the user and database of each connection (its Connect line, Init DB);
it implies --protocol mysql, as --pg-log implies postgres.
--protocol (postgres, mysql) judges with that protocol's dialect and its
default policy; without it, the log's protocol, else (--config) that of the
configuration's databases whose policy --policy is, else the one protocol
that accepts --policy, else postgres.
--standard-conforming-strings and --client-encoding (postgres) judge
the text as a session with those settings sends it (the bytes as given, in
that encoding), as sqlfwd does with what the server reports; --sql-mode
(MySQL's sql_mode, e.g. ANSI_QUOTES,NO_BACKSLASH_ESCAPES) and --client-encoding
(a MySQL character set, e.g. gbk) give a mysql session's lexing state.
--catalog judges with a database's catalog (views, functions, triggers, rules:
a snapshot from fwctl catalog dump) as sqlfwd with a catalog connection does;
--explain then prints, under each verdict, the chain of objects each statement
reached (statement → view → table, → call → DELETE, → trigger ...);
--search-path gives the session's search_path (postgres; default: unknown,
every schema's object of a name). Exit status: 0 all allowed, 1 any denied,
2 error.`

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, checkUsage); fs.PrintDefaults() }
	protoName := fs.String("protocol", "", "protocol whose dialect judges the statements ("+protocol.Names()+")")
	policyPath := fs.String("policy", "", "policy `file` (default: the embedded default policy)")
	configPath := fs.String("config", "", "a sqlfwd configuration `file`: judge with the protocol of its databases whose policy --policy is")
	user := fs.String("user", "", "database user of the session")
	database := fs.String("database", "", "database of the session")
	clientAddr := fs.String("client-addr", "", "client `address` of the session")
	file := fs.String("file", "", "judge the statements of this `file`")
	jsonl := fs.String("jsonl", "", "judge the statements of this JSON-lines `file`")
	pgLog := fs.String("pg-log", "", "judge the statements of this PostgreSQL server log `file` and summarise by rule")
	myLog := fs.String("mysql-log", "", "judge the statements of this MySQL/MariaDB general log `file` and summarise by rule")
	verbose := fs.Bool("verbose", false, "with --pg-log or --mysql-log: also one line per statement")
	fs.String("standard-conforming-strings", "on", "postgres: the session's standard_conforming_strings (`on|off`)")
	fs.String("client-encoding", "UTF8", "the session's client_encoding `name` (mysql: character_set_client)")
	fs.String("sql-mode", "", "mysql: the session's sql_mode (`modes`, comma-separated)")
	asJSON := fs.Bool("json", cur.json, "print each verdict as a JSON object, one a line (no summary by rule)")
	catPath := fs.String("catalog", "", "judge with the catalog snapshot in this `file` (fwctl catalog dump)")
	explain := fs.Bool("explain", false, "with --catalog: print each statement's chain through the catalog's objects")
	searchPath := fs.String("search-path", "", "postgres, with --catalog: the session's search_path (`value`)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	proto, err := chooseProtocol(*protoName, set, *policyPath, *configPath)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	lex, err := sessionLex(proto, fs, set)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	inputs := 0
	for _, in := range []string{*file, *jsonl, *pgLog, *myLog} {
		if in != "" {
			inputs++
		}
	}
	bulk := inputs > 0
	if inputs > 1 || (bulk && fs.NArg() != 0) || (!bulk && fs.NArg() != 1) {
		fmt.Fprintln(stderr, checkUsage)
		return 2
	}
	pol, err := loadPolicy(*policyPath, proto.DefaultPolicy)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	eng, err := engine.New(pol, proto.Dialect, engine.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	if *catPath != "" {
		if err := loadSnapshot(eng, proto, *catPath, nil); err != nil {
			fmt.Fprintf(stderr, "fwctl: --catalog: %v\n", err)
			return 2
		}
	} else if *explain {
		fmt.Fprintln(stderr, "fwctl: --explain needs --catalog (a snapshot from fwctl catalog dump)")
		return 2
	}
	base := engine.Session{User: *user, Database: *database, Lex: lex, SearchPath: *searchPath}
	if *clientAddr != "" {
		a, err := netip.ParseAddr(*clientAddr)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: --client-addr: %v\n", err)
			return 2
		}
		base.ClientAddr = a
	}
	if !bulk {
		sess := base
		sess.At = time.Now()
		t0 := time.Now()
		v := eng.Judge([]byte(fs.Arg(0)), &sess)
		el := time.Since(t0)
		if *asJSON {
			writeVerdictJSON(stdout, 0, checkItem{SQL: fs.Arg(0), User: sess.User, Database: sess.Database}, v, el)
		} else {
			printVerdict(stdout, v, el)
			if *explain {
				printChains(stdout, eng.Chains([]byte(fs.Arg(0)), &sess))
			}
		}
		return exitFor(v)
	}
	items, err := readItems(*file, *jsonl, *pgLog, *myLog)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	rc, denied := 0, 0
	logInput := *pgLog != "" || *myLog != ""
	perStatement := !logInput || *verbose
	sums := map[string]*ruleSummary{}
	for i, it := range items {
		sess := base
		if it.User != "" {
			sess.User = it.User
		}
		if it.Database != "" {
			sess.Database = it.Database
		}
		sess.At = time.Now()
		t0 := time.Now()
		v := eng.Judge([]byte(it.SQL), &sess)
		el := time.Since(t0)
		rule := v.RuleID
		if rule == "" {
			rule = "-"
		}
		if *asJSON {
			writeVerdictJSON(stdout, i+1, checkItem{SQL: it.SQL, User: sess.User, Database: sess.Database, line: it.line}, v, el)
		} else if perStatement {
			fmt.Fprintf(stdout, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, v.Action, rule, el.Round(time.Microsecond), v.Reason, oneLine(it.SQL, 120))
			if *explain {
				printChains(stdout, eng.Chains([]byte(it.SQL), &sess))
			}
		}
		key := rule + "\x00" + v.Action.String()
		sum := sums[key]
		if sum == nil {
			sum = &ruleSummary{rule: rule, action: v.Action.String(), distinct: map[string]struct{}{}, example: it.SQL, line: it.line}
			sums[key] = sum
		}
		sum.statements++
		sum.distinct[it.SQL] = struct{}{}
		if v.Action.Denies() {
			rc = 1
			denied++
		}
	}
	if logInput && !*asJSON {
		if perStatement {
			fmt.Fprintln(stdout)
		}
		summarizeByRule(stdout, sums)
	}
	fmt.Fprintf(stderr, "fwctl: %d statements, %d denied\n", len(items), denied)
	return rc
}

// readItems reads the statements of the one input given: a file of
// statements, JSON lines, a PostgreSQL server log or a MySQL general log.
func readItems(file, jsonl, pgLog, myLog string) ([]checkItem, error) {
	var items []checkItem
	switch {
	case pgLog != "" || myLog != "":
		path, read, hint := pgLog, readPGLog, "log_statement = all"
		if myLog != "" {
			path, read, hint = myLog, readMySQLLog, "general_log = ON"
		}
		text, err := readInput(path)
		if err != nil {
			return nil, err
		}
		stmts, err := read(bytes.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(stmts) == 0 {
			return nil, fmt.Errorf("%s: no logged statements (the server logs them with %s)", path, hint)
		}
		for _, st := range stmts {
			items = append(items, checkItem{SQL: st.SQL, User: st.User, Database: st.Database, line: st.Line})
		}
	case file != "":
		text, err := readInput(file)
		if err != nil {
			return nil, err
		}
		for _, s := range splitStatements(string(text)) {
			items = append(items, checkItem{SQL: s})
		}
	default:
		text, err := readInput(jsonl)
		if err != nil {
			return nil, err
		}
		if items, err = parseJSONL(text); err != nil {
			return nil, fmt.Errorf("%s: %w", jsonl, err)
		}
	}
	return items, nil
}

type checkItem struct {
	SQL      string `json:"sql"`
	User     string `json:"user"`
	Database string `json:"database"`
	line     int    // --pg-log: where the statement starts in the log
}

func loadPolicy(path string, defaultPolicy func() *engine.Policy) (*engine.Policy, error) {
	if path == "" {
		return defaultPolicy(), nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := engine.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

func printVerdict(w io.Writer, v engine.Verdict, el time.Duration) {
	rule := v.RuleID
	if rule == "" {
		rule = "-"
	}
	fmt.Fprintf(w, "verdict:    %s\nrule:       %s\n", v.Action, rule)
	if v.Reason != "" {
		fmt.Fprintf(w, "reason:     %s\n", v.Reason)
	}
	if v.Mode != "" {
		fmt.Fprintf(w, "mode:       %s\n", v.Mode)
	}
	fmt.Fprintf(w, "statements: %d\nevaluation: %s\n", v.Statements, el)
}

// verdictJSON is one verdict of fwctl check --json.
type verdictJSON struct {
	N          int    `json:"n,omitempty"`    // the statement's number in a file or log
	Line       int    `json:"line,omitempty"` // its line in a log
	Action     string `json:"action"`
	Denied     bool   `json:"denied"`
	Rule       string `json:"rule,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Statements int    `json:"statements"`
	ParseError bool   `json:"parse_error,omitempty"`
	EvalNS     int64  `json:"evaluation_ns"`
	User       string `json:"user,omitempty"`
	Database   string `json:"database,omitempty"`
	SQL        string `json:"sql"`
}

func writeVerdictJSON(w io.Writer, n int, it checkItem, v engine.Verdict, el time.Duration) {
	b, _ := json.Marshal(verdictJSON{
		N: n, Line: it.line, Action: v.Action.String(), Denied: v.Action.Denies(), Rule: v.RuleID, Reason: v.Reason,
		Mode: string(v.Mode), Statements: v.Statements, ParseError: v.ParseError, EvalNS: el.Nanoseconds(),
		User: it.User, Database: it.Database, SQL: it.SQL,
	})
	fmt.Fprintf(w, "%s\n", b)
}

func exitFor(v engine.Verdict) int {
	if v.Action.Denies() {
		return 1
	}
	return 0
}

// splitStatements splits a --file: by ";" at the end of a line when some
// line ends with one, else one statement per line. It does not lex SQL: a
// string literal or function body with ";" at the end of a line splits.
func splitStatements(text string) []string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	semi := false
	for _, l := range lines {
		if strings.HasSuffix(strings.TrimSpace(l), ";") {
			semi = true
			break
		}
	}
	var out []string
	var cur []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if len(cur) == 0 && (t == "" || strings.HasPrefix(t, "--")) {
			continue
		}
		if !semi {
			out = append(out, t)
			continue
		}
		cur = append(cur, l)
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(strings.Join(cur, "\n")))
			cur = cur[:0]
		}
	}
	if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
		out = append(out, s)
	}
	return out
}

func parseJSONL(text []byte) ([]checkItem, error) {
	var out []checkItem
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var it checkItem
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if it.SQL == "" {
			return nil, fmt.Errorf("line %d: missing \"sql\"", n)
		}
		out = append(out, it)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no statements")
	}
	return out, nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
