package mysql

// The lexing state the engine reads a session's text with
// (engine.LexState): the part of sql_mode that changes lexing
// (NO_BACKSLASH_ESCAPES, ANSI_QUOTES) and the client character set, which
// decides whether a multibyte character can hide a quote or backslash byte
// (big5, cp932, gbk, sjis, gb18030). It is followed from what the server
// says, never guessed from the statements when the server says it:
//
//   - the handshake response's collation gives the first character set,
//     and a COM_CHANGE_USER's the next; COM_RESET_CONNECTION goes back to
//     the login's (measured on MariaDB 10.11);
//   - every OK and EOF carries the status flags SERVER_STATUS_NO_BACKSLASH_ESCAPES
//     and, on MariaDB, SERVER_STATUS_ANSI_QUOTES: the result of a SET
//     sql_mode is known from its own OK, however it was set (a prepared
//     SET, a SET STATEMENT, a variable), and these flags win over session
//     tracking, which the client can turn off by SET
//     session_track_system_variables;
//   - under session tracking (CLIENT_SESSION_TRACK) an OK reports the new
//     sql_mode and character_set_client when a statement changes them.
//
// A statement that names the character set (SET NAMES, SET CHARACTER SET,
// character_set_client) and whose OK does not report the new one is read
// in its one simple form, SET NAMES x [COLLATE y]; any other makes the
// character set unknown, which the engine treats as one whose bytes it
// cannot read (non-ASCII text is then denied). So does an EXECUTE, once
// the session has PREPAREd a text that names the character set or comes
// from a variable or an expression, an EXECUTE IMMEDIATE of text assembled
// at run time (the engine's Verdict.DynamicSQL: CONCAT('SET NA','MES gbk')
// names nothing), and a COM_STMT_EXECUTE of a prepared SET that names it.
// The rest of sql_mode, which no status flag reports, matters for one
// thing: whether NO_AUTO_CREATE_USER is in force, without which a GRANT
// to an account that does not exist creates it (engine/mysql grantee.go).
// It is followed like the character set: from session tracking when the
// server reports sql_mode (MariaDB 10.11 and MySQL do not by default:
// session_track_system_variables lacks it), else from the SET statements
// the session sends (setSQLMode), and unknown when set from a variable, an
// expression, a prepared statement or text assembled at run time, or when
// a statement that names it fails. At login, and after COM_CHANGE_USER and
// COM_RESET_CONNECTION, the session's mode is the global one, which sqlfw
// assumes holds NO_AUTO_CREATE_USER, as the server's default does; SET
// GLOBAL sql_mode is denied (no-server-settings), so only the DBA changes
// it (docs/policy.md). A procedure, trigger or compound statement that
// sets sql_mode does so for its own body only (the server restores the
// caller's; measured on MariaDB 10.11).
//
// On MySQL, which has no ANSI_QUOTES status flag, ANSI_QUOTES set without
// session tracking of sql_mode is not seen. While a statement that may
// change either is in flight, the state is Unconfirmed: a text sent before
// its answer is read with suspicion (engine/mysql lex.go).

