package mysql

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/internal/corpus"
)

// The adversarial corpus: testdata/adversarial/*.tsv, one file per bypass
// class. Each line is
//
//	expect<TAB>statement[<TAB>session]
//
// expect is a rule id of the default policy (the statement must be denied by
// that rule; parse-error and the lexing denies of Read count as rule ids),
// "deny" (denied by any rule) or "allow" (must pass: the benign face of the
// class). statement is taken as written, or, when it starts with a double
// quote, as a Go string literal, for control characters and bytes that are
// not UTF-8. session, when present, is a comma-separated list of key=value
// settings of the session the statement is judged in (parseSessionSpec),
// and bind=v1|v2|... judges it as a prepared statement executed with those
// values (JudgeBound; each an SQL literal or @variable, ? for one not
// known, bind=* for values not known at all).
// Blank lines and lines starting with "#" are skipped.

type adversarialCase struct {
	file    string
	line    int
	expect  string
	sql     string
	session string
}

// readCorpus reads the corpus lines of the files matching glob.
func readCorpus(t testing.TB, glob string) []adversarialCase {
	t.Helper()
	cs, err := corpus.Read(glob)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]adversarialCase, len(cs))
	for i, c := range cs {
		out[i] = adversarialCase{file: c.File, line: c.Line, expect: c.Expect, sql: c.SQL, session: c.Session}
	}
	return out
}

// parseSessionSpec applies "sql_mode=A+B,charset=gbk,unconfirmed=1,autocreate=1,db=mysql"
// to s ("+" separates sql_mode's words, since "," separates settings; db is
// the session's current database, "app" unless set, and db= is none).
func parseSessionSpec(spec string, s *engine.Session) error {
	if spec == "" {
		return nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want key=value", kv)
		}
		switch k {
		case "sql_mode":
			s.Lex.SQLMode = strings.ReplaceAll(v, "+", ",")
		case "charset":
			s.Lex.ClientEncoding = v
		case "unconfirmed":
			s.Lex.Unconfirmed = v == "1"
		case "autocreate":
			// the session's sql_mode lacks NO_AUTO_CREATE_USER, or is
			// not known (relay/mysql lexstate.go)
			s.Lex.AutoCreateUser = v == "1"
		case "user":
			s.User = v
		case "server":
			// server=mariadb-101119, server=mysql-80036: the greeting's
			kind, ver, _ := strings.Cut(v, "-")
			n, err := strconv.Atoi(ver)
			if err != nil || (kind != "mariadb" && kind != "mysql") {
				return fmt.Errorf("server=%q: want mariadb-NNNNNN or mysql-NNNNN", v)
			}
			s.Lex.ServerVersion, s.Lex.MariaDB = uint32(n), kind == "mariadb"
		case "db":
			s.Database = v
		default:
			return fmt.Errorf("unknown session key %q", k)
		}
	}
	return nil
}

// TestAdversarialCorpus judges every corpus line with the default policy,
// through the caches (twice, so that the second judgement is a cache hit)
// and without them.
func TestAdversarialCorpus(t *testing.T) {
	judgeCorpus(t, readCorpus(t, "testdata/adversarial/*.tsv"))
}

// TestBenignCorpus: sysbench, ORM and migration statements pass the
// default policy (zero false positives). One statement per line, or a Go
// string literal.
func TestBenignCorpus(t *testing.T) {
	f, err := os.ReadFile("testdata/benign.sql")
	if err != nil {
		t.Fatal(err)
	}
	var cases []adversarialCase
	for i, line := range strings.Split(string(f), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			s, err := strconv.Unquote(line)
			if err != nil {
				t.Fatalf("benign.sql:%d: %v", i+1, err)
			}
			line = s
		}
		cases = append(cases, adversarialCase{file: "benign.sql", line: i + 1, expect: "allow", sql: line})
	}
	if len(cases) < 100 {
		t.Fatalf("benign corpus has %d statements, want at least 100", len(cases))
	}
	judgeCorpus(t, cases)
}

func judgeCorpus(t *testing.T, cases []adversarialCase) {
	t.Helper()
	cached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	uncached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The default policy with on_parse_error: allow, as an operator who
	// lets MariaDB's syntax through sets it: a statement denied by a rule
	// is denied by it still (unparsed.go), a parse error is allowed.
	lenientYAML := bytes.Replace(DefaultPolicyYAML(), []byte("on_parse_error: deny"), []byte("on_parse_error: allow"), 1)
	lp, err := engine.ParsePolicy(lenientYAML)
	if err != nil || bytes.Equal(lenientYAML, DefaultPolicyYAML()) {
		t.Fatalf("lenient policy: %v", err)
	}
	lenient, err := engine.New(lp, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		s := &engine.Session{User: "app", Database: "app"}
		spec, vals := bindSpec(c.session)
		if err := parseSessionSpec(spec, s); err != nil {
			t.Fatalf("%s:%d: session %q: %v", c.file, c.line, c.session, err)
		}
		judge := func(e *engine.Engine) engine.Verdict {
			if vals != nil {
				return e.JudgeBound([]byte(c.sql), s, vals)
			}
			return e.Judge([]byte(c.sql), s)
		}
		for round, e := range []*engine.Engine{cached, cached, uncached} {
			v := judge(e)
			ok := false
			switch c.expect {
			case "allow":
				ok = !v.Action.Denies()
			case "deny":
				ok = v.Action.Denies()
			default:
				ok = v.Action.Denies() && v.RuleID == c.expect
			}
			if !ok {
				t.Errorf("%s:%d (round %d): %q session %q\n got: %v %s (%s)\nwant: %s", c.file, c.line, round, c.sql, c.session, v.Action, v.RuleID, v.Reason, c.expect)
				break
			}
			if v.Action.Denies() && v.Reason == "" {
				t.Errorf("%s:%d: %q: deny without a reason", c.file, c.line, c.sql)
			}
		}
		v := judge(lenient)
		switch c.expect {
		case "deny":
		case "allow", "parse-error":
			if v.Action.Denies() {
				t.Errorf("%s:%d (on_parse_error: allow): %q: got %v %s, want allow", c.file, c.line, c.sql, v.Action, v.RuleID)
			}
		default:
			if !v.Action.Denies() || v.RuleID != c.expect {
				t.Errorf("%s:%d (on_parse_error: allow): %q\n got: %v %s (%s)\nwant: %s", c.file, c.line, c.sql, v.Action, v.RuleID, v.Reason, c.expect)
			}
		}
	}
}

// bindSpec takes bind=... out of a session spec: the values, nil without
// it.
func bindSpec(spec string) (string, engine.ParamValues) {
	var rest []string
	var vals engine.ParamValues
	for _, kv := range strings.Split(spec, ",") {
		if v, ok := strings.CutPrefix(kv, "bind="); ok {
			if v == "*" {
				vals = engine.UnknownParams
				continue
			}
			var tv testValues
			for _, x := range strings.Split(v, "|") {
				if x == "?" {
					x = ""
				}
				tv = append(tv, x)
			}
			vals = tv
			continue
		}
		if kv != "" {
			rest = append(rest, kv)
		}
	}
	return strings.Join(rest, ","), vals
}
