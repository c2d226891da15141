package mysql

import (
	"strings"
	"unsafe"

	"github.com/sqlfw/sqlfw/engine"
)

// read turns a message's text into the text the engine judges: one that
// TiDB's parser, in its default sql_mode, reads as a MySQL or MariaDB
// server reads the original in the session's sql_mode. It lexes the text
// with the server's rules (sql/sql_lex.cc):
//
//   - strings '...' and "..." (identifiers under ANSI_QUOTES), with
//     backslash escapes unless NO_BACKSLASH_ESCAPES and doubled quotes;
//     `identifiers` with doubled backticks;
//   - comments: # and "-- " (dash dash and a space or control character) to
//     the end of the line, /* ... */ not nested;
//   - executable comments: /*! ... */ and /*!NNNNN ... */, whose text the
//     server runs (for a version up to its own), MariaDB's /*M! ... */ and
//     /*M!NNNNNN ... */, which MariaDB runs and MySQL skips;
//   - optimizer hints /*+ ... */, which run nothing.
//
// Example: SELECT 1 /*!40101 , 2 */ -- note
// is judged as SELECT 1          , 2    -- note (the same length).
//
// What it rewrites, and why:
//   - /*!, and /*!NNNNN with a version every supported server (MySQL 5.7+,
//     MariaDB 10+) has, lose their markers: every server runs the text.
//   - When the session's server is known (LexState.ServerVersion and
//     MariaDB, from its greeting), every version comment is read as that
//     server reads it (serverRuns): the markers of one it runs are blanked,
//     one it skips becomes a plain comment (its ! and version blanked).
//   - Else a version comment some servers run and others skip (a 5-digit
//     version from 5.7 on; MariaDB's /*M!) is kept as /*!: TiDB reads its
//     text, and the prescan counts it as a comment trick, which the default
//     policy denies (no-comment-tricks). The text must end at the same */
//     whether it is run or skipped, else the text is not judged at all.
//   - /*T! (TiDB's own executable comment) is a plain comment to MySQL: it
//     is blanked so that TiDB does not read it either.
//   - "-- " followed by a control character is a comment to the server but
//     not to TiDB: the character becomes a space.
//   - Under NO_BACKSLASH_ESCAPES a backslash in a string is doubled; under
//     ANSI_QUOTES "x" becomes `x`.
//
// In a multibyte client character set (gbk, big5, sjis, cp932, gb18030,
// euckr, gb2312, ujis, eucjpms) the text is first converted to UTF-8 along
// the server's character boundaries (charset.go), and the converted text is
// read as above.
//
// A ";" inside an executable comment every server runs stays: the text is
// read as the server reads it without the markers. In a compound body
// (mariadb-dump's /*!50003 CREATE*/ ... TRIGGER ... BEGIN ...; END */) it
// separates the body's statements for the server too; at the top level
// (SELECT 1 /*!; DROP TABLE t */) MariaDB 10.11 rejects the whole text
// (measured), and the engine judges both statements.
//
// What it refuses (ok false, with a reason): NUL bytes outside strings,
// comments or quotes inside an executable comment, a ";" inside one some
// servers skip, a six-digit version after
// /*! (MySQL reads five digits and runs the sixth, MariaDB reads six),
// "--" followed by a byte above 0x7F (TiDB reads 0x85 and 0xA0 as spaces;
// single-byte character sets make others control characters or spaces to
// the server), a byte the client character set makes a space outside
// quotes (highSpace), an unterminated executable comment, and an optimizer
// hint with quotes in it.
//
// The text is returned as is, without allocating, when nothing needs
// rewriting. e2e TestMySQLReadAgreesWithServer checks this reading against
// MariaDB: the server runs a text as it runs the text read from it.

// rule ids of the denies read returns; they are not policy rules: the
// engine cannot judge a text whose reading it cannot know.
const (
	lexAmbiguousRuleID      = "lexing-ambiguous"
	lexUnconfirmedRuleID    = "lexing-state-unconfirmed"
	lexCharsetRuleID        = "client-charset-unsupported"
	lexCharsetInvalidRuleID = "client-charset-invalid"
)

// mode is the part of sql_mode that changes lexing.
type mode struct {
	noBackslash bool // NO_BACKSLASH_ESCAPES
	ansiQuotes  bool // ANSI_QUOTES (also in the combination modes ANSI, DB2, ORACLE, ... as servers expand them)
	// noAutoCreate: NO_AUTO_CREATE_USER (also in TRADITIONAL, ORACLE and
	// MAXDB, as MariaDB 10.11 expands them): a GRANT creates no account
	noAutoCreate bool
	// highSpace is the byte above 0x7F that the client character set's
	// lexer reads as a space (highSpace), 0 when none.
	highSpace byte
	// version is the server's version when known (engine.LexState's
	// ServerVersion), and mariadb whether it is MariaDB: executable
	// comments are then read as that server reads them (serverRuns).
	version int
	mariadb bool
}

