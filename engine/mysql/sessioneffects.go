package mysql

// What a statement's text changes in a MySQL or MariaDB session, where
// the server's answer does not say it (engine.SessionEffector; the relay
// follows the rest from the answer, relay/mysql lexstate.go): the client
// character set a SET NAMES (or the like) sets, what a SET sql_mode leaves
// NO_AUTO_CREATE_USER at, the database a USE sets, and whether the text may
// PREPARE or EXECUTE one that changes the lexing state. A byte reading of
// the simple forms, no parse: a false positive only marks the lexing state
// unconfirmed until the answer, or unknown.

import (
	"bytes"

	"github.com/sqlfw/sqlfw/engine"
)

// SessionEffects reads sql for what it changes in the session
// (engine.SessionEffector). dynamic is the text's Verdict.DynamicSQL.
func (myDialect) SessionEffects(sql []byte, dynamic bool) engine.SessionEffects {
	var e engine.SessionEffects
	e.Names = lexSensitive(sql)
	e.Executes = foldContains(sql, "execute")
	if (e.Names || e.Executes || dynamic || bytes.IndexByte(sql, '@') >= 0) && foldContains(sql, "prepare") {
		// PREPARE s FROM 'SET NAMES gbk' (or FROM @v, FROM
		// CONCAT('SET NA','MES gbk')): its EXECUTE changes the
		// character set without naming it
		e.Prepares = true
	}
	if e.Names {
		e.Charset, e.Grant = namesCharset(sql), namesMode(sql)
	}
	e.Schema, e.SchemaChange = readUse(sql)
	e.SessionOpLead = leadsWith(sql, "prepare", "execute", "deallocate", "drop")
	return e
}

// ReportedGrant is what an sql_mode the server reported says of
// NO_AUTO_CREATE_USER, and whether it holds ANSI_QUOTES.
func (myDialect) ReportedGrant(mode []byte) (engine.GrantMode, bool) {
	return trackedGrant(mode), foldContains(mode, "ansi_quotes")
}

// DatabaseName is the session's database as the server names one the
// protocol sends (schemaName).
func (myDialect) DatabaseName(name []byte) string { return schemaName(name) }

// leadsWith reports whether sql's first word, after spaces, is one of ws
// (in any case).
func leadsWith(sql []byte, ws ...string) bool {
	i := 0
	for i < len(sql) && isSpace(sql[i]) {
		i++
	}
	j := i
	for j < len(sql) && (sql[j]|0x20 >= 'a' && sql[j]|0x20 <= 'z') {
		j++
	}
	for _, w := range ws {
		if bytes.EqualFold(sql[i:j], []byte(w)) {
			return true
		}
	}
	return false
}

// lexSensitive reports whether a text may change the lexing state: it
// names sql_mode or the character set. A byte search, no parse: a false
// positive only marks the state unconfirmed until the answer.
func lexSensitive(sql []byte) bool {
	return foldContains(sql, "sql_mode") || namesWord(sql)
}

// namesWord reports whether a text may name the client character set:
// NAMES, CHARACTER, CHARSET, or CHAR and SET (SET CHAR SET gbk).
func namesWord(sql []byte) bool {
	return foldContains(sql, "names") || foldContains(sql, "character") || foldContains(sql, "charset") ||
		foldContains(sql, "char") && foldContains(sql, "set")
}

// foldContains reports whether s contains word (lower-case ASCII) in any
// case, without allocating.
func foldContains(s []byte, word string) bool {
	n := len(word)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c |= 0x20 // only letters fold: "_" | 0x20 is DEL
			}
			if c != word[j] {
				break
			}
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

// namesCharset is the character set a statement sets as the text says,
// when its answer does not report it (session tracking): "" when the text
// does not set it, engine.CharsetUnknown when it may and sqlfw cannot know to
// what (setCharset). Only a text that may set a variable counts
// (mayBeSet).
func namesCharset(sql []byte) string {
	if body, ok := immediateText(sql); ok {
		sql = body // EXECUTE IMMEDIATE 'SET ...' is that SET, run now
	}
	if !namesWord(sql) || !mayBeSet(sql) {
		return ""
	}
	return setCharset(sql)
}