import (
	"bytes"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// charsetUnknown is the character set of a session whose SET NAMES sqlfw
// could not read.
const charsetUnknown = "unknown"

// sqlModes are the sql_mode values the status flags amount to, indexed by
// NO_BACKSLASH_ESCAPES | ANSI_QUOTES<<1 (constant strings: no allocation).
var sqlModes = [4]string{"", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES"}

// collationCharsets names the character sets of the handshake's collation
// ids (MySQL's and MariaDB's INFORMATION_SCHEMA.COLLATIONS) that the engine
// reads otherwise than UTF-8: the multibyte ones it converts along the
// server's character boundaries (engine/mysql charset.go: big5, sjis, gbk,
// cp932 and gb18030, whose characters can contain a quote or backslash
// byte, and euckr, ujis, eucjpms and gb2312), and the
// single-byte ones in which a byte above 0x7F is a space to the server
// (0xA0 in latin1 and most ISO sets, 0xFF in cp852, cp866 and keybcs2;
// engine/mysql highSpace). Every other id reads as UTF-8 does.
var collationCharsets = map[byte]string{
	1: "big5", 84: "big5", 13: "sjis", 88: "sjis", 28: "gbk", 87: "gbk",
	95: "cp932", 96: "cp932", 248: "gb18030", 249: "gb18030", 250: "gb18030",
	19: "euckr", 85: "euckr", 12: "ujis", 91: "ujis", 97: "eucjpms", 98: "eucjpms", 24: "gb2312", 86: "gb2312",
	5: "latin1", 8: "latin1", 15: "latin1", 31: "latin1", 47: "latin1", 48: "latin1", 49: "latin1", 94: "latin1",
	2: "latin2", 9: "latin2", 21: "latin2", 27: "latin2", 77: "latin2",
	30: "latin5", 78: "latin5", 20: "latin7", 41: "latin7", 42: "latin7", 79: "latin7",
	26: "cp1250", 34: "cp1250", 44: "cp1250", 66: "cp1250", 99: "cp1250",
	25: "greek", 70: "greek", 16: "hebrew", 71: "hebrew", 32: "armscii8", 64: "armscii8",
	3: "dec8", 69: "dec8", 92: "geostd8", 93: "geostd8",
	40: "cp852", 81: "cp852", 36: "cp866", 68: "cp866", 37: "keybcs2", 73: "keybcs2",
}

// collationCharset is collationCharsets for a two-byte id (COM_CHANGE_USER):
// MariaDB's NO PAD collations are the PAD ones' ids plus 1024
// (gbk_chinese_nopad_ci is 1052). An id of 0 (none sent) is unknown.
func collationCharset(id uint16) string {
	if id >= 1024 && id < 2048 {
		id -= 1024
	}
	switch {
	case id == 0:
		return charsetUnknown
	case id > 255:
		return ""
	}
	return collationCharsets[byte(id)]
}

// knownCollation reports whether every server of the kind knows collation
// id, so that it uses it for the session: the ids below 256 MariaDB 10.11
// has (INFORMATION_SCHEMA.COLLATIONS), and on MySQL also 248-255 (gb18030,
// utf8mb4_0900_*). Newer servers know more; for those the reading is
// checked against the fallback (clientCharset).
func knownCollation(id uint16, mariadb bool) bool {
	switch {
	case id >= 1024 && id < 2048:
		return knownCollation(id-1024, mariadb) // NO PAD
	case id >= 1 && id <= 16, id >= 18 && id <= 75, id >= 77 && id <= 99, id >= 101 && id <= 124,
		id >= 128 && id <= 151, id >= 159 && id <= 183, id >= 192 && id <= 215, id >= 223 && id <= 247:
		return true
	case id >= 248 && id <= 255:
		return !mariadb
	}
	return false
}

// clientCharset is the character set a session's lexing follows for the
// collation id of a handshake response or COM_CHANGE_USER: the id's, when
// the server knows it; for one it may not know (0, MySQL 8's 255 on
// MariaDB) the server's default, the greeting's, when the two read alike,
// else unknown. Example: 255 on a MariaDB whose default is latin1 is read
// as latin1 by the server, as UTF-8 by a client that sent it: unknown.
func (l *lexState) clientCharset(id uint16) string {
	fallback := collationCharsets[l.greeting]
	switch cs := collationCharset(id); {
	case id == 0:
		return fallback
	case knownCollation(id, l.mariadb), cs == fallback:
		return cs
	}
	return charsetUnknown
}

// lexState is the tracker's state, under the session's mu.
type lexState struct {
	mode, charset string
	// login is the character set of the login (the handshake's or the
	// last COM_CHANGE_USER's), which COM_RESET_CONNECTION goes back to.
	login string
	// mariadb: the server's status flags say ANSI_QUOTES.
	mariadb bool
	// greeting is the collation id of the server's greeting: its default
	// character set, which it uses for a collation id it does not know.
	greeting byte
	// modeTracked: the server reported sql_mode itself (session
	// tracking), which is where MySQL's ANSI_QUOTES is read from.
	modeTracked bool
	// prepCharset: the session PREPAREd a text that may set the
	// character set or sql_mode (toServer's, not under mu).
	prepCharset bool
	// grant is what the session's sql_mode says of a GRANT to an account
	// that does not exist (grantMode; grantSame: the login's).
	grant grantMode
}

// grantMode is what an sql_mode says of a GRANT to an account that does
// not exist, which creates it unless NO_AUTO_CREATE_USER is in force
// (engine.LexState.AutoCreateUser); as a statement's, what it leaves the
// session's at.
type grantMode uint8

const (
	// grantSame: the statement leaves it as it was; the session's: the
	// login's, the global sql_mode, which sqlfw assumes holds
	// NO_AUTO_CREATE_USER (the server's default).
	grantSame    grantMode = iota
	grantKept              // NO_AUTO_CREATE_USER is in force
	grantCreates           // it is not: a GRANT creates its grantee
	grantUnknown           // sql_mode was set to what sqlfw cannot know (a variable, an expression)
)

// autoCreate reports whether a GRANT may create its grantee in the
// session: the mode lacks NO_AUTO_CREATE_USER or is not known.
func (l *lexState) autoCreate() bool { return l.grant == grantCreates || l.grant == grantUnknown }

// lexSensitive reports whether a text may change the lexing state: it
// names sql_mode or the character set. A byte search, no parse: a false
// positive only marks the state unconfirmed until the answer.
func lexSensitive(sql []byte) bool {
	return containsFold(sql, "sql_mode") || namesWord(sql)
}

// namesWord reports whether a text may name the client character set:
// NAMES, CHARACTER, CHARSET, or CHAR and SET (SET CHAR SET gbk).
func namesWord(sql []byte) bool {
	return containsFold(sql, "names") || containsFold(sql, "character") || containsFold(sql, "charset") ||
		containsFold(sql, "char") && containsFold(sql, "set")
}

// containsFold reports whether s contains word (lower-case ASCII) in any
// case, without allocating.
func containsFold(s []byte, word string) bool {
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
// does not set it, charsetUnknown when it may and sqlfw cannot know to
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
	return len(t) >= 4 && containsFold(t[:4], "set") && isSpace(t[3]) || containsFold(sql, "execute") || hasHighByte(sql) ||
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
// the new one's name (lower case) when a literal says it, charsetUnknown
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
	ok := walkSet(sql, func(x *setLexer, it setItem) bool {
		switch {
		case it.charset != "":
			charset = it.charset
		case !bytes.EqualFold(it.name, []byte("character_set_client")):
			// another variable: one token
			_, k := x.next()
			return !(k == tokOther || k == tokPunct || k == tokEnd)
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
		return charsetUnknown
	}
	return charset
}

// setItem is one assignment of a SET statement's list as walkSet reads it:
// a character set (NAMES, CHARSET, CHARACTER SET, CHAR SET: charset), or a
// variable with its scope ("", session, local, global; name nil for a user
// variable), whose value the visitor reads; global says whether an earlier
// item was GLOBAL.
type setItem struct {
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
func walkSet(sql []byte, item func(x *setLexer, it setItem) bool) bool {
	if hasHighByte(sql) {
		return false
	}
	x := setLexer{s: sql}
	if w, k := x.next(); k != tokWord || !bytes.EqualFold(w, []byte("set")) {
		return false
	}
	global := false
	for {
		w, k := x.next()
		switch {
		case k == tokWord && (bytes.EqualFold(w, []byte("names")) || bytes.EqualFold(w, []byte("charset"))):
			cs, ok := x.charsetName()
			if !ok {
				return false
			}
			if bytes.EqualFold(w, []byte("names")) {
				if c, k := x.peek(); k == tokWord && bytes.EqualFold(c, []byte("collate")) {
					x.next()
					if _, ok := x.charsetName(); !ok {
						return false
					}
				}
			}
			if !item(&x, setItem{charset: cs, global: global}) {
				return false
			}
		case k == tokWord && (bytes.EqualFold(w, []byte("character")) || bytes.EqualFold(w, []byte("char"))):
			if s, k := x.next(); k != tokWord || !bytes.EqualFold(s, []byte("set")) {
				return false
			}
			cs, ok := x.charsetName()
			if !ok || !item(&x, setItem{charset: cs, global: global}) {
				return false
			}
		default:
			// [scope] variable {= | :=} value
			scope := ""
			if k == tokWord && (bytes.EqualFold(w, []byte("session")) || bytes.EqualFold(w, []byte("local")) || bytes.EqualFold(w, []byte("global"))) {
				scope = string(bytes.ToLower(w))
				w, k = x.next()
				if k != tokWord && k != tokBackquoted {
					return false
				}
			}
			switch k {
			case tokWord, tokBackquoted:
			case tokSysVar:
				if scope != "" {
					return false
				}
				scope, w = string(x.sysScope), x.sysName
			case tokUserVar:
				w = nil // never a system variable
			default:
				return false
			}
			if scope == "global" {
				global = true
			}
			if a, k := x.next(); k != tokPunct || !(string(a) == "=" || string(a) == ":=") {
				return false // SET STATEMENT, SET PASSWORD, SET ROLE, ...
			}
			if !item(&x, setItem{scope: scope, name: w, global: global}) {
				return false
			}
		}
		switch p, k := x.next(); {
		case k == tokPunct && string(p) == ",":
			continue
		case k == tokPunct && string(p) == ";":
			if _, k := x.next(); k != tokEnd {
				return false
			}
		case k != tokEnd:
			return false
		}
		return true
	}
}

// namesMode is what a statement leaves NO_AUTO_CREATE_USER at as the text
// says, when its answer does not report sql_mode: grantSame when the text
// does not name sql_mode or cannot set a variable (mayBeSet), else
// setSQLMode's reading (of the literal's SET for EXECUTE IMMEDIATE 'SET
// ...': immediateText).
func namesMode(sql []byte) grantMode {
	if body, ok := immediateText(sql); ok {
		sql = body
	}
	if !containsFold(sql, "sql_mode") || !mayBeSet(sql) {
		return grantSame
	}
	return setSQLMode(sql)
}

// setSQLMode reads one SET statement as the server does (the forms
// setCharset reads), for what it leaves the session's NO_AUTO_CREATE_USER
// at: grantSame when it sets no session sql_mode, grantKept or
// grantCreates when a literal says (a string or a name, its modes as
// MariaDB 10.11 expands them: TRADITIONAL, ORACLE and MAXDB hold
// NO_AUTO_CREATE_USER), grantKept for DEFAULT (the global mode),
// grantUnknown otherwise: a number, a variable, an expression, SET
// STATEMENT, an unscoped sql_mode after GLOBAL, any other statement.
// Examples: "SET sql_mode = ”" gives grantCreates; "SET @@session.sql_mode
// = 'TRADITIONAL'" grantKept; "SET GLOBAL sql_mode = ”" grantSame; "SET
// sql_mode = @old" grantUnknown.
func setSQLMode(sql []byte) grantMode {
	grant := grantSame
	ok := walkSet(sql, func(x *setLexer, it setItem) bool {
		if it.charset != "" {
			return true
		}
		v, k := x.next()
		if !bytes.EqualFold(it.name, []byte("sql_mode")) {
			return !(k == tokOther || k == tokPunct || k == tokEnd) // an expression (or nothing)
		}
		switch {
		case it.scope == "global":
		case it.scope == "" && it.global:
			return false
		case k == tokWord && bytes.EqualFold(v, []byte("default")):
			grant = grantKept
		case (k == tokWord || k == tokString || k == tokBackquoted) && !(len(v) > 0 && v[0] >= '0' && v[0] <= '9'):
			grant = modeGrant(v)
		default:
			return false
		}
		return true
	})
	if !ok {
		return grantUnknown
	}
	return grant
}

// modeGrant is what an sql_mode value (a comma-separated list of modes,
// in any case, as SET takes it) says of NO_AUTO_CREATE_USER.
func modeGrant(v []byte) grantMode {
	for len(v) > 0 {
		var m []byte
		m, v, _ = bytes.Cut(v, []byte(","))
		m = bytes.TrimRight(m, " ") // the server ignores trailing spaces
		for _, w := range noAutoCreateModes {
			if bytes.EqualFold(m, []byte(w)) {
				return grantKept
			}
		}
	}
	return grantCreates
}

// noAutoCreateModes are the modes that hold NO_AUTO_CREATE_USER on MariaDB
// 10.11 (SET sql_mode = 'x'; SELECT @@sql_mode).
var noAutoCreateModes = [...]string{"NO_AUTO_CREATE_USER", "TRADITIONAL", "ORACLE", "MAXDB"}

// trackedGrant is what an sql_mode the server reported says of
// NO_AUTO_CREATE_USER.
func trackedGrant(mode []byte) grantMode {
	if modeGrant(mode) == grantKept {
		return grantKept
	}
	return grantCreates
}

// Token kinds of setLexer.
const (
	tokEnd        = iota
	tokWord       // letters, digits, "_", "$"
	tokString     // '…' or "…" without backslash or inner quote
	tokBackquoted // `…` without inner backquote
	tokUserVar    // @name
	tokSysVar     // @@name, @@scope.name
	tokPunct      // = := , ;
	tokOther      // anything else, and a comment or token sqlfw does not read
)

// setLexer splits an ASCII SET statement into the tokens setCharset
// reads, skipping spaces and plain comments as the server does.
type setLexer struct {
	s                 []byte
	i                 int
	sysScope, sysName []byte // of the last tokSysVar
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
		return nil, tokOther
	}
	if x.i >= len(x.s) {
		return nil, tokEnd
	}
	s, i := x.s, x.i
	switch c := s[i]; {
	case isASCIIName(c):
		j := i
		for j < len(s) && isASCIIName(s[j]) {
			j++
		}
		x.i = j
		return s[i:j], tokWord
	case c == '\'' || c == '"' || c == '`':
		j := i + 1
		for j < len(s) && s[j] != c && s[j] != '\\' {
			j++
		}
		if j >= len(s) || s[j] != c || j+1 < len(s) && s[j+1] == c {
			x.i = len(s)
			return nil, tokOther
		}
		x.i = j + 1
		if c == '`' {
			return s[i+1 : j], tokBackquoted
		}
		return s[i+1 : j], tokString
	case c == '@':
		if i+1 < len(s) && s[i+1] == '@' {
			x.i = i + 2
			w, k := x.word()
			if k != tokWord {
				return nil, tokOther
			}
			x.sysScope, x.sysName = nil, w
			if x.i < len(s) && s[x.i] == '.' {
				x.i++
				n, k := x.word()
				if k != tokWord || !(bytes.EqualFold(w, []byte("session")) || bytes.EqualFold(w, []byte("local")) || bytes.EqualFold(w, []byte("global"))) {
					return nil, tokOther
				}
				x.sysScope, x.sysName = bytes.ToLower(w), n
			}
			return s[i:x.i], tokSysVar
		}
		x.i = i + 1
		if _, k := x.word(); k != tokWord {
			return nil, tokOther
		}
		return s[i:x.i], tokUserVar
	case c == '=' || c == ',' || c == ';':
		x.i = i + 1
		return s[i : i+1], tokPunct
	case c == ':' && i+1 < len(s) && s[i+1] == '=':
		x.i = i + 2
		return s[i : i+2], tokPunct
	}
	x.i = len(s)
	return nil, tokOther
}

// word is the name that starts right here (no space before it).
func (x *setLexer) word() ([]byte, int) {
	j := x.i
	for j < len(x.s) && isASCIIName(x.s[j]) {
		j++
	}
	if j == x.i {
		return nil, tokOther
	}
	w := x.s[x.i:j]
	x.i = j
	return w, tokWord
}

// charsetName reads a character set or collation name as SET NAMES and a
// character-set variable take it: a name or a quoted name, not DEFAULT
// and not a number (a number names a character set by its id).
func (x *setLexer) charsetName() (string, bool) {
	w, k := x.next()
	if k != tokWord && k != tokString && k != tokBackquoted || len(w) == 0 || len(w) > 32 ||
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

// queryCharset is what a COM_QUERY text may do to the lexing state: lex,
// it may change it (the answer confirms it); charset, the character set it
// sets as far as the text says ("" none, charsetUnknown when it may);
// grant, what it leaves NO_AUTO_CREATE_USER at (namesMode).
// dynamic is the engine's Verdict.DynamicSQL: the text runs SQL assembled
// at run time, which may set the character set without naming it.
func (l *lexState) queryCharset(sql []byte, dynamic bool) (lex bool, charset string, grant grantMode) {
	// an EXECUTE may run a prepared SET sql_mode or SET NAMES: what is
	// sent before its answer is read as unconfirmed
	lex = lexSensitive(sql) || containsFold(sql, "execute") || dynamic
	if (lex || bytes.IndexByte(sql, '@') >= 0) && containsFold(sql, "prepare") {
		// PREPARE s FROM 'SET NAMES gbk' (or FROM @v, FROM
		// CONCAT('SET NA','MES gbk')): its EXECUTE changes the
		// character set without naming it
		l.prepCharset = true
	}
	if (l.prepCharset || dynamic) && containsFold(sql, "execute") {
		// (EXECUTE IMMEDIATE CONCAT('SET NA','MES gbk') runs its text now)
		return true, charsetUnknown, grantUnknown
	}
	if lex {
		charset, grant = namesCharset(sql), namesMode(sql)
	}
	return lex, charset, grant
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
	if w, k := x.next(); k != tokWord || !bytes.EqualFold(w, []byte("execute")) {
		return nil, false
	}
	if w, k := x.next(); k != tokWord || !bytes.EqualFold(w, []byte("immediate")) {
		return nil, false
	}
	if !x.skip() || x.i >= len(sql) || sql[x.i] != '\'' {
		return nil, false
	}
	body, k := x.next()
	if k != tokString {
		return nil, false
	}
	switch p, k := x.next(); {
	case k == tokPunct && string(p) == ";":
		if _, k := x.next(); k != tokEnd {
			return nil, false
		}
	case k != tokEnd:
		return nil, false
	}
	return body, true
}

// lexSettle updates the state after a complete response (under mu): from
// the status flags, the session-state changes of the last OK (tracked,
// when it had any) and, for a lex-sensitive statement whose new character
// set the OK did not report, from its text. COM_CHANGE_USER and
// COM_RESET_CONNECTION start afresh: the login's character set, sql_mode
// as the flags say, nothing tracked.
func (s *session) lexSettle(r *wire.Response, cur *pending, tracked []byte) {
	l := &s.lex
	charset, failed := l.charset, r.Failed()
	grant := l.grant
	if !failed && (cur.cmd == wire.ComChangeUser || cur.cmd == wire.ComResetConnection) {
		if cur.cmd == wire.ComChangeUser {
			l.login = cur.charset
		}
		charset, l.modeTracked = l.login, false
		grant = grantSame // the global sql_mode
	}
	var trackedMode []byte
	sawCharset := false
	for it := wire.NewSessionState(tracked); it.Next(); {
		if it.Type != wire.TrackSystemVariables {
			continue
		}
		name, value, ok := it.Variable()
		if !ok {
			continue
		}
		switch string(name) {
		case "sql_mode":
			trackedMode, l.modeTracked = value, true
		case "character_set_client":
			charset, sawCharset = string(bytes.ToLower(value)), true
		}
	}
	st := r.Status()
	i := 0
	if st&wire.StatusNoBackslashEscapes != 0 {
		i |= 1
	}
	switch {
	case l.mariadb:
		if st&wire.StatusAnsiQuotes != 0 {
			i |= 2
		}
	case trackedMode != nil:
		if containsFold(trackedMode, "ansi_quotes") {
			i |= 2
		}
	case l.modeTracked && (l.mode == sqlModes[2] || l.mode == sqlModes[3]):
		i |= 2 // MySQL: as last reported
	}
	mode := sqlModes[i]
	switch {
	case trackedMode != nil:
		grant = trackedGrant(trackedMode)
	case cur.grant != grantSame && failed:
		grant = grantUnknown // a text of several statements may have run its SET
	case cur.grant != grantSame:
		grant = cur.grant
	}
	if cur.cmd != wire.ComChangeUser && cur.charset != "" && !sawCharset && !failed {
		charset = cur.charset
	}
	if mode != l.mode || charset != l.charset || grant != l.grant {
		l.mode, l.charset, l.grant = mode, charset, grant
		s.loginChanged.Store(true)
	}
}

// useSchema reads a USE statement in the one form engine/mysql lets through
// (its lex.go simpleUse): the whole text is USE, a name (bare, or quoted
// with backquotes) and at most a ";", with spaces between. Example:
// "USE `my db`;" gives "my db". The server says nothing of a USE to a
// client without session tracking, so the session's database is followed
// from the text.
func useSchema(sql []byte) (string, bool) {
	t := bytes.TrimLeft(sql, " \t\r\n\v\f")
	if len(t) < 4 || !containsFold(t[:3], "use") || !isSpace(t[3]) {
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
	if len(b) == len("information_schema") && containsFold(b, "information_schema") {
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

// versionID is a greeting's version ("10.11.19-MariaDB-0+deb12u1",
// "8.0.36") as executable comments number it: major*10000 + minor*100 +
// patch, 101119 and 80036; 0 when it does not read as one (the engine then
// reads comments for every server).
func versionID(v []byte) uint32 {
	var parts [3]uint32
	n, digits := 0, 0
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			parts[n] = parts[n]*10 + uint32(c-'0')
			digits++
			if digits > 2 && n > 0 || digits > 3 {
				return 0
			}
		case c == '.' && n < 2 && digits > 0:
			n, digits = n+1, 0
		default:
			if n != 2 || digits == 0 {
				return 0
			}
			return parts[0]*10000 + parts[1]*100 + parts[2]
		}
	}
	if n != 2 || digits == 0 {
		return 0
	}
	return parts[0]*10000 + parts[1]*100 + parts[2]
}
