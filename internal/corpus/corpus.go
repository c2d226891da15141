// Package corpus reads the adversarial corpora that the dialects' tests
// (engine/pgsql, engine/mysql) judge with the engine and the e2e tests send
// through sqlfwd to the real servers: testdata/adversarial/*.tsv, one line a
// case,
//
//	expect<TAB>statement[<TAB>session]
//
// expect is a rule id of the dialect's default policy (the statement must be
// denied by that rule), "deny" (denied by any rule, parse errors included)
// or "allow" (the benign face of a class). statement is taken as written,
// or, when it starts with a double quote, as a Go string literal, for
// control characters and bytes that are not UTF-8. session, when present,
// is the dialect's comma-separated key=value settings of the session the
// statement is judged in. Blank lines and lines starting with "#" are
// skipped.
//
// It imports nothing of sqlfw.
package corpus

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Case is one corpus line.
type Case struct {
	File    string // the file's base name
	Line    int
	Expect  string
	SQL     string
	Session string
}

// ParseLine reads one line; skip is true for blank and comment lines.
func ParseLine(line string) (c Case, skip bool, err error) {
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
		return c, true, nil
	}
	parts := strings.SplitN(line, "\t", 3)
	if len(parts) < 2 {
		return c, false, fmt.Errorf("want expect<TAB>statement[<TAB>session], got %q", line)
	}
	c = Case{Expect: parts[0], SQL: parts[1]}
	if len(parts) == 3 {
		c.Session = parts[2]
	}
	if strings.HasPrefix(c.SQL, `"`) {
		s, err := strconv.Unquote(c.SQL)
		if err != nil {
			return c, false, fmt.Errorf("statement is not a Go string literal: %w", err)
		}
		c.SQL = s
	}
	return c, false, nil
}

// Read reads every file matching glob, in name order. No line at all is an
// error: a glob that matches nothing must not pass as an empty corpus.
func Read(glob string) ([]Case, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for n := 1; sc.Scan(); n++ {
			c, skip, err := ParseLine(sc.Text())
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			if skip {
				continue
			}
			c.File, c.Line = filepath.Base(path), n
			out = append(out, c)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no corpus lines in %s", glob)
	}
	return out, nil
}
