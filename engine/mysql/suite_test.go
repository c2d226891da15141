package mysql

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// mariadbSuite is where Debian's mariadb-test package puts MariaDB's own
// mysql-test suite (SQLFW_MARIADB_SUITE overrides it).
const mariadbSuite = "/usr/share/mysql/mysql-test"

// TestMariaDBTestSuite measures what TiDB's parser does not parse in a real
// corpus: the statements of MariaDB's mysql-test suite (every *.test file,
// mysqltest's own commands stripped: suiteStatements), judged with the
// default policy under on_parse_error: allow, as an operator who lets
// MariaDB's syntax through has it. It prints the parse errors by class of
// leading words, and how many of each a rule still denies (unparsed.go):
// docs/policy.md's "Known not to parse" table is its output
// (go test -run TestMariaDBTestSuite -v ./engine/mysql). It fails when a
// statement that loads code (INSTALL PLUGIN/SONAME, UNINSTALL, CREATE
// FUNCTION ... SONAME, found here by a regular expression of their own) is
// not denied by no-code-loading. SQLFW_SUITE_SHOW="set statement" prints
// the statements of one class that a rule denies.
func TestMariaDBTestSuite(t *testing.T) {
	root := os.Getenv("SQLFW_MARIADB_SUITE")
	if root == "" {
		root = mariadbSuite
	}
	if _, err := os.Stat(root); err != nil {
		t.Skipf("%s: %v (install Debian's mariadb-test package to measure its statements)", root, err)
	}
	if testing.Short() {
		t.Skip("-short: the suite's ~300,000 statements take a minute")
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".test") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lenient, err := engine.ParsePolicy(bytes.Replace(DefaultPolicyYAML(), []byte("on_parse_error: deny"), []byte("on_parse_error: allow"), 1))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(lenient, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type class struct {
		errors, denied int
		rules          map[string]int
		example        string
	}
	classes := map[string]*class{}
	features := map[string]int{}          // by the name knownUnparsed gives a parse error
	show := os.Getenv("SQLFW_SUITE_SHOW") // a class whose denied statements to print
	var stmts, expectErr, parseErrors, refused, loaders int
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range suiteStatements(string(b)) {
			if s.expectError {
				expectErr++
				continue
			}
			stmts++
			v := e.Judge([]byte(s.sql), nil)
			if loadsCodeRE.MatchString(s.sql) {
				loaders++
				if !v.Action.Denies() || v.RuleID != "no-code-loading" {
					t.Errorf("%s: %.120q: got %v %s, want deny no-code-loading", path, s.sql, v.Action, v.RuleID)
				}
			}
			if !v.ParseError {
				if v.RuleID == lexAmbiguousRuleID {
					refused++
				}
				continue
			}
			parseErrors++
			name := leadClass(s.sql)
			c := classes[name]
			if c == nil {
				c = &class{rules: map[string]int{}, example: s.sql}
				classes[name] = c
			}
			c.errors++
			features[knownUnparsed(s.sql)]++
			if v.Action.Denies() {
				if show != "" && show == name {
					t.Logf("%s: denied by %s: %.300q", path, v.RuleID, s.sql)
				}
				c.denied++
				c.rules[v.RuleID]++
			}
		}
	}
	if loaders == 0 {
		t.Errorf("no statement that loads code in %d files: is %s the suite?", len(files), root)
	}
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := classes[names[i]].errors, classes[names[j]].errors; a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	var out strings.Builder
	fmt.Fprintf(&out, "%d files, %d statements (%d more that the test expects to fail, not counted), %d parse errors (%.1f%%), %d refused by the reading (lexing-ambiguous); %d load code, all denied by no-code-loading\n\n",
		len(files), stmts, expectErr, parseErrors, 100*float64(parseErrors)/float64(max(stmts, 1)), refused, loaders)
	out.WriteString("| leading words | parse errors | denied by a rule | rules |\n|---|---:|---:|---|\n")
	other := class{rules: map[string]int{}}
	for _, n := range names {
		c := classes[n]
		if c.errors < 20 {
			other.errors += c.errors
			other.denied += c.denied
			for r, k := range c.rules {
				other.rules[r] += k
			}
			continue
		}
		fmt.Fprintf(&out, "| `%s` | %d | %d | %s |\n", n, c.errors, c.denied, ruleList(c.rules))
	}
	fmt.Fprintf(&out, "| (classes of fewer than 20) | %d | %d | %s |\n", other.errors, other.denied, ruleList(other.rules))
	out.WriteString("\n| named in the reason | parse errors |\n|---|---:|\n")
	fnames := make([]string, 0, len(features))
	for n := range features {
		fnames = append(fnames, n)
	}
	sort.Slice(fnames, func(i, j int) bool { return features[fnames[i]] > features[fnames[j]] })
	for _, n := range fnames {
		label := "`" + n + "`"
		if n == "" {
			label = "(none)"
		}
		fmt.Fprintf(&out, "| %s | %d |\n", label, features[n])
	}
	t.Log("\n" + out.String())
}

