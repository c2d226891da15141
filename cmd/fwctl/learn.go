package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

const learnUsage = `usage: fwctl learn start|stop|status|diff|export|promote|demote [options]
       fwctl learn offline [--protocol NAME] [--user U] [--database D]
                           (--file queries.sql | --jsonl queries.jsonl | --pg-log LOG | --mysql-log LOG)

A learned policy per application (docs/learn.md), from a running sqlfwd's
control socket:
  start     learn each application's statements (--by user,database,unit:
            what tells applications apart; default that); restarts from nothing
  stop      stop learning; what was learned stays for the commands below
  status    per application: statements, shapes, tables, and what the policy
            denied (would have denied, in monitor or detect mode)
  diff      per application: the shapes a promotion would add, the drift the
            promoted learned policy saw, and the shapes other rules deny
  export    print the learned policy fragment (--form, default fingerprints
            without a closing rule; --drift, --mode, --functions,
            --include-drift as for promote)
  promote   make the learned policy the database's: its rules appended to the
            policy, a closing learned-drift rule for everything else
            (--form scope|fingerprints, default scope; --drift deny|log,
            default deny; --mode detect|enforce for the drift rule, default
            detect: report drift first, then promote again with --mode
            enforce; --file F promotes a reviewed fragment instead)
  demote    remove the learned policy
offline learns from a file of statements or a server log (the inputs of
fwctl check) and prints the fingerprint fragment; --protocol (postgres,
mysql; a log implies its own, default postgres) picks the dialect that
fingerprints them: check the fragment with fwctl policy validate --protocol.`

// learn implements `fwctl learn`.
func learn(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("fwctl learn "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	user := fs.String("user", "", "database user (offline)")
	database := fs.String("database", "", "database: the protected database's name, or the session's (offline)")
	file := fs.String("file", "", "statements, one per line or ;-terminated (offline); a reviewed fragment (promote)")
	jsonl := fs.String("jsonl", "", "JSON lines {sql, user, database} (offline)")
	pgLog := fs.String("pg-log", "", "a PostgreSQL server log's statements (offline)")
	myLog := fs.String("mysql-log", "", "a MySQL/MariaDB general log's statements (offline)")
	protoName := fs.String("protocol", "", "offline: the protocol whose dialect fingerprints the statements ("+protocol.Names()+")")
	by := fs.String("by", "", "start: what tells applications apart (user, database, unit, cgroup, comm, uid)")
	form := fs.String("form", "", "export, promote: scope (tables, columns, kinds) or fingerprints (exact shapes)")
	drift := fs.String("drift", "", "export, promote: deny or log what is outside the learned policy")
	mode := fs.String("mode", "", "export, promote: the drift rule's mode, detect or enforce")
	functions := fs.Bool("functions", false, "export, promote, scope form: also limit the functions called to those learned")
	includeDrift := fs.Bool("include-drift", false, "export, promote: also take in the drift a promoted learned policy saw (after fwctl learn diff)")
	asJSON := fs.Bool("json", cur.json, "status, diff: print the raw JSON")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	q := url.Values{}
	if *database != "" {
		q.Set("database", *database)
	}
	for k, v := range map[string]string{"by": *by, "form": *form, "drift": *drift, "mode": *mode} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if *functions {
		q.Set("functions", "true")
	}
	if *includeDrift {
		q.Set("include_drift", "true")
	}
	c := control.Client{Socket: *sock}
	var body []byte
	method := http.MethodPost
	switch sub {
	case "offline":
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		return learnOffline(*protoName, set, *user, *database, [4]string{*file, *jsonl, *pgLog, *myLog}, stdout, stderr)
	case "status", "diff":
		raw, err := c.Call(http.MethodGet, "/v1/learn/status", q)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: learn %s: %v\n", sub, err)
			return 2
		}
		if *asJSON {
			stdout.Write(raw)
			return 0
		}
		var st control.LearnStatus
		if err := json.Unmarshal(raw, &st); err != nil {
			fmt.Fprintf(stderr, "fwctl: learn %s: %v\n", sub, err)
			return 2
		}
		if sub == "status" {
			printLearnStatus(stdout, &st)
		} else {
			printLearnDiff(stdout, &st)
		}
		return 0
	case "export":
		method = http.MethodGet
	case "promote":
		if *file != "" {
			b, err := readInput(*file)
			if err != nil {
				fmt.Fprintf(stderr, "fwctl: %v\n", err)
				return 2
			}
			body = b
		}
		if *mode == "" {
			q.Set("mode", string(engine.ModeDetect))
		}
	case "start", "stop", "demote":
	default:
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	out, err := c.CallBody(method, "/v1/learn/"+sub, q, body)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: learn %s: %v\n", sub, err)
		return 2
	}
	stdout.Write(out)
	return 0
}