// serverRuns reports whether the known server of m runs an executable
// comment: /*! with a version of digits digits (0: none) v, or MariaDB's
// /*M! (maria). MariaDB (sql/sql_lex.cc) runs /*!NNNNN up to its own
// version but not 50700-99999 (MySQL 5.7 and 8 syntax it may lack), and
// /*M!NNNNNN up to its own; MySQL runs /*!NNNNN up to its own and reads
// /*M! as a plain comment.
func (m mode) serverRuns(maria bool, digits, v int) bool {
	switch {
	case maria:
		return m.mariadb && (digits == 0 || v <= m.version)
	case digits == 0:
		return true
	case m.mariadb:
		return v <= m.version && (v < 50700 || v > 99999)
	}
	return v <= m.version
}

// highSpace is the byte above 0x7F that is a space to the server's lexer in
// a single-byte client character set, where the engine's parser reads it
// as part of a word (measured on MariaDB 10.11: SELECT<byte>1 runs), or 0.
// Example: in latin1 "WHERE b\xe9\xa0or(1)" is the column b\xe9 OR 1 to the
// server and a call of the function b\xe9\xa0or to the engine.
func highSpace(charset string) byte {
	switch strings.ToLower(charset) {
	case "latin1", "latin2", "latin5", "latin7", "cp1250", "greek", "hebrew", "armscii8", "dec8", "geostd8":
		return 0xa0
	case "cp866", "cp852", "keybcs2":
		return 0xff
	}
	return 0
}

// parseMode reads a sql_mode value as a server reports it (a
// comma-separated list, in any case). Combination modes are expanded by
// the server before it reports them, but a relay that tracks SET
// statements may pass one: those that include ANSI_QUOTES count.
func parseMode(s string) mode {
	var m mode
	for s != "" {
		var w string
		w, s, _ = strings.Cut(s, ",")
		w = strings.TrimSpace(w)
		switch {
		case strings.EqualFold(w, "NO_BACKSLASH_ESCAPES"):
			m.noBackslash = true
		case strings.EqualFold(w, "NO_AUTO_CREATE_USER"), strings.EqualFold(w, "TRADITIONAL"):
			m.noAutoCreate = true
		case strings.EqualFold(w, "ANSI_QUOTES"), strings.EqualFold(w, "ANSI"),
			strings.EqualFold(w, "DB2"), strings.EqualFold(w, "MAXDB"), strings.EqualFold(w, "MSSQL"),
			strings.EqualFold(w, "ORACLE"), strings.EqualFold(w, "POSTGRESQL"):
			m.ansiQuotes = true
			// MariaDB 10.11's ORACLE and MAXDB hold NO_AUTO_CREATE_USER
			m.noAutoCreate = m.noAutoCreate || strings.EqualFold(w, "ORACLE") || strings.EqualFold(w, "MAXDB")
		}
	}
	return m
}

// asciiSafeCharsets are the client character sets other than the
// multibyte ones charset.go converts whose text the engine reads byte for
// byte: UTF-8 and the single-byte sets, in which every byte below 0x80 is
// that ASCII character. (In big5, cp932, gbk, sjis and gb18030 a trail byte
// can be 0x5C, a backslash: "\xbf\x5c'" is one character and a quote to the
// server, a byte, an escape and an escaped quote to a byte-wise reader;
// charset.go reads them along the server's character boundaries.)
var asciiSafeCharsets = []string{
	"utf8mb4", "utf8", "utf8mb3", "latin1", "latin2", "latin5", "latin7", "ascii", "binary",
	"cp1250", "cp1251", "cp1256", "cp1257", "cp850", "cp852", "cp866", "koi8r", "koi8u",
	"greek", "hebrew", "armscii8", "geostd8", "keybcs2", "macce", "macroman", "swe7", "dec8",
	"hp8", "tis620",
}

func asciiSafe(charset string) bool {
	if charset == "" {
		return true
	}
	for _, c := range asciiSafeCharsets {
		if strings.EqualFold(c, charset) {
			return true
		}
	}
	return false
}