// loadsCodeRE finds the statements that load code, independently of
// unparsed.go's reading.
var loadsCodeRE = regexp.MustCompile(`(?is)^\s*(install\s+(plugin|soname)\b|uninstall\s+(plugin|soname)\b|create\s+(or\s+replace\s+)?(aggregate\s+)?function\s+(if\s+not\s+exists\s+)?\S+\s+returns\s+\w+\s+soname\b)`)

func ruleList(rules map[string]int) string {
	var rs []string
	for r, k := range rules {
		rs = append(rs, fmt.Sprintf("%s %d", r, k))
	}
	sort.Strings(rs)
	return strings.Join(rs, ", ")
}

// classObjects are the words that name what a CREATE, ALTER or DROP is of.
var classObjects = map[string]bool{
	"table": true, "view": true, "function": true, "procedure": true, "trigger": true, "event": true,
	"server": true, "index": true, "database": true, "schema": true, "sequence": true, "user": true,
	"role": true, "tablespace": true, "logfile": true, "package": true, "synonym": true,
}

// leadClass names a statement by its leading words: the verb and object of
// DDL (CREATE OR REPLACE, DEFINER, TEMPORARY and the like skipped), two
// words of SET STATEMENT, SHOW, START, CHANGE, ..., one word otherwise.
func leadClass(sql string) string {
	text, _, _, ok := Dialect.Read([]byte(sql), nil)
	if !ok {
		return "(unreadable)"
	}
	var words []string
	for i := 0; len(words) < 12; {
		tk, ok := nextToken(string(text), i)
		if !ok || tk.kind == ';' {
			break
		}
		i = tk.hi
		if tk.kind == tokWord {
			words = append(words, strings.ToLower(string(text[tk.lo:tk.hi])))
		} else if len(words) == 0 {
			switch tk.kind {
			case tokString:
				return "(a string)"
			case tokIdent:
				return "(a quoted name)"
			}
			return "(" + string(tk.kind) + ")"
		}
	}
	if len(words) == 0 {
		return "(empty)"
	}
	switch words[0] {
	case "create", "alter", "drop":
		for _, w := range words[1:] {
			if classObjects[w] {
				return words[0] + " " + w
			}
		}
	case "set", "show", "start", "stop", "change", "xa", "execute", "check", "repair", "flush", "lock", "reset", "purge", "install", "uninstall", "handler", "load", "select", "begin", "with":
		if len(words) > 1 && (words[0] != "select" && words[0] != "with" || words[1] == "system_time") {
			return words[0] + " " + words[1]
		}
	}
	return words[0]
}

type suiteStatement struct {
	sql         string
	expectError bool // after --error / error: the test expects the server to refuse it
}

// mysqltestCommands are mysqltest's own commands (client/mysqltest.cc):
// a statement that starts with one is not sent to the server.
var mysqltestCommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`append_file cat_file change_user character_set chmod connect connection
		copy_file copy_files_wildcard dec delimiter die diff_files dirty_close disconnect echo end end_timer
		error eval exec exec_in_background execw exit expr file_exists force-cpdir force-rmdir horizontal_results
		if inc let list_files list_files_append_file list_files_write_file lowercase_result mkdir move_file
		output partially_sorted_result perl ping query_attributes real_sleep reap remove_file remove_files_wildcard
		replace_column replace_numeric_round replace_regex replace_result require reset_connection result_format
		rmdir save_master_pos send_eval send_quit send_shutdown shutdown_server skip sleep sorted_result source
		start_timer sync_slave_with_master sync_with_master system vertical_results wait_for_slave_to_stop while
		write_file write_line single_query evalp enable_prepare_warnings disable_prepare_warnings`) {
		mysqltestCommands[c] = true
	}
}