// mayBeSet reports whether a text may set a variable: it starts with SET
// (after any of the spaces the server skips), or holds several
// statements, a comment, an EXECUTE (IMMEDIATE 'SET NAMES ...') or a byte
// above 0x7F (so that SELECT @@sql_mode, or a column called names, does
// not).
func mayBeSet(sql []byte) bool {
	t := bytes.TrimLeft(sql, " \t\r\n\v\f")
	return len(t) >= 4 && foldContains(t[:4], "set") && isSpace(t[3]) || foldContains(sql, "execute") || hasHighByte(sql) ||
		bytes.ContainsAny(sql, ";#") || bytes.Contains(sql, []byte("/*")) || bytes.Contains(sql, []byte("--"))
}

// hasHighByte reports whether sql has a byte above 0x7F (in latin1 0xA0
// is a space to the server: SET\xa0NAMES\xa0gbk).
func hasHighByte(sql []byte) bool {
	for _, c := range sql {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// setCharset reads one SET statement as the server does, for the client
// character set it leaves the session in: "" when it does not change it,
// the new one's name (lower case) when a literal says it, engine.CharsetUnknown
// otherwise. The forms read (keywords in any case, with the spaces and
// plain comments the server skips between tokens, and at most one
// trailing ";"), as a comma-separated list of assignments:
//
//	NAMES x [COLLATE y]          CHARACTER SET x, CHAR SET x, CHARSET x
//	[SESSION | LOCAL] character_set_client {= | :=} x
//	@@[session. | local.]character_set_client {= | :=} x
//	GLOBAL character_set_client = x, @@global.character_set_client = x (the session's is unchanged)
//	any other variable, @user or system, {= | :=} one token: a name, a
//	number, a string without backslash or inner quote, @v or @@[scope.]v
//
// where x is a name or a quoted name (letters, digits, "_"). Unknown: a
// value that is DEFAULT, a number, a variable or an expression; a GLOBAL
// before an unscoped character_set_client (whether the scope carries over
// is not read); any other statement, several statements, an executable
// comment (/*! */, /*M! */, /*+ */), a byte above 0x7F (a space in latin1
// to the server). Examples: "SET @old = @@character_set_client" gives "";
// "SET character_set_client = 'utf8';" gives utf8; "SET NAMES utf8,
// character_set_connection = latin1" gives utf8; "SET
// character_set_client = @old" gives unknown.
func setCharset(sql []byte) string {
	charset := ""
	ok := walkSet(sql, func(x *setLexer, it setAssign) bool {
		switch {
		case it.charset != "":
			charset = it.charset
		case !bytes.EqualFold(it.name, []byte("character_set_client")):
			// another variable: one token
			_, k := x.next()
			return !(k == setTokOther || k == setTokPunct || k == setTokEnd)
		case it.scope == "global":
			_, ok := x.charsetName()
			return ok
		case it.scope == "" && it.global:
			return false
		default:
			cs, ok := x.charsetName()
			if !ok {
				return false
			}
			charset = cs
		}
		return true
	})
	if !ok {
		return engine.CharsetUnknown
	}
	return charset
}

// setAssign is one assignment of a SET statement's list as walkSet reads it:
// a character set (NAMES, CHARSET, CHARACTER SET, CHAR SET: charset), or a
// variable with its scope ("", session, local, global; name nil for a user
// variable), whose value the visitor reads; global says whether an earlier
// item was GLOBAL.
type setAssign struct {
	charset string
	scope   string
	name    []byte
	global  bool
}

// walkSet reads sql as one SET statement of the forms setCharset
// documents, calling item for each assignment: for a variable, item reads
// its value from x after the "=" or ":=" and returns false where the value
// is unknown. walkSet returns false where item did, or where the text is
// not such a statement (any other statement, SET STATEMENT, SET PASSWORD,
// SET ROLE, several statements, an executable comment, a byte above 0x7F).
func walkSet(sql []byte, item func(x *setLexer, it setAssign) bool) bool {
	if hasHighByte(sql) {
		return false
	}
	x := setLexer{s: sql}
	if w, k := x.next(); k != setTokWord || !bytes.EqualFold(w, []byte("set")) {
		return false
	}
	global := false
	for {
		w, k := x.next()
		switch {
		case k == setTokWord && (bytes.EqualFold(w, []byte("names")) || bytes.EqualFold(w, []byte("charset"))):
			cs, ok := x.charsetName()
			if !ok {
				return false
			}
			if bytes.EqualFold(w, []byte("names")) {
				if c, k := x.peek(); k == setTokWord && bytes.EqualFold(c, []byte("collate")) {
					x.next()
					if _, ok := x.charsetName(); !ok {
						return false
					}
				}
			}
			if !item(&x, setAssign{charset: cs, global: global}) {
				return false
			}
		case k == setTokWord && (bytes.EqualFold(w, []byte("character")) || bytes.EqualFold(w, []byte("char"))):
			if s, k := x.next(); k != setTokWord || !bytes.EqualFold(s, []byte("set")) {
				return false
			}
			cs, ok := x.charsetName()
			if !ok || !item(&x, setAssign{charset: cs, global: global}) {
				return false
			}
		default:
			// [scope] variable {= | :=} value
			scope := ""
			if k == setTokWord && (bytes.EqualFold(w, []byte("session")) || bytes.EqualFold(w, []byte("local")) || bytes.EqualFold(w, []byte("global"))) {
				scope = string(bytes.ToLower(w))
				w, k = x.next()
				if k != setTokWord && k != setTokBackquoted {
					return false
				}
			}
			switch k {
			case setTokWord, setTokBackquoted:
			case setTokSysVar:
				if scope != "" {
					return false
				}
				scope, w = string(x.sysScope), x.sysName
			case setTokUserVar:
				w = nil // never a system variable
			default:
				return false
			}
			if scope == "global" {
				global = true
			}
			if a, k := x.next(); k != setTokPunct || !(string(a) == "=" || string(a) == ":=") {
				return false // SET STATEMENT, SET PASSWORD, SET ROLE, ...
			}
			if !item(&x, setAssign{scope: scope, name: w, global: global}) {
				return false
			}
		}
		switch p, k := x.next(); {
		case k == setTokPunct && string(p) == ",":
			continue
		case k == setTokPunct && string(p) == ";":
			if _, k := x.next(); k != setTokEnd {
				return false
			}
		case k != setTokEnd:
			return false
		}
		return true
	}
}

// namesMode is what a statement leaves NO_AUTO_CREATE_USER at as the text
// says, when its answer does not report sql_mode: engine.GrantSame when the text
// does not name sql_mode or cannot set a variable (mayBeSet), else
// setSQLMode's reading (of the literal's SET for EXECUTE IMMEDIATE 'SET
// ...': immediateText).
func namesMode(sql []byte) engine.GrantMode {
	if body, ok := immediateText(sql); ok {
		sql = body
	}
	if !foldContains(sql, "sql_mode") || !mayBeSet(sql) {
		return engine.GrantSame
	}
	return setSQLMode(sql)
}

// setSQLMode reads one SET statement as the server does (the forms
// setCharset reads), for what it leaves the session's NO_AUTO_CREATE_USER
// at: engine.GrantSame when it sets no session sql_mode, engine.GrantKept or
// engine.GrantCreates when a literal says (a string or a name, its modes as
// MariaDB 10.11 expands them: TRADITIONAL, ORACLE and MAXDB hold
// NO_AUTO_CREATE_USER), engine.GrantKept for DEFAULT (the global mode),
// engine.GrantUnknown otherwise: a number, a variable, an expression, SET
// STATEMENT, an unscoped sql_mode after GLOBAL, any other statement.
// Examples: "SET sql_mode = ”" gives engine.GrantCreates; "SET @@session.sql_mode
// = 'TRADITIONAL'" engine.GrantKept; "SET GLOBAL sql_mode = ”" engine.GrantSame; "SET
// sql_mode = @old" engine.GrantUnknown.
func setSQLMode(sql []byte) engine.GrantMode {
	grant := engine.GrantSame
	ok := walkSet(sql, func(x *setLexer, it setAssign) bool {
		if it.charset != "" {
			return true
		}
		v, k := x.next()
		if !bytes.EqualFold(it.name, []byte("sql_mode")) {
			return !(k == setTokOther || k == setTokPunct || k == setTokEnd) // an expression (or nothing)
		}
		switch {
		case it.scope == "global":
		case it.scope == "" && it.global:
			return false
		case k == setTokWord && bytes.EqualFold(v, []byte("default")):
			grant = engine.GrantKept
		case (k == setTokWord || k == setTokString || k == setTokBackquoted) && !(len(v) > 0 && v[0] >= '0' && v[0] <= '9'):
			grant = modeGrant(v)
		default:
			return false
		}
		return true
	})
	if !ok {
		return engine.GrantUnknown
	}
	return grant
}

// modeGrant is what an sql_mode value (a comma-separated list of modes,
// in any case, as SET takes it) says of NO_AUTO_CREATE_USER.
func modeGrant(v []byte) engine.GrantMode {
	for len(v) > 0 {
		var m []byte
		m, v, _ = bytes.Cut(v, []byte(","))
		m = bytes.TrimRight(m, " ") // the server ignores trailing spaces
		for _, w := range noAutoCreateModes {
			if bytes.EqualFold(m, []byte(w)) {
				return engine.GrantKept
			}
		}
	}
	return engine.GrantCreates
}

// noAutoCreateModes are the modes that hold NO_AUTO_CREATE_USER on MariaDB
// 10.11 (SET sql_mode = 'x'; SELECT @@sql_mode).
var noAutoCreateModes = [...]string{"NO_AUTO_CREATE_USER", "TRADITIONAL", "ORACLE", "MAXDB"}

// trackedGrant is what an sql_mode the server reported says of
// NO_AUTO_CREATE_USER.
func trackedGrant(mode []byte) engine.GrantMode {
	if modeGrant(mode) == engine.GrantKept {
		return engine.GrantKept
	}
	return engine.GrantCreates
}

// Token kinds of setLexer.
const (
	setTokEnd        = iota
	setTokWord       // letters, digits, "_", "$"
	setTokString     // '…' or "…" without backslash or inner quote
	setTokBackquoted // `…` without inner backquote
	setTokUserVar    // @name
	setTokSysVar     // @@name, @@scope.name
	setTokPunct      // = := , ;
	setTokOther      // anything else, and a comment or token sqlfw does not read
)

// setLexer splits an ASCII SET statement into the tokens setCharset
// reads, skipping spaces and plain comments as the server does.
type setLexer struct {
	s                 []byte
	i                 int
	sysScope, sysName []byte // of the last setTokSysVar
}

// skip passes spaces and comments; false for a comment the server may
// read otherwise (executable, hint) or that does not end.
func (x *setLexer) skip() bool {
	for x.i < len(x.s) {
		c, rest := x.s[x.i], x.s[x.i:]
		switch {
		case isSpace(c):
			x.i++
		case c == '#', c == '-' && len(rest) >= 2 && rest[1] == '-' && (len(rest) == 2 || rest[2] == ' ' || rest[2] == '\t' || rest[2] == '\n' || rest[2] == '\r'):
			n := bytes.IndexByte(rest, '\n')
			if n < 0 {
				x.i = len(x.s)
			} else {
				x.i += n + 1
			}
		case c == '/' && len(rest) >= 2 && rest[1] == '*':
			if len(rest) >= 3 && (rest[2] == '!' || rest[2] == 'M' || rest[2] == '+') {
				return false
			}
			n := bytes.Index(rest[2:], []byte("*/"))
			if n < 0 {
				return false
			}
			x.i += n + 4
		default:
			return true
		}
	}
	return true
}

func (x *setLexer) peek() ([]byte, int) {
	i := x.i
	t, k := x.next()
	x.i = i
	return t, k
}

func (x *setLexer) next() ([]byte, int) {
	if !x.skip() {
		x.i = len(x.s)
		return nil, setTokOther
	}
	if x.i >= len(x.s) {
		return nil, setTokEnd
	}
	s, i := x.s, x.i
	switch c := s[i]; {
	case isASCIIName(c):
		j := i
		for j < len(s) && isASCIIName(s[j]) {
			j++
		}
		x.i = j
		return s[i:j], setTokWord
	case c == '\'' || c == '"' || c == '`':
		j := i + 1
		for j < len(s) && s[j] != c && s[j] != '\\' {
			j++
		}
		if j >= len(s) || s[j] != c || j+1 < len(s) && s[j+1] == c {
			x.i = len(s)
			return nil, setTokOther
		}
		x.i = j + 1
		if c == '`' {
			return s[i+1 : j], setTokBackquoted
		}
		return s[i+1 : j], setTokString
	case c == '@':
		if i+1 < len(s) && s[i+1] == '@' {
			x.i = i + 2
			w, k := x.word()
			if k != setTokWord {
				return nil, setTokOther
			}
			x.sysScope, x.sysName = nil, w
			if x.i < len(s) && s[x.i] == '.' {
				x.i++
				n, k := x.word()
				if k != setTokWord || !(bytes.EqualFold(w, []byte("session")) || bytes.EqualFold(w, []byte("local")) || bytes.EqualFold(w, []byte("global"))) {
					return nil, setTokOther
				}
				x.sysScope, x.sysName = bytes.ToLower(w), n
			}
			return s[i:x.i], setTokSysVar
		}
		x.i = i + 1
		if _, k := x.word(); k != setTokWord {
			return nil, setTokOther
		}
		return s[i:x.i], setTokUserVar
	case c == '=' || c == ',' || c == ';':
		x.i = i + 1
		return s[i : i+1], setTokPunct
	case c == ':' && i+1 < len(s) && s[i+1] == '=':
		x.i = i + 2
		return s[i : i+2], setTokPunct
	}
	x.i = len(s)
	return nil, setTokOther
}

// word is the name that starts right here (no space before it).
func (x *setLexer) word() ([]byte, int) {
	j := x.i
	for j < len(x.s) && isASCIIName(x.s[j]) {
		j++
	}
	if j == x.i {
		return nil, setTokOther
	}
	w := x.s[x.i:j]
	x.i = j
	return w, setTokWord
}

// charsetName reads a character set or collation name as SET NAMES and a
// character-set variable take it: a name or a quoted name, not DEFAULT
// and not a number (a number names a character set by its id).
func (x *setLexer) charsetName() (string, bool) {
	w, k := x.next()
	if k != setTokWord && k != setTokString && k != setTokBackquoted || len(w) == 0 || len(w) > 32 ||
		w[0] >= '0' && w[0] <= '9' || bytes.EqualFold(w, []byte("default")) {
		return "", false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", false
		}
	}
	return string(bytes.ToLower(w)), true
}

func isASCIIName(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// immediateText returns the text of EXECUTE IMMEDIATE 'text' [;] when sql
// is only that, with one single-quoted literal without a backslash or an
// inner quote (so that its text is the same in every sql_mode: a
// double-quoted one is a name under ANSI_QUOTES): the statement the server
// runs now, which namesCharset and namesMode read as they read it sent
// alone. Any other EXECUTE IMMEDIATE is left as it is, and so read as a
// statement that may set the lexing state to what sqlfw cannot know.
// Example: "EXECUTE IMMEDIATE 'SET NAMES gbk'" gives "SET NAMES gbk".
func immediateText(sql []byte) ([]byte, bool) {
	x := setLexer{s: sql}
	if w, k := x.next(); k != setTokWord || !bytes.EqualFold(w, []byte("execute")) {
		return nil, false
	}
	if w, k := x.next(); k != setTokWord || !bytes.EqualFold(w, []byte("immediate")) {
		return nil, false
	}
	if !x.skip() || x.i >= len(sql) || sql[x.i] != '\'' {
		return nil, false
	}
	body, k := x.next()
	if k != setTokString {
		return nil, false
	}
	switch p, k := x.next(); {
	case k == setTokPunct && string(p) == ";":
		if _, k := x.next(); k != setTokEnd {
			return nil, false
		}
	case k != setTokEnd:
		return nil, false
	}
	return body, true
}

// readUse reads a USE statement in the one form engine/mysql lets through
// (its lex.go simpleUse): the whole text is USE, a name (bare, or quoted
// with backquotes) and at most a ";", with spaces between. Example:
// "USE `my db`;" gives "my db". The server says nothing of a USE to a
// client without session tracking, so the session's database is followed
// from the text.
func readUse(sql []byte) (string, bool) {
	t := bytes.TrimLeft(sql, " \t\r\n\v\f")
	if len(t) < 4 || !foldContains(t[:3], "use") || !isSpace(t[3]) {
		return "", false
	}
	t = bytes.TrimLeft(t[3:], " \t\r\n\v\f")
	var name []byte
	switch {
	case len(t) > 0 && t[0] == '`':
		i := 1
		for ; i < len(t); i++ {
			if t[i] == '`' {
				if i+1 < len(t) && t[i+1] == '`' {
					name = append(name, '`')
					i++
					continue
				}
				break
			}
			name = append(name, t[i])
		}
		if i >= len(t) || len(name) == 0 {
			return "", false
		}
		t = t[i+1:]
	default:
		i := 0
		for i < len(t) && isNameByte(t[i]) {
			i++
		}
		if i == 0 {
			return "", false
		}
		name, t = t[:i], t[i:]
	}
	t = bytes.TrimLeft(t, " \t\r\n\v\f")
	if len(t) > 0 && t[0] == ';' {
		t = bytes.TrimLeft(t[1:], " \t\r\n\v\f")
	}
	if len(t) != 0 {
		return "", false
	}
	return schemaName(name), true
}

// schemaName is the session's database as the server names it:
// information_schema in any case is information_schema (USE
// INFORMATION_SCHEMA works and DATABASE() says information_schema), so
// that a rule scoped to it sees it.
func schemaName(b []byte) string {
	if len(b) == len("information_schema") && foldContains(b, "information_schema") {
		return "information_schema"
	}
	return string(b)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}