// special marks the bytes that can make a text read otherwise than as
// written: quotes, backslashes, comment starts, statement ends, NUL and
// non-ASCII bytes. A text without them reads as is in every sql_mode and
// character set (all client character sets are ASCII-compatible), which is
// the common case a per-message read must make cheap.
var special = func() (t [256]bool) {
	for _, c := range []byte("'\"\\/#-;\x00") {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// plain reports whether sql has no special byte.
func plain(sql []byte) bool {
	for _, c := range sql {
		if special[c] {
			return false
		}
	}
	return true
}

// lexRead is Dialect.Read.
func lexRead(sql []byte, l *engine.LexState) ([]byte, string, string, bool) {
	if plain(sql) && !startsWithSetOrUse(sql) {
		return sql, "", "", true
	}
	var m mode
	if l != nil {
		if l.Unconfirmed && sensitive(sql) {
			return nil, lexUnconfirmedRuleID, "the text has quotes, a backslash or non-ASCII bytes and was sent before the server confirmed sql_mode and the character set after a statement that may change them; send it after that statement's result", false
		}
		if l.ClientEncoding != "" && hasHigh(sql) {
			if cs := lookupMultibyte(l.ClientEncoding); cs != nil {
				// charset.go: judged as UTF-8 read along the server's
				// character boundaries.
				conv, ok := cs.toUTF8(sql)
				if !ok {
					return nil, lexCharsetInvalidRuleID, "the text is not valid in client character set " + cs.name + ", or has a character sqlfw cannot map to exactly one non-ASCII character as the server does", false
				}
				sql = conv
			} else if l.ClientEncoding == "unknown" {
				// relay/mysql: set from a variable, DEFAULT or an expression, with no session tracking to report it
				return nil, lexCharsetRuleID, "the session's client character set is not known to sqlfw (set from a variable, DEFAULT, a number or an expression, or by text sqlfw does not read, and not reported by session tracking), so its non-ASCII text cannot be read; set it with SET NAMES x or character_set_client = x", false
			} else if !asciiSafe(l.ClientEncoding) {
				return nil, lexCharsetRuleID, "sqlfw cannot read non-ASCII text in this client character set; use utf8mb4 or one docs/policy.md lists", false
			}
		}
		if l.SQLMode != "" {
			m = parseMode(l.SQLMode)
		}
		m.highSpace = highSpace(l.ClientEncoding)
		m.version, m.mariadb = int(l.ServerVersion), l.MariaDB
	}
	out, reason := canonical(sql, m)
	if reason != "" {
		return nil, lexAmbiguousRuleID, reason, false
	}
	return out, "", "", true
}

// sensitive reports whether sql has a byte whose reading depends on
// sql_mode or the character set.
func sensitive(sql []byte) bool {
	for _, c := range sql {
		if c == '\\' || c == '"' || c == '\'' || c >= 0x80 {
			return true
		}
	}
	return false
}

func hasHigh(sql []byte) bool {
	for _, c := range sql {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// rewriter copies the text lazily: out stays nil until the first change.
type rewriter struct {
	src  []byte
	out  []byte
	done int // src[:done] is in out (when out != nil)
}

// set replaces src[i] by c.
func (w *rewriter) set(i int, c byte) {
	w.upto(i)
	w.out = append(w.out, c)
	w.done = i + 1
}

// insert adds c before src[i].
func (w *rewriter) insert(i int, c byte) {
	w.upto(i)
	w.out = append(w.out, c)
}

func (w *rewriter) upto(i int) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.src)+16)
	}
	w.out = append(w.out, w.src[w.done:i]...)
	w.done = i
}

func (w *rewriter) blank(lo, hi int) {
	for i := lo; i < hi; i++ {
		w.set(i, ' ')
	}
}

func (w *rewriter) result() []byte {
	if w.out == nil {
		return w.src
	}
	w.upto(len(w.src))
	return w.out
}

// everyServerRuns is the lowest version a /*!NNNNN comment may name and
// be skipped by a supported server: MariaDB skips 5.7.0 and later (it is
// no MySQL 5.7; measured on MariaDB 10.11: /*!50699 runs, /*!50700 and
// /*!80000 do not), MySQL 8 runs what its version reaches.
const everyServerRuns = 50700

