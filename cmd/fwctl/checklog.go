package main

// fwctl check --pg-log: the statements a PostgreSQL server logged (with
// log_statement = all, or log_min_duration_statement), judged against a
// policy and summarised by rule, to try a policy on real traffic before it
// enforces anything.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
)

// logStatement is one statement from a server log, with the user and
// database when the log says them.
type logStatement struct {
	SQL, User, Database string
	Line                int // where it starts in the log
}

// The markers of a logged statement in a stderr-format line, after
// log_line_prefix (src/backend/tcop/postgres.c: "statement: %s",
// "execute %s%s%s: %s", and the "duration: %s ms  " form of both).
const (
	pgLogTag       = "LOG:  "
	pgStatementTag = "statement: "
	pgExecuteTag   = "execute "
	pgDurationTag  = "duration: "
)

// pgLogMessage returns the statement of a log message ("statement: …",
// "execute name: …", or either after "duration: … ms  "), or false.
func pgLogMessage(msg string) (string, bool) {
	if strings.HasPrefix(msg, pgDurationTag) {
		i := strings.Index(msg, " ms  ")
		if i < 0 {
			return "", false // a duration alone (log_duration)
		}
		msg = msg[i+len(" ms  "):]
	}
	switch {
	case strings.HasPrefix(msg, pgStatementTag):
		return msg[len(pgStatementTag):], true
	case strings.HasPrefix(msg, pgExecuteTag):
		// "execute <unnamed>: SELECT …", "execute S_1: …", also
		// "execute fetch from S_1/C_2: …"
		rest := msg[len(pgExecuteTag):]
		if i := strings.Index(rest, ": "); i >= 0 {
			return rest[i+2:], true
		}
	}
	return "", false
}

// prefixField finds key=value in a log_line_prefix's text (user=%u,db=%d
// and the like), the value ending at a space, comma or bracket.
func prefixField(prefix string, keys ...string) string {
	for _, key := range keys {
		for i := 0; ; {
			j := strings.Index(prefix[i:], key+"=")
			if j < 0 {
				break
			}
			j += i
			if j == 0 || strings.ContainsRune(" ,[(;", rune(prefix[j-1])) {
				v := prefix[j+len(key)+1:]
				if k := strings.IndexAny(v, " ,])(;"); k >= 0 {
					v = v[:k]
				}
				if v != "" && v != "[unknown]" {
					return v
				}
			}
			i = j + 1
		}
	}
	return ""
}

// pgJSONLog is the part of a jsonlog record (PostgreSQL 15) read here.
type pgJSONLog struct {
	User     string `json:"user"`
	DBName   string `json:"dbname"`
	Severity string `json:"error_severity"`
	Message  string `json:"message"`
}

// readPGLog reads a PostgreSQL server log in stderr (any log_line_prefix)
// or jsonlog format. Continuation lines (a tab first) belong to the record
// before them; the STATEMENT: lines that follow an error repeat a statement
// already logged and are not counted again.
func readPGLog(r io.Reader) ([]logStatement, error) {
	var out []logStatement
	var cur *logStatement
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			if cur != nil {
				cur.SQL += "\n" + line[1:]
			}
			continue
		}
		cur = nil
		if strings.HasPrefix(line, "{") {
			var rec pgJSONLog
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Message != "" {
				if rec.Severity == "LOG" {
					if sql, ok := pgLogMessage(rec.Message); ok {
						out = append(out, logStatement{SQL: sql, User: rec.User, Database: rec.DBName, Line: n})
					}
				}
				continue
			}
		}
		i := strings.Index(line, pgLogTag)
		if i < 0 {
			continue
		}
		sql, ok := pgLogMessage(line[i+len(pgLogTag):])
		if !ok {
			continue
		}
		prefix := line[:i]
		out = append(out, logStatement{
			SQL:      sql,
			User:     prefixField(prefix, "user", "usr"),
			Database: prefixField(prefix, "db", "database", "dbname"),
			Line:     n,
		})
		cur = &out[len(out)-1]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ruleSummary is one line of the summary: the statements a rule decided.
type ruleSummary struct {
	rule, action  string
	statements    int
	distinct      map[string]struct{}
	example, user string
	line          int
}

// summarizeByRule prints one line per (rule, action), denies first, then
// by count.
func summarizeByRule(w io.Writer, sums map[string]*ruleSummary) {
	list := make([]*ruleSummary, 0, len(sums))
	for _, s := range sums {
		list = append(list, s)
	}
	rank := func(a string) int {
		switch a {
		case "deny_and_close", "deny":
			return 0
		case "log":
			return 1
		}
		return 2
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if rank(a.action) != rank(b.action) {
			return rank(a.action) < rank(b.action)
		}
		if a.statements != b.statements {
			return a.statements > b.statements
		}
		return a.rule < b.rule
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rule\taction\tstatements\tdistinct\tfirst at\texample")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\tline %d\t%s\n", s.rule, s.action, s.statements, len(s.distinct), s.line, oneLine(s.example, 80))
	}
	tw.Flush()
}

// A MySQL/MariaDB general-log line: the time (MariaDB "261201 15:14:03",
// MySQL "2026-12-01T15:14:03.123456Z") only on the first line of its
// second, then the connection id, the command and its argument. A
// statement's later lines follow without the prefix.
var myLogLine = regexp.MustCompile(`^(?:[0-9]{6} [ 0-9:]{8}|[0-9T:.\-]+Z)?\t+ *([0-9]+) ([A-Za-z][A-Za-z ]*?)\t(.*)$`)

// myConnect reads a Connect argument: "user@host on db using TCP/IP"
// (MariaDB) or "user@host on db using SSL/TLS" (MySQL).
var myConnect = regexp.MustCompile(`^([^@\s]*)@\S* (?:as \S+ )?on ?(\S*)`)

// readMySQLLog reads a MySQL or MariaDB general log (general_log_file):
// the statements of Query and Prepare commands, with the user and database
// of their connection (from its Connect line, Init DB and Change user).
// Execute lines repeat a prepared statement with its values and are not
// judged again.
func readMySQLLog(r io.Reader) ([]logStatement, error) {
	type conn struct{ user, db string }
	conns := map[string]*conn{}
	var out []logStatement
	var cur *logStatement
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		m := myLogLine.FindStringSubmatch(line)
		if m == nil {
			if cur != nil {
				cur.SQL += "\n" + line
			}
			continue
		}
		cur = nil
		id, cmd, arg := m[1], m[2], m[3]
		c := conns[id]
		if c == nil {
			c = &conn{}
			conns[id] = c
		}
		switch cmd {
		case "Connect", "Change user":
			if cm := myConnect.FindStringSubmatch(arg); cm != nil {
				c.user, c.db = cm[1], cm[2]
			}
		case "Init DB":
			c.db = arg
		case "Query", "Prepare":
			out = append(out, logStatement{SQL: arg, User: c.user, Database: c.db, Line: n})
			cur = &out[len(out)-1]
		case "Quit":
			delete(conns, id)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
