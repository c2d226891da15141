package corpora

import (
	"regexp"
	"strings"
)

// A Slot is where a vulnerable application pastes a request value.
type Slot struct {
	Name   string
	Prefix string
	Suffix string
	// Quoted slots take text between single quotes; the benign inputs
	// are placed escaped there, as a working application would.
	Quoted bool
	// Order is the ORDER BY slot: it takes a column name.
	Order bool
}

// Slots are the statements the issue names: numeric id, quoted string,
// ORDER BY column, UPDATE ... SET value, and the login form's two fields.
// The tables exist on the measuring servers (server.go schema).
var Slots = []Slot{
	{Name: "numeric", Prefix: "SELECT name, price FROM items WHERE id = "},
	{Name: "quoted", Prefix: "SELECT name, price FROM items WHERE name = '", Suffix: "'", Quoted: true},
	{Name: "orderby", Prefix: "SELECT name, price FROM items ORDER BY ", Order: true},
	{Name: "update", Prefix: "UPDATE items SET name = '", Suffix: "' WHERE id = 1", Quoted: true},
	{Name: "login-user", Prefix: "SELECT id FROM users WHERE name = '", Suffix: "' AND pass = 'x'", Quoted: true},
	{Name: "login-pass", Prefix: "SELECT id FROM users WHERE name = 'admin' AND pass = '", Suffix: "'", Quoted: true},
}

// Place returns the statement the slot makes of v, pasted as is.
func (s Slot) Place(v string) string { return s.Prefix + v + s.Suffix }