// canonical returns the text TiDB's parser reads as the server reads sql
// in mode m, or a reason why that text cannot be known.
func canonical(sql []byte, m mode) ([]byte, string) {
	w := rewriter{src: sql}
	n := len(sql)
	// execEnd >= 0: inside an executable comment whose */ is at execEnd;
	// execBlank: its markers are blanked (every server runs it).
	execEnd, execBlank := -1, false
	// A statement that changes sql_mode or the character set changes how
	// the server lexes the statements after it in the same text, which the
	// engine reads with the session's state: nothing may follow it. Every
	// ";" counts here, also one inside a compound statement that runs now
	// (BEGIN NOT ATOMIC, IF, ...), where it ends no statement for the
	// server: such a body with a SET NAMES or EXECUTE followed by more is
	// refused too (conservative); a CREATE's stored body is not (create).
	words, setStmt, lexSet, lexChanged := 0, false, false, false
	// immediate: the string literal that follows EXECUTE IMMEDIATE (or
	// PREPARE name FROM) is lexed again by the server, in the session's
	// sql_mode, when it runs (is prepared);
	// the engine reads it in the default one (immediate.go immediateParsed).
	immediate := false
	// compound counts the BEGIN ... END bodies open (a BEGIN that is not a
	// statement's first word, an END not followed by IF, LOOP, ...): a
	// ";" in one separates the body's statements, also inside an
	// executable comment every server runs (mariadb-dump's triggers).
	compound := 0
	caseExpr := 0 // open CASE expressions inside a body: their END closes no block
	// create: the statement is a CREATE, whose BEGIN ... END body the
	// server stores, with the session's sql_mode and character set, and
	// does not run: a SET NAMES or EXECUTE in it changes nothing for the
	// statements after it in the body or the text (a body that runs now,
	// BEGIN NOT ATOMIC, IF, ..., is still refused).
	create := false
	// running: the text holds a compound statement that runs now (not a
	// CREATE's body); from there on, for the rest of the text
	// (conservative: where an IF ... END IF ends is not followed here).
	running := false
	// stmtStart: where the statement at i starts (after the last ";").
	stmtStart := 0
	nonDefault := m.noBackslash || m.ansiQuotes
	for i := 0; i < n; {
		c := sql[i]
		if lexChanged && !isSpaceByte(c) && c != ';' && c != '#' && c != '/' && c != '-' {
			return nil, "a statement after one that sets sql_mode or the character set is lexed by the server under the new setting; send it in its own message"
		}
		switch {
		case c == 0:
			return nil, "a NUL byte outside a string ends the text for some clients and servers but not for others"
		case execEnd >= 0 && i == execEnd:
			// The */ closing an executable comment.
			if execBlank {
				w.blank(i, i+2)
			}
			i += 2
			execEnd = -1
		case c == '#':
			if execEnd >= 0 {
				return nil, "a comment inside an executable comment (/*! ... */) ends differently for the server than for the engine"
			}
			for i < n && sql[i] != '\n' {
				if sql[i] == 0 {
					return nil, "a NUL byte in a # comment ends it for some servers"
				}
				i++
			}
		case c == '-' && i+1 < n && sql[i+1] == '-' && (i+2 == n || sql[i+2] <= ' ' || sql[i+2] == 0x7f):
			if execEnd >= 0 {
				return nil, "a comment inside an executable comment (/*! ... */) ends differently for the server than for the engine"
			}
			if i+2 < n && sql[i+2] != ' ' && sql[i+2] != '\t' && sql[i+2] != '\n' && sql[i+2] != '\r' && sql[i+2] != '\v' && sql[i+2] != '\f' {
				w.set(i+2, ' ') // a control character: a comment to the server, not to TiDB
			}
			for i < n && sql[i] != '\n' {
				if sql[i] == 0 {
					return nil, "a NUL byte in a -- comment ends it for some servers"
				}
				i++
			}
		case c == '-' && i+2 < n && sql[i+1] == '-' && sql[i+2] >= 0x80:
			// 0x85 and 0xA0 are spaces to the engine's parser; in
			// single-byte character sets some bytes are control
			// characters or spaces to the server (cp1250 0x80, hp8
			// 0x81, macroman 0xCB, cp866 0xFF, ...)
			return nil, `"--" followed by a byte above 0x7F is a comment to the server in some character sets and not to the engine's parser, or the other way round`
		case c == '/' && i+1 < n && sql[i+1] == '*':
			if execEnd >= 0 {
				return nil, "a comment inside an executable comment (/*! ... */) ends differently for the server than for the engine"
			}
			end := strings.Index(string(sql[i+2:]), "*/") // raw: how a server that skips it finds its end
			if end < 0 {
				if i+2 < n && (sql[i+2] == '!' || i+3 < n && sql[i+2] == 'M' && sql[i+3] == '!') {
					return nil, "an unterminated executable comment (/*! ...) may run to the end of the text"
				}
				// Unterminated: the server reports a syntax error, and so
				// does the parser, since the text is kept.
				i = n
				continue
			}
			end += i + 2
			switch {
			case i+2 < n && sql[i+2] == '!':
				j, digits := i+3, 0
				for j < n && sql[j] >= '0' && sql[j] <= '9' {
					j++
					digits++
				}
				if digits > 5 && !(m.version != 0 && m.mariadb && digits == 6) {
					return nil, "an executable comment with a version of more than five digits (/*!NNNNNN) is read differently by MySQL and MariaDB"
				}
				if m.version != 0 && digits >= 5 && !m.serverRuns(false, digits, version(sql[i+3:j])) {
					// The server skips it: a plain comment to it, and to
					// the engine once the marker is blanked.
					w.blank(i+2, j)
					i = end + 2
					continue
				}
				if reason := sameEnd(sql, j, end, m); reason != "" {
					return nil, reason
				}
				// Fewer than five digits are no version: the text. A
				// known server runs it (it did not skip it above).
				execBlank = digits < 5 || version(sql[i+3:j]) < everyServerRuns || m.version != 0
				if digits < 5 {
					j = i + 3
				}
				if gluedExec(sql, j, end) {
					execBlank = false // kept: a comment trick (gluedExec)
				}
				if execBlank {
					w.blank(i, j)
				}
				// Else kept for TiDB, which runs it: a comment trick.
				i = j
				execEnd = end
			case i+3 < n && sql[i+2] == 'M' && sql[i+3] == '!': // upper case only: /*m! is a plain comment
				// MariaDB runs it, MySQL skips it: kept as /*! for TiDB.
				j := i + 4
				for j < n && sql[j] >= '0' && sql[j] <= '9' {
					j++
				}
				if string(sql[i+4:j]) == "999999" {
					// No server runs it: mariadb-dump's first line,
					// /*M!999999\- enable the sandbox mode */.
					i = end + 2
					continue
				}
				known := m.version != 0 && !gluedExec(sql, j, end)
				if known && !m.serverRuns(true, j-(i+4), version(sql[i+4:j])) {
					w.blank(i+2, j) // a plain comment to the server
					i = end + 2
					continue
				}
				if reason := sameEnd(sql, j, end, m); reason != "" {
					return nil, reason
				}
				if known {
					// MariaDB, which runs it: its text, without markers.
					w.blank(i, j)
				} else {
					w.set(i+2, '!')
					w.blank(i+3, j)
				}
				i = j
				execEnd, execBlank = end, known
			case i+2 < n && sql[i+2] == '+':
				for k := i + 3; k < end; k++ {
					if q := sql[k]; q == '\'' || q == '"' || q == '`' {
						return nil, "an optimizer hint with quoted text may end elsewhere for the server than for the engine"
					}
				}
				i = end + 2
			default:
				if i+3 < n && sql[i+2] == 'T' && sql[i+3] == '!' {
					w.set(i+3, ' ') // TiDB's /*T! is a plain comment to MySQL
				}
				i = end + 2
			}
		case c == '`':
			j, ok := quoted(sql, i, '`', false)
			if !ok {
				return w.result(), "" // unterminated: a syntax error for both
			}
			i = j
		case c == '"' && m.ansiQuotes:
			j, ok := quoted(sql, i, '"', false)
			if !ok {
				return w.result(), ""
			}
			// "a""b`c" → `a"b``c`
			w.upto(i)
			w.out = append(w.out, '`')
			for k := i + 1; k < j-1; k++ {
				switch sql[k] {
				case '"':
					k++ // a doubled quote stands for one
					w.out = append(w.out, '"')
				case '`':
					w.out = append(w.out, '`', '`')
				default:
					w.out = append(w.out, sql[k])
				}
			}
			w.out = append(w.out, '`')
			w.done = j
			i = j
		case c == '\'' || c == '"':
			if immediate && nonDefault {
				j, _ := quoted(sql, i, c, !m.noBackslash)
				for k := i + 1; k < j-1; k++ {
					if q := sql[k]; q == '\\' || q == '"' || q == '\'' {
						return nil, "the text of an EXECUTE IMMEDIATE or PREPARE is lexed by the server under the session's sql_mode (NO_BACKSLASH_ESCAPES or ANSI_QUOTES), which sqlfw does not apply to it; quotes and backslashes in it cannot be read soundly"
					}
				}
			}
			if m.noBackslash {
				j, ok := quoted(sql, i, c, false)
				if !ok {
					return w.result(), ""
				}
				for k := i + 1; k < j-1; k++ {
					if sql[k] == '\\' {
						w.insert(k, '\\')
					}
				}
				i = j
				continue
			}
			j, ok := quoted(sql, i, c, true)
			if !ok {
				return w.result(), ""
			}
			i = j
		case c == ';' && execEnd >= 0 && !execBlank:
			// A server that skips the comment does not see the ";": the
			// two readings cut the text in different places.
			return nil, "a statement end (;) inside an executable comment some servers skip (/*!NNNNN ... */ of a later version, /*M! ... */)"
		case c == ';' && execEnd >= 0 && compound == 0:
			// MariaDB 10.11 rejects a statement end inside an executable
			// comment (measured); the parser would split.
			return nil, "a statement end (;) inside an executable comment (/*! ... */) outside a BEGIN ... END body"
		case c == ';':
			if !(create && compound > 0) {
				lexChanged = lexChanged || lexSet
			}
			if compound == 0 {
				create = false
			}
			caseExpr = 0 // no CASE expression spans a statement end
			words, setStmt, lexSet, immediate = 0, false, false, false
			i++
			stmtStart = i
		case (c == 0x85 || c == 0xa0) && (i == 0 || sql[i-1] < 0x80):
			return nil, "byte 0x85 or 0xA0 on its own is a space to the engine's parser but not to the server"
		case m.highSpace != 0 && c == m.highSpace:
			return nil, "a byte the client character set makes a space (0xA0 in latin1, 0xFF in cp866) is part of a word to the engine's parser"
		case isIdentByte(c):
			j := i + 1
			for j < n && isIdentByte(sql[j]) {
				if (sql[j] == 0x85 || sql[j] == 0xa0) && sql[j-1] < 0x80 {
					return nil, "byte 0x85 or 0xA0 on its own is a space to the engine's parser but not to the server"
				}
				if m.highSpace != 0 && sql[j] == m.highSpace {
					return nil, "a byte the client character set makes a space (0xA0 in latin1, 0xFF in cp866) is part of a word to the engine's parser"
				}
				j++
			}
			word := sql[i:j]
			// start: the word starts a statement, also one of a
			// compound statement's lists (BEGIN NOT ATOMIC SET NAMES
			// gbk; END: the character set stays gbk after it, measured
			// on MariaDB 10.11)
			switch {
			case words == 0 && compound == 0 && asciiFold(word, "create"):
				create = true
			case words == 0 && asciiFold(word, "set"):
				setStmt = true
			case (words == 0 || running) && asciiFold(word, "execute"):
				// A prepared SET NAMES or SET sql_mode changes the
				// state without the text saying so.
				lexSet = true
			case words == 1 && lexSet && asciiFold(word, "immediate"):
				immediate = true
			case words == 0 && asciiFold(word, "prepare"):
				// PREPARE name FROM 'text': the server lexes text when it
				// prepares it, in the session's sql_mode, as it lexes
				// EXECUTE IMMEDIATE's
				immediate = true
			case len(word) == 5 && (words > 0 || compound > 0) && asciiFold(word, "begin"):
				compound++
				words = -1 // the body's first statement follows
			case compound > 0 && words > 0 && len(word) == 4 && asciiFold(word, "case") && sql[i-1] != '.':
				// a CASE expression (a CASE statement starts a statement;
				// t.case is a column): its END is not the body's
				caseExpr++
			case compound > 0 && len(word) == 3 && asciiFold(word, "end") && !endsBlock(sql[j:]):
				if caseExpr > 0 {
					caseExpr--
				} else {
					compound--
				}
			case setStmt && asciiFold(word, "for"):
				// SET STATEMENT ... FOR <statement>: the word after it
				// starts a statement (a USE, an EXECUTE, a SET)
				words = -1
			case words == 0 && asciiFold(word, "use") && !simpleUse(sql):
				// The relay follows the session's database (which rules
				// scoped by database read) from a USE in this form only.
				return nil, "USE is read only alone in a message and in its simple form (USE name, or USE `name`), so that the database the statements after it run in is known"
			case (setStmt || running) && (asciiFold(word, "sql_mode") || asciiFold(word, "names") || asciiFold(word, "character") ||
				asciiFold(word, "charset") || asciiFold(word, "character_set_client")):
				lexSet = lexSet || setStmt || setItem(sql, stmtStart, i, j)
			}
			if len(word) >= 2 && len(word) <= 6 || compound > 0 {
				var opens bool
				// a CASE expression's THEN and ELSE, and DO as a statement's
				// first word (DO 1), open no statement list
				if opens, running = compoundWord(word, words, compound, create, running); opens &&
					caseExpr == 0 && !(words == 0 && len(word) == 2) {
					words = -1 // the word after it starts a statement
				}
			}
			words++
			i = j
		default:
			if !isSpaceByte(c) {
				words++
			}
			i++
		}
	}
	if execEnd >= 0 {
		return nil, "an unterminated executable comment (/*! ...)"
	}
	return w.result(), ""
}