func printLearnStatus(w io.Writer, st *control.LearnStatus) {
	state := "not learning"
	if st.Learning {
		state = "learning since " + st.Since
	} else if st.Report != nil {
		state = "stopped (learned since " + st.Since + ")"
	}
	fmt.Fprintf(w, "database %s (%s): %s\n", st.Database, st.Protocol, state)
	if p := st.Promoted; p != nil {
		fmt.Fprintf(w, "learned policy in force: form %s, drift %s, mode %s, %d rules, promoted %s", orDash(p.Form), orDash(p.Drift), orDash(p.Mode), p.Rules, p.At)
		if p.File != "" {
			fmt.Fprintf(w, ", file %s", p.File)
		}
		fmt.Fprintf(w, "; drift seen: %d\n", st.Drift)
	} else {
		fmt.Fprintln(w, "learned policy in force: none (fwctl learn promote)")
	}
	r := st.Report
	if r == nil {
		return
	}
	fmt.Fprintf(w, "applications told apart by %s: %d; %d statement shapes", r.By, len(r.Apps), r.Fingerprints)
	if r.Dropped > 0 {
		fmt.Fprintf(w, " (%d more dropped at the limit)", r.Dropped)
	}
	fmt.Fprintln(w)
	for _, a := range r.Apps {
		fmt.Fprintf(w, "\n  %s: %d statements, %d shapes, kinds %s\n", a.Name, a.Statements, len(a.Shapes), strings.Join(a.Kinds, ","))
		for _, t := range a.Tables {
			var acc []string
			if t.Read {
				acc = append(acc, "read")
			}
			if t.Write {
				acc = append(acc, "write")
			}
			fmt.Fprintf(w, "    table %s (%s)", t.Name, strings.Join(acc, ","))
			if len(t.Columns) > 0 {
				fmt.Fprintf(w, " columns %s", strings.Join(t.Columns, ", "))
			}
			fmt.Fprintln(w)
		}
		if len(a.Functions) > 0 {
			fmt.Fprintf(w, "    functions %s\n", strings.Join(a.Functions, ", "))
		}
		for _, rule := range sortedKeys(a.Denied) {
			fmt.Fprintf(w, "    denied by %s: %d statements\n", rule, a.Denied[rule])
		}
	}
}

// printLearnDiff shows, per application, what a promotion of what was
// learned would change: shapes no learned rule allows yet (new), drift
// the promoted learned policy saw, and shapes other rules deny.
func printLearnDiff(w io.Writer, st *control.LearnStatus) {
	r := st.Report
	if r == nil {
		fmt.Fprintf(w, "database %s: nothing learned (fwctl learn start)\n", st.Database)
		return
	}
	promoted := st.Promoted != nil
	for _, a := range r.Apps {
		var lines []string
		for _, s := range a.Shapes {
			switch {
			case s.Rule == engine.DriftRuleID && s.Denied:
				lines = append(lines, fmt.Sprintf("    drift  %6d  %s  (learned-drift denies it; promote --include-drift takes it in)", s.Count, s.Normalized))
			case s.Rule == engine.DriftRuleID:
				lines = append(lines, fmt.Sprintf("    drift  %6d  %s  (learned-drift logs it; promote --include-drift takes it in)", s.Count, s.Normalized))
			case s.Denied:
				lines = append(lines, fmt.Sprintf("    denied %6d  %s  (by %s: not learned, stays denied)", s.Count, s.Normalized, s.Rule))
			case !strings.HasPrefix(s.Rule, engine.LearnedRulePrefix):
				lines = append(lines, fmt.Sprintf("    new    %6d  %s", s.Count, s.Normalized))
			}
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n%s\n", a.Name, strings.Join(lines, "\n"))
	}
	if !promoted {
		fmt.Fprintln(w, "(no learned policy in force: \"new\" is what promote would allow)")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// learnOffline learns from the one input of in (file, jsonl, pg-log,
// mysql-log) with the dialect of the protocol chosen.
func learnOffline(protoName string, set map[string]bool, user, database string, in [4]string, stdout, stderr io.Writer) int {
	given := 0
	for _, f := range in {
		if f != "" {
			given++
		}
	}
	if given != 1 {
		fmt.Fprintln(stderr, learnUsage)
		return 2
	}
	proto, err := chooseProtocol(protoName, set, "", "")
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	items, err := readItems(in[0], in[1], in[2], in[3])
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	l := engine.NewLearner(proto.Dialect, 0)
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
	fmt.Fprintf(stderr, "fwctl: %d statements, %d fingerprints (%s)\n", len(items), n, proto.Name)
	return 0
}