// PlaceBenign returns the statement a working application makes of a
// benign input: escaped in quoted slots (quotes doubled; for MariaDB
// backslashes too), as is in the numeric slot when it is a number; ok is
// false when the slot takes no such value (a word is no id).
func (s Slot) PlaceBenign(v string, pg bool) (string, bool) {
	switch {
	case s.Quoted:
		v = strings.ReplaceAll(v, "'", "''")
		if !pg {
			v = strings.ReplaceAll(v, `\`, `\\`)
		}
		return s.Place(v), true
	case s.Order:
		return "", false
	default:
		if !number.MatchString(v) {
			return "", false
		}
		return s.Place(v), true
	}
}

// orderBenign are the values an ORDER BY slot takes from a working
// application.
var orderBenign = []string{"name", "price", "id", "name DESC", "price ASC", "2", "1 DESC", "name, price", "price DESC, name"}

var number = regexp.MustCompile(`^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$`)

// suffixWords are the tokens of the application's statement after the
// slot's value.
func (s Slot) suffixWords(pg bool) []string {
	bw := lex(s.Place(s.benignValue()), pg).words()
	n := len(lex(s.Prefix, pg).words()) // a quoted slot's prefix ends in the value's literal
	if !s.Quoted {
		n++
	}
	if n > len(bw) {
		return nil
	}
	return bw[n:]
}

func (s Slot) benignValue() string {
	switch {
	case s.Order:
		return "name"
	case s.Quoted:
		return "abc"
	}
	return "1"
}

// LeftSlot reports whether payload p, pasted into s, makes a statement
// whose tokens (comments dropped, literals as one kind) differ from those
// of the statement a benign value makes: the payload is code, not a value.
// broken is true when the statement has an unclosed literal or comment
// (the server rejects it).
func (s Slot) LeftSlot(p string, pg bool) (left bool, l lexed, broken bool) {
	stmt := s.Place(p)
	l = lex(stmt, pg)
	if l.broken {
		return false, l, true
	}
	if !s.Quoted && !s.Order && number.MatchString(p) {
		return false, l, false
	}
	w := l.words()
	if s.Order {
		pre := lex(s.Prefix, pg).words()
		if len(w) < len(pre) || !same(w[:len(pre)], pre) {
			return true, l, false
		}
		return !orderList(w[len(pre):]), l, false
	}
	return !same(w, lex(s.Place(s.benignValue()), pg).words()), l, false
}

// orderList reports whether ws is a list of column names or positions,
// each with an optional direction.
func orderList(ws []string) bool {
	if len(ws) == 0 {
		return false
	}
	i := 0
	for {
		if i >= len(ws) || !(ws[i] == "?" || plainName(ws[i])) {
			return false
		}
		i++
		if i < len(ws) && (ws[i] == "asc" || ws[i] == "desc") {
			i++
		}
		if i == len(ws) {
			return true
		}
		if ws[i] != "," {
			return false
		}
		i++
	}
}

func plainName(w string) bool {
	if strings.HasPrefix(w, "i:") {
		return true
	}
	switch w {
	case "name", "price", "id", "value":
		return true
	}
	return false
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Shapes, in the order Shape tries them: the first that fits names the
// injection.
const (
	ShapeTime    = "time-based"
	ShapeStacked = "stacked"
	ShapeUnion   = "UNION"
	ShapeError   = "error-based"
	ShapeOrderBy = "ORDER BY slot"
	ShapeBoolean = "boolean-blind"
	ShapeComment = "comment cut-off"
	ShapeOther   = "other"
)

// ShapeOrder is the order shapes appear in the report.
var ShapeOrder = []string{ShapeTime, ShapeStacked, ShapeUnion, ShapeError, ShapeOrderBy, ShapeBoolean, ShapeComment, ShapeOther}

var (
	timeWords  = set("sleep", "pg_sleep", "pg_sleep_for", "pg_sleep_until", "benchmark", "waitfor", "get_lock", "master_pos_wait", "master_gtid_wait", "dbms_pipe", "dbms_lock")
	errorWords = set("extractvalue", "updatexml", "exp", "geometrycollection", "polygon", "multipoint", "multilinestring", "multipolygon", "linestring",
		"gtid_subset", "json_keys", "name_const", "xmltype", "utl_inaddr", "ctxsys", "query_to_xml", "xmlparse", "convert_from")
	boolWords = set("and", "or", "xor", "not", "&&", "||", "like", "rlike", "regexp", "between", "case", "if", "iif", "<", ">", "<=", ">=", "<>", "!=", "<=>", "in", "is")
	castTypes = set("int", "integer", "numeric", "bigint", "smallint", "decimal", "signed", "unsigned", "float", "double", "real")
)

func set(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Shape names the kind of injection payload p makes in slot s, from the
// tokens of the statement l.
func Shape(s Slot, p string, l lexed) string {
	w := l.words()
	pre := len(lex(s.Prefix, l.pg()).words())
	if s.Quoted && pre > 0 {
		pre-- // the opening quote is the payload's first literal
	}
	if pre > len(w) {
		pre = len(w)
	}
	added := w[pre:]
	// The application's own tokens after the slot (AND pass = ?, WHERE
	// id = ?) are not the payload's, when they are still there.
	if suf := s.suffixWords(l.pgRules); len(suf) > 0 && len(added) >= len(suf)+1 && same(added[len(added)-len(suf):], suf) {
		added = added[:len(added)-len(suf)]
	}
	has := func(m map[string]bool) bool {
		for _, x := range added {
			// In PostgreSQL || joins strings; in MariaDB it is OR.
			if m[x] && !(x == "||" && l.pgRules) {
				return true
			}
		}
		return false
	}
	switch {
	case has(timeWords):
		return ShapeTime
	case len(l.stmts) > 1:
		return ShapeStacked
	case has(set("union")):
		return ShapeUnion
	case has(errorWords) || floorRand(added) || castError(added):
		return ShapeError
	case s.Order:
		return ShapeOrderBy
	case has(boolWords):
		return ShapeBoolean
	case cutOff(s, p, l):
		return ShapeComment
	}
	return ShapeOther
}

func (l lexed) pg() bool { return l.pgRules }

// floorRand: GROUP BY floor(rand(0)*2), the duplicate-key error.
func floorRand(ws []string) bool {
	for i := 0; i+2 < len(ws); i++ {
		if ws[i] == "floor" && ws[i+1] == "(" && ws[i+2] == "rand" {
			return true
		}
	}
	return false
}

// castError: a cast of text to a number (CAST(.. AS INT), ::int,
// CONVERT(INT, ..)), whose error message carries the text.
func castError(ws []string) bool {
	for i := 0; i+1 < len(ws); i++ {
		if (ws[i] == "as" || ws[i] == "::") && castTypes[ws[i+1]] {
			return true
		}
		if ws[i] == "convert" && i+2 < len(ws) && ws[i+1] == "(" && castTypes[ws[i+2]] {
			return true
		}
	}
	return false
}

// cutOff reports whether a comment the payload opens hides the rest of the
// application's statement.
func cutOff(s Slot, p string, l lexed) bool {
	if strings.TrimSpace(s.Suffix) == "" {
		return false
	}
	at := len(s.Prefix) + len(p)
	for at < len(s.Prefix)+len(p)+len(s.Suffix) && isSpace(s.Place(p)[at]) {
		at++
	}
	return l.inComment(at)
}