// setItem reports, for a word naming the lexing state (sql[i:j]) in a
// text that runs a compound statement, whether it may be a SET's: unless
// the statement so far (from start) holds no "set" at all (SELECT names,
// sql_mode FROM t), or the word is NAMES neither after SET nor after a
// comma or a comment, or followed by "=" (UPDATE t SET names = 'x'), it
// counts. Called only for those words in such texts, off the per-word
// path; "set" anywhere, in a string or another word too, counts as one.
func setItem(sql []byte, start, i, j int) bool {
	if !containsWordFold(string(sql[start:i]), "set") {
		return false
	}
	if !asciiFold(sql[i:j], "names") {
		return true
	}
	if assigned(sql[j:]) {
		return false
	}
	k := i - 1
	for k >= start && isSpaceByte(sql[k]) {
		k--
	}
	if k < start {
		return true
	}
	if !isIdentByte(sql[k]) {
		return sql[k] != '(' && sql[k] != '.' // a comma, a comment's end, a quote: perhaps an item
	}
	e := k + 1
	for k >= start && isIdentByte(sql[k]) {
		k--
	}
	return asciiFold(sql[k+1:e], "set")
}

// assigned reports whether rest starts with "=" after spaces: a column set
// (UPDATE t SET names = 'x'), not SET NAMES cs.
func assigned(rest []byte) bool {
	i := 0
	for i < len(rest) && isSpaceByte(rest[i]) {
		i++
	}
	return i < len(rest) && rest[i] == '='
}

