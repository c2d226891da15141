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
// What a statement's text says it changes is the dialect's reading
// (engine.SessionEffects, engine/mysql sessioneffects.go); this file
// applies it when the answer confirms it. A statement that names the
// character set (SET NAMES, SET CHARACTER SET, character_set_client) and
// whose OK does not report the new one is read in its one simple form,
// SET NAMES x [COLLATE y]; any other makes the character set unknown,
// which the engine treats as one whose bytes it cannot read (non-ASCII
// text is then denied). So does an EXECUTE, once the session has PREPAREd
// a text that names the character set or comes from a variable or an
// expression, an EXECUTE IMMEDIATE of text assembled at run time (the
// engine's Verdict.DynamicSQL: CONCAT('SET NA','MES gbk') names nothing),
// and a COM_STMT_EXECUTE of a prepared SET that names it.
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
// A COM_CHANGE_USER the server refuses still resets the session (MariaDB's
// THD::change_user runs before the authentication) and restores only the
// user and the database: sql_mode and the character set are the global
// ones (measured on MariaDB 10.11: the login's utf8mb4 became latin1).
// Its ERR reports neither, so the state is Unconfirmed until an answer
// that ends with OK or EOF brings the flags (lexStale), and the character
// set unknown until a SET NAMES (or a COM_RESET_CONNECTION, back to the
// login's).
//
// On MySQL, which has no ANSI_QUOTES status flag, ANSI_QUOTES set without
// session tracking of sql_mode is not seen. While a statement that may
// change either is in flight, the state is Unconfirmed: a text sent before
// its answer is read with suspicion (engine/mysql lex.go).

import (
	"bytes"

	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// charsetUnknown is the character set of a session whose SET NAMES sqlfw
// could not read.
const charsetUnknown = engine.CharsetUnknown

// grantMode is what an sql_mode says of a GRANT to an account that does
// not exist (engine.GrantMode).
type grantMode = engine.GrantMode

const (
	grantSame    = engine.GrantSame
	grantKept    = engine.GrantKept
	grantCreates = engine.GrantCreates
	grantUnknown = engine.GrantUnknown
)

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

// readsOtherwise holds the character sets the engine reads otherwise than
// UTF-8 (collationCharsets' values), and charsetUnknown.
var readsOtherwise = func() map[string]bool {
	m := map[string]bool{charsetUnknown: true}
	for _, cs := range collationCharsets {
		m[cs] = true
	}
	return m
}()

// sameLexing reports whether the server, preparing again a statement
// prepared under sql_mode mode (its lexing flags, as sqlModes spells them)
// and client character set charset, reads its text as it did: MariaDB
// reads it with the session's character set of the moment (measured on
// 10.11: e2e TestRound10Reprepare) and the sql_mode of its PREPARE, which
// it keeps; of MySQL this is not measured, so there the mode counts too.
// Two character sets that read as UTF-8 does ("" for the login's utf8mb4,
// "utf8mb4" after SET NAMES) are the same.
func sameLexing(mode, charset string, l *engine.LexState) bool {
	if mode != l.SQLMode && !l.MariaDB {
		return false
	}
	return charset == l.ClientEncoding || !readsOtherwise[charset] && !readsOtherwise[l.ClientEncoding]
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

// autoCreate reports whether a GRANT may create its grantee in the
// session: the mode lacks NO_AUTO_CREATE_USER or is not known.
func (l *lexState) autoCreate() bool { return l.grant == grantCreates || l.grant == grantUnknown }

// queryCharset is what a COM_QUERY text may do to the lexing state, as
// the dialect reads it (e, engine.SessionEffects): lex, it may change it
// (the answer confirms it); charset, the character set it sets as far as
// the text says ("" none, charsetUnknown when it may); grant, what it
// leaves NO_AUTO_CREATE_USER at. dynamic is the engine's
// Verdict.DynamicSQL: the text runs SQL assembled at run time, which may
// set the character set without naming it.
func (l *lexState) queryCharset(e *engine.SessionEffects, dynamic bool) (lex bool, charset string, grant grantMode) {
	// an EXECUTE may run a prepared SET sql_mode or SET NAMES: what is
	// sent before its answer is read as unconfirmed
	lex = e.Lex(dynamic)
	if e.Prepares {
		l.prepCharset = true
	}
	if (l.prepCharset || dynamic) && e.Executes {
		// (EXECUTE IMMEDIATE CONCAT('SET NA','MES gbk') runs its text now)
		return true, charsetUnknown, grantUnknown
	}
	if e.Executes && !e.Names && !dynamic {
		// an EXECUTE of names none of which the session prepared from a
		// text that may change the lexing state (prepCharset): what is
		// pipelined behind it is read as it is now
		lex = false
	}
	return lex, e.Charset, e.Grant
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
	switch {
	case cur.cmd == wire.ComChangeUser && failed:
		// MariaDB resets the session before it authenticates
		// (THD::change_user) and restores only the user and the
		// database when the login fails: sql_mode and the character set
		// are the global ones. No status has said the mode yet, so what
		// is sent before an answer that has one is read as
		// unconfirmed; the character set is not known (the server's
		// global character_set_client) until a SET NAMES says it.
		l.modeTracked = false
		grant = grantSame
		charset = charsetUnknown
		s.lexStale.Store(true)
		s.loginChanged.Store(true)
	case !failed:
		s.lexStale.Store(false) // its OK or EOF had the flags
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
	var reported grantMode
	ansiQuotes := false
	if trackedMode != nil {
		reported, ansiQuotes = s.env.Engine().ReportedGrant(trackedMode)
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
		if ansiQuotes {
			i |= 2
		}
	case l.modeTracked && (l.mode == sqlModes[2] || l.mode == sqlModes[3]):
		i |= 2 // MySQL: as last reported
	}
	mode := sqlModes[i]
	switch {
	case trackedMode != nil:
		grant = reported
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