// suiteStatements extracts the statements a mysqltest file sends to the
// server: # lines are comments, --command lines are commands (--delimiter
// changes the delimiter, --error marks the next statement, --perl and
// --write_file blocks run to EOF, --disable_parsing to --enable_parsing),
// if/while lines and braces are control, and the rest is cut at the
// current delimiter (outside quotes) into commands and statements; send,
// query, query_vertical and query_horizontal prefix a statement; eval and
// let (with $variables) are skipped.
func suiteStatements(src string) []suiteStatement {
	var out []suiteStatement
	delim := ";"
	var cur strings.Builder
	expectError, skipping := false, false
	blockEnd := "" // inside a perl or write_file block: its terminator
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	emit := func(stmt string) {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			return
		}
		first := strings.ToLower(stmt)
		if i := strings.IndexAny(first, " \t\n\r(;"); i >= 0 {
			first = first[:i]
		}
		switch {
		case first == "error":
			expectError = true
			return
		case first == "delimiter":
			delim = strings.TrimSpace(stmt[len("delimiter"):])
			return
		case first == "perl" || first == "write_file" || first == "append_file":
			blockEnd = "EOF"
			if f := strings.Fields(stmt); first == "perl" && len(f) > 1 {
				blockEnd = f[1]
			} else if first != "perl" && len(f) > 2 {
				blockEnd = f[2]
			}
			return
		case first == "send" || first == "query" || first == "query_vertical" || first == "query_horizontal":
			stmt = strings.TrimSpace(stmt[len(first):])
			if stmt == "" {
				return
			}
		case mysqltestCommands[first] || strings.HasPrefix(first, "enable_") || strings.HasPrefix(first, "disable_") || strings.HasPrefix(first, "}") || strings.HasPrefix(first, "{"):
			return
		}
		out = append(out, suiteStatement{sql: stmt, expectError: expectError})
		expectError = false
	}
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		if blockEnd != "" {
			if trim == blockEnd {
				blockEnd = ""
			}
			continue
		}
		if cur.Len() == 0 {
			if skipping {
				if strings.HasPrefix(trim, "--enable_parsing") || strings.HasPrefix(trim, "enable_parsing") {
					skipping = false
				}
				continue
			}
			switch {
			case trim == "" || strings.HasPrefix(trim, "#"):
				continue
			case strings.HasPrefix(trim, "--"):
				cmd := strings.Fields(trim[2:])
				if len(cmd) == 0 {
					continue
				}
				switch cmd[0] {
				case "delimiter":
					if len(cmd) > 1 {
						delim = cmd[1]
					}
				case "error":
					expectError = true
				case "disable_parsing":
					skipping = true
				case "perl", "write_file", "append_file":
					blockEnd = "EOF"
					if cmd[0] == "perl" && len(cmd) > 1 {
						blockEnd = cmd[1]
					} else if cmd[0] != "perl" && len(cmd) > 2 {
						blockEnd = cmd[2]
					}
				}
				continue
			case trim == "{" || trim == "}" || strings.HasPrefix(trim, "}"):
				continue
			case controlRE.MatchString(trim):
				continue
			}
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		// Cut at the delimiter, outside quotes.
		for {
			s := cur.String()
			k := delimIndex(s, delim)
			if k < 0 {
				break
			}
			cur.Reset()
			end := k + len(delim) // before emit: a delimiter command changes delim
			emit(s[:k])
			if blockEnd != "" {
				break
			}
			rest := strings.TrimLeft(s[end:], " \t\r\n")
			if strings.HasPrefix(rest, "#") || strings.HasPrefix(rest, "--") {
				rest = "" // a note after the statement, to the end of the line
			}
			if rest != "" {
				cur.WriteString(rest)
				if !strings.HasSuffix(rest, "\n") {
					cur.WriteByte('\n')
				}
			}
		}
	}
	return out
}

var controlRE = regexp.MustCompile(`^(?i)(if|while)\s*\(`)

// delimIndex finds delim in s outside '...', "..." and `...`.
func delimIndex(s, delim string) int {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == '\\' && q != '`' {
				i++
			} else if c == q {
				q = 0
			}
		case c == '\'' || c == '"' || c == '`':
			q = c
		case strings.HasPrefix(s[i:], delim):
			return i
		}
	}
	return -1
}