// gluedExec reports whether the executable comment whose text is
// sql[lo:end] (its */ at end) stands between tokens as their separator:
// its text starts at the marker (/*!UNION*/, /*!50000SELECT*/) or ends at
// a */ followed by a word (/*! UNION*/SELECT). mariadb-dump's and
// mysqlbinlog's (/*!40101 SET ... */;, =1/*!*/;) are neither. Kept as
// /*!, the prescan counts it as a comment trick.
func gluedExec(sql []byte, lo, end int) bool {
	k := lo
	for k < end && isSpaceByte(sql[k]) {
		k++
	}
	if k == end {
		return false // empty
	}
	if k == lo {
		return true
	}
	return !isSpaceByte(sql[end-1]) && end+2 < len(sql) && (isIdentByte(sql[end+2]) || sql[end+2] == '\'' || sql[end+2] == '"' || sql[end+2] == '`')
}

// endsBlock reports whether the word after an END (in rest) makes it the
// end of another compound statement than BEGIN ... END.
func endsBlock(rest []byte) bool {
	i := 0
	for i < len(rest) && isSpaceByte(rest[i]) {
		i++
	}
	j := i
	for j < len(rest) && isIdentByte(rest[j]) {
		j++
	}
	w := rest[i:j]
	return asciiFold(w, "if") || asciiFold(w, "loop") || asciiFold(w, "while") || asciiFold(w, "case") ||
		asciiFold(w, "repeat") || asciiFold(w, "for")
}

// compoundWord reads a word of canonical's for the compound statements
// that run now: it reports whether the word opens a statement list (THEN,
// ELSE, DO, LOOP, REPEAT, NOT ATOMIC), and whether the text, running before it,
// now
// holds such a compound statement (not a CREATE's body): a handler's SET
// NAMES (HANDLER FOR SQLEXCEPTION SET NAMES gbk) starts no list, so any
// naming of the lexing state counts from there on. Out of canonical's loop,
// which runs for every word of every text.
func compoundWord(word []byte, words, compound int, create, running bool) (opener, runs bool) {
	runs = running || compound > 0 && !create
	if len(word) < 2 || len(word) > 6 {
		return false, runs
	}
	atomic := false
	switch word[0] | 0x20 {
	case 't':
		opener = asciiFold(word, "then")
	case 'e':
		opener = asciiFold(word, "else")
	case 'd':
		opener = asciiFold(word, "do")
	case 'l':
		opener = asciiFold(word, "loop")
	case 'r':
		opener = asciiFold(word, "repeat")
	case 'a':
		atomic = asciiFold(word, "atomic")
		opener = atomic
	}
	if !runs && !create && (atomic || words == 0 && (asciiFold(word, "if") || asciiFold(word, "case") ||
		asciiFold(word, "while") || asciiFold(word, "loop") || asciiFold(word, "repeat") || asciiFold(word, "for"))) {
		runs = true
	}
	return opener, runs
}

// quoted returns the index after the literal or identifier that starts at
// sql[i] with quote q: doubled quotes stand for one, and with backslash a
// backslash escapes the next byte.
func quoted(sql []byte, i int, q byte, backslash bool) (int, bool) {
	j := quotedEnd(unsafe.String(unsafe.SliceData(sql), len(sql)), i, q, backslash)
	return min(j, len(sql)), j <= len(sql)
}

// quotedEnd is the end of the quoted text at text[i], len(text)+1 when it
// is unterminated. It jumps from quote to quote (strings.IndexByte): the
// hot loop of every text with strings, read on each call (lex.go) and
// scanned for its shape (shape.go).
func quotedEnd(text string, i int, q byte, backslash bool) int {
	n := len(text)
	for j := i + 1; j < n; {
		k := strings.IndexByte(text[j:], q)
		if k < 0 {
			return n + 1
		}
		if backslash {
			if b := strings.IndexByte(text[j:j+k], '\\'); b >= 0 {
				j += b + 2 // the escaped byte, a quote or not
				continue
			}
		}
		j += k
		if j+1 < n && text[j+1] == q {
			j += 2
			continue
		}
		return j + 1
	}
	return n + 1
}

// sameEnd checks that the text of an executable comment, sql[lo:end],
// lexed as SQL, has no quote, comment or executable comment that runs past
// end: a server that runs it and one that skips it (which looks for the
// first */) then find the same end.
func sameEnd(sql []byte, lo, end int, m mode) string {
	for k := lo; k < end; {
		switch c := sql[k]; {
		case c == '\'' || c == '"' || c == '`':
			backslash := c != '`' && !m.noBackslash && !(c == '"' && m.ansiQuotes)
			j, ok := quoted(sql[:end], k, c, backslash)
			if !ok {
				return "a quote in an executable comment (/*! ... */) runs past its end for a server that runs it"
			}
			k = j
		case c == '#' || (c == '-' && k+1 < end && sql[k+1] == '-') || (c == '/' && k+1 < end && sql[k+1] == '*'):
			return "a comment inside an executable comment (/*! ... */) ends differently for the server than for the engine"
		default:
			k++
		}
	}
	return ""
}

func version(d []byte) int {
	v := 0
	for _, c := range d {
		v = v*10 + int(c-'0')
	}
	return v
}

// asciiFold reports whether w is s (lower case) in any case.
func asciiFold(w []byte, s string) bool {
	if len(w) != len(s) {
		return false
	}
	for i := range w {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c |= 0x20
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// startsWithSetOrUse reports whether sql's first word may be SET or USE,
// whose forms canonical checks even in a text without special bytes
// (SET STATEMENT ... FOR USE db, USE\vdb).
func startsWithSetOrUse(sql []byte) bool {
	i := 0
	for i < len(sql) && isSpaceByte(sql[i]) {
		i++
	}
	return i+3 <= len(sql) && (asciiFold(sql[i:i+3], "use") || asciiFold(sql[i:i+3], "set"))
}

// simpleUse reports whether sql is a USE statement in the one form the
// relay follows (sessioneffects.go readUse): USE, a name (bare, or quoted with
// backquotes) and at most a ";", with spaces between (any of the six the
// server's lexer skips), and nothing else.
func simpleUse(sql []byte) bool {
	t := strings.TrimLeft(string(sql), " \t\r\n\v\f")
	if len(t) < 4 || !strings.EqualFold(t[:3], "use") || !isSpaceByte(t[3]) {
		return false
	}
	t = strings.TrimLeft(t[3:], " \t\r\n\v\f")
	switch {
	case strings.HasPrefix(t, "`"):
		i, n := 1, 0
		for ; i < len(t); i++ {
			if t[i] == '`' {
				if i+1 < len(t) && t[i+1] == '`' {
					i++
					n++
					continue
				}
				break
			}
			n++
		}
		if i >= len(t) || n == 0 {
			return false
		}
		t = t[i+1:]
	default:
		i := 0
		for i < len(t) && (isIdentByte(t[i])) {
			i++
		}
		if i == 0 {
			return false
		}
		t = t[i:]
	}
	t = strings.TrimLeft(t, " \t\r\n\v\f")
	t = strings.TrimPrefix(t, ";")
	return strings.TrimLeft(t, " \t\r\n\v\f") == ""
}
