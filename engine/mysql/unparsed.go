package mysql

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// What is certain of a text TiDB's parser rejects. Such a text is a parse
// error and gets the policy's on_parse_error, but some of what it does is
// known from its words alone, and a deny rule must be able to name it even
// when an operator allows parse errors for MariaDB's syntax: INSTALL PLUGIN
// loads code whatever follows it. recognize returns those facts in
// TextFacts.Stmts of the parse error; the engine lets a deny rule they
// match decide (engine.go), never an allow rule, since they are a part of
// what the text does, not all of it.
//
// The text is cut into statements at every ";" outside strings, quoted
// identifiers and comments (nextToken), and after a BEGIN [NOT ATOMIC] that
// can start a compound statement: the server's statements, and also the
// statements of a compound body (BEGIN ... END), which end at a ";" for
// this cut but not for the server, so a piece may be a body's statement,
// whose facts hold for the routine that runs it. When the text has more
// than one piece, each is parsed on its own and, when TiDB parses it, has
// its full facts; the others are recognized by their leading words
// (classifyLead):
//
//	INSTALL PLUGIN | INSTALL SONAME        ddl create plugin, loads_code
//	UNINSTALL PLUGIN | UNINSTALL SONAME    ddl drop plugin, loads_code
//	CREATE [OR REPLACE] [AGGREGATE] FUNCTION [IF NOT EXISTS] f RETURNS type SONAME 'lib'
//	                                       ddl create function, loads_code
//	CREATE [OR REPLACE] [DEFINER = u] [AGGREGATE] FUNCTION | PROCEDURE | TRIGGER | EVENT | VIEW
//	                                       ddl create function, procedure, trigger (its table
//	                                       written), event or view; changes_identity when the
//	                                       DEFINER is not CURRENT_USER (and, for a routine or
//	                                       view, no SQL SECURITY INVOKER is in the text)
//	ALTER [DEFINER = u] EVENT | FUNCTION | PROCEDURE | SERVER | VIEW
//	DROP FUNCTION | PROCEDURE | TRIGGER | EVENT | SERVER
//	                                       ddl alter or drop of that object; ALTER
//	                                       DEFINER = u EVENT or VIEW: changes_identity
//	                                       (ALGORITHM = a and SQL SECURITY x may stand
//	                                       around a DEFINER, in CREATE too)
//	CREATE SERVER | ALTER SERVER           ddl, opens_connection (the remote server
//	                                       FEDERATED, SPIDER and CONNECT tables reach)
//	LOAD DATA | XML [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE
//	                                       copy from the client, or from a server file:
//	                                       reads_server_file
//	GRANT ... | REVOKE ...                 dcl grant/revoke (of roles without ON);
//	                                       grants_privilege as for the GRANTs TiDB parses
//	CREATE | ALTER | DROP | RENAME USER, CREATE | DROP ROLE
//	                                       dcl create/alter/drop of a user or role
//	CHANGE MASTER | CHANGE REPLICATION SOURCE, START SLAVE | REPLICA | ALL SLAVES | ALL REPLICAS
//	                                       opens_connection (a replica connects to its primary)
//	EXECUTE IMMEDIATE <not one literal>    dynamic_sql ('a' 'b' too)
//	PREPARE s FROM <not one literal>       dynamic_sql
//	EXECUTE IMMEDIATE 'text'               the facts of text, as PREPARE ... FROM 'text'
//	INSERT | REPLACE | DELETE ... RETURNING list
//	                                       the facts of the statement and of SELECT list
//	SET STATEMENT v = x, ... FOR stmt      the facts of stmt, with the settings and
//	                                       effects of SET v = x, ...; unparsed_body when
//	                                       v is sql_mode or the character set and stmt a
//	                                       PREPARE, EXECUTE, CREATE or ALTER
//
// Anywhere in a piece, also inside a body: INSTALL PLUGIN, INSTALL SONAME,
// UNINSTALL PLUGIN or SONAME, and RETURNS type SONAME make it loads_code;
// INTO OUTFILE or DUMPFILE writes_server_file; ENGINE [=] CONNECT,
// FEDERATED(X) or SPIDER and DATA/INDEX DIRECTORY have the effects
// tableOptions gives them; an unqualified call of LOAD_FILE, SYS_EXEC or
// SYS_EVAL has its effects (funcEffects); mysql.user and the other
// credential tables (credentialTables) make it reads_credentials.
// Keywords are bare words (a `quoted` word is a name), in any case, with
// comments anywhere between them. A kept executable comment (one some
// servers run and others skip) is read both ways: its text counts as run
// (/*!80000 INSTALL */ PLUGIN ... loads a plugin on MySQL 8), and the text
// without it is parsed and recognized too (/*!80000 SELECT 1 FROM t WHERE
// */ DELETE FROM users deletes every row on MariaDB), so the facts are what
// some server runs.

// leadTokens is how many tokens of a piece classifyLead looks at.
const leadTokens = 48

// maxPieceParses bounds the pieces of one text parsed on their own, and
// maxReturning the RETURNING words tried in one: a text of a million
// "x;" must not cost a million parses (the later pieces are recognized by
// their words only).
const (
	maxPieceParses = 64
	maxReturning   = 4
)

// piece is one statement-sized cut of the text.
type piece struct {
	lo, hi   int // text[lo:hi], the ";" excluded
	lead     []token
	effects  engine.EffectSet // of the word sequences that count anywhere (cut)
	invoker  bool             // SQL SECURITY INVOKER
	compound bool             // cut at a BEGIN
	words    int              // tokens in all
}

// recognize returns the facts certain of text, which TiDB's parser
// rejected as a whole, statement by statement (see above); nil when
// nothing is.
func recognize(text string) []engine.StmtFacts {
	out := recognizeRead(text)
	if skipped, ok := skipReading(text); ok {
		// A server that skips the kept executable comments runs this:
		// its facts count too.
		parse(skipped, func(stmts []ast.StmtNode, err error) {
			if err == nil {
				out = append(out, stmtFacts(skipped, engine.LexStats{}, stmts, nil).Stmts...)
			} else {
				out = append(out, recognizeRead(skipped)...)
			}
		})
	}
	return out
}

// skipReading returns text with each kept executable comment (/*!NNNNN ...
// */ of a version some servers skip, and MariaDB's /*M!, which Read keeps
// as /*!) blanked: the text such a server runs. Read made sure each ends at
// the first */ after it for every server. ok is false when text has none.
func skipReading(text string) (string, bool) {
	var b []byte
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = quotedStr(text, i, c, c != '`')
		case c == '#', c == '-' && i+1 < n && text[i+1] == '-' && (i+2 == n || isSpaceByte(text[i+2])):
			for i < n && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && text[i+1] == '*':
			k := strings.Index(text[i+2:], "*/")
			end := n
			if k >= 0 {
				end = i + 2 + k + 2
			}
			if i+2 < n && text[i+2] == '!' {
				if b == nil {
					b = []byte(text)
				}
				for j := i; j < end; j++ {
					b[j] = ' '
				}
			}
			i = end
		default:
			i++
		}
	}
	if b == nil {
		return "", false
	}
	return string(b), true
}

// recognizeRead is recognize of one reading of the text.
func recognizeRead(text string) []engine.StmtFacts {
	pieces := cut(text)
	var out []engine.StmtFacts
	// prev: the kinds of the statements before, while every piece so far
	// is sure to be a statement of the message (stacked_after); after a
	// piece that can hold a compound body, the next pieces may be the
	// body's statements, which are not stacked ones.
	var prev engine.KindSet
	topLevel := true
	parsed := 0
	// used: a USE in an earlier piece selected the database usedDB
	// (currentdb.go), where the names of the pieces after it resolve.
	used, usedDB, pendingUse, pendingDB := false, "", false, ""
	add := func(st engine.StmtFacts) {
		st.Kinds |= 1 << st.Kind
		if topLevel {
			st.PrevKinds = prev
			prev |= 1 << st.Kind
		}
		for j := range st.InDatabase {
			d := &st.InDatabase[j].Facts
			d.Kinds |= st.Kinds | 1<<d.Kind
			d.PrevKinds = st.PrevKinds
			d.Effects |= st.Effects
		}
		if used {
			st = selected(st, usedDB)
		}
		out = append(out, st)
	}
	for i := range pieces {
		pc := &pieces[i]
		if pendingUse {
			used, usedDB, pendingUse = true, pendingDB, false
		}
		if pc.words == 0 {
			continue
		}
		if pc.lead[0].is(text, "use") && len(pc.lead) > 1 {
			pendingUse, pendingDB = true, useDatabase(pc.lead[1].name(text))
		}
		// This piece is the message's when all before it are; those after
		// it may be its body's.
		opens := pc.compound || compoundLead(text, pc.lead[0]) || pc.lead[0].is(text, "begin") || pc.lead[0].is(text, "declare") ||
			len(pc.lead) > 1 && pc.lead[1].kind == ':'
		topLevelNext := topLevel && !opens
		if len(pieces) > 1 && parsed < maxPieceParses {
			parsed++
			if sts, ok := parsePiece(text[pc.lo:pc.hi]); ok {
				for _, st := range sts {
					st.Loc += int32(pc.lo)
					add(st)
				}
				topLevel = topLevelNext
				continue
			}
		}
		st, ok := classifyLead(text, pc)
		if serverSetting(text, pc) {
			// SET @@global . x = v, which TiDB does not parse: certain
			// from its words
			if !ok {
				st.Kind, ok = engine.KindSetStmt, true
			}
			st.Kinds |= 1 << engine.KindAlterSystem
		}
		if parsed < maxPieceParses {
			// a routine's body, or a block's statement (routine.go)
			if ok {
				parsed++
				routinePiece(text, pc, &st)
			} else if sts := blockPiece(text, pc); len(sts) > 0 {
				parsed++
				sts[0].Effects |= pc.effects
				for _, in := range sts {
					in.Loc, in.Length = int32(pc.lo), int32(pc.hi-pc.lo)
					add(in)
				}
				topLevel = topLevelNext
				continue
			}
		}
		if pc.effects != 0 {
			st.Effects |= pc.effects
			ok = true
		}
		if !ok {
			st = engine.StmtFacts{} // nothing is certain, but in a system database its names may be
		}
		unparsedInDatabase(&st, text, pc)
		if ok || len(st.InDatabase) > 0 {
			st.Loc, st.Length = int32(pc.lo), int32(pc.hi-pc.lo)
			add(st)
		}
		topLevel = topLevelNext
	}
	return out
}

// cut cuts text into pieces at each ";" token, noting on the way the word
// sequences that count anywhere in a piece.
func cut(text string) []piece {
	var out []piece
	cur := piece{}
	var win [3]token // the last tokens, newest last
	for i := 0; ; {
		t, ok := nextToken(text, i)
		if !ok || t.kind == ';' {
			cur.hi = len(text)
			if ok {
				cur.hi = t.lo
			}
			out = append(out, cur)
			if !ok {
				return out
			}
			cur = piece{lo: t.hi}
			win = [3]token{}
			i = t.hi
			continue
		}
		i = t.hi
		if cur.words == 0 && t.is(text, "not") && win[2].is(text, "begin") {
			// BEGIN NOT ATOMIC: the body starts after ATOMIC.
			if a, ok := nextToken(text, i); ok && a.is(text, "atomic") {
				i, cur.lo = a.hi, a.hi
				continue
			}
		}
		cur.words++
		if len(cur.lead) < leadTokens {
			cur.lead = append(cur.lead, t)
		}
		switch {
		case (t.is(text, "plugin") || t.is(text, "soname")) && (win[2].is(text, "install") || win[2].is(text, "uninstall")):
			cur.effects |= engine.EffLoadsCode
		case t.is(text, "soname") && win[1].is(text, "returns"):
			cur.effects |= engine.EffLoadsCode
		case t.kind == tokWord && (win[2].is(text, "engine") || win[2].kind == '=' && win[1].is(text, "engine")):
			// ENGINE [=] CONNECT, FEDERATED, SPIDER: as tableOptions
			switch strings.ToLower(text[t.lo:t.hi]) {
			case "federated", "federatedx", "spider":
				cur.effects |= engine.EffOpensConnection
			case "connect":
				cur.effects |= engine.EffOpensConnection | engine.EffReadsServerFile | engine.EffWritesServerFile
			}
		case t.is(text, "directory") && (win[2].is(text, "data") || win[2].is(text, "index")):
			cur.effects |= engine.EffWritesServerFile // DATA/INDEX DIRECTORY: table files placed anywhere
		case (t.is(text, "outfile") || t.is(text, "dumpfile")) && win[2].is(text, "into"):
			cur.effects |= engine.EffWritesServerFile // SELECT ... INTO OUTFILE/DUMPFILE
		case t.kind == '(' && win[1].kind != '.' && win[2].kind == tokWord:
			// an unqualified call: the built-in, or the UDF exploit kits install
			cur.effects |= funcEffects[strings.ToLower(text[win[2].lo:win[2].hi])]
		case (t.kind == tokWord || t.kind == tokIdent) && credentialTables[t.name(text)] && win[2].kind == '.' &&
			(win[1].kind == tokWord || win[1].kind == tokIdent) && win[1].name(text) == "mysql" && win[0].kind != '.':
			cur.effects |= engine.EffReadsCredentials // mysql.user, mysql.global_priv, ...
		case t.is(text, "invoker") && win[2].is(text, "security") && win[1].is(text, "sql"):
			cur.invoker = true
		}
		prevTok := win[2]
		win[0], win[1], win[2] = win[1], win[2], t
		if t.is(text, "begin") && (cur.words == 1 || prevTok.kind == ':' || compoundLead(text, cur.lead[0])) {
			// A compound statement's first statement follows BEGIN
			// without a ";": a piece of its own. Only where a compound
			// statement can be: BEGIN is also a name (DELETE t FROM t
			// begin WHERE ...), and a cut there would drop the WHERE.
			cur.hi, cur.compound = t.hi, true
			out = append(out, cur)
			cur = piece{lo: t.hi}
			win = [3]token{2: t}
		}
	}
}

// compoundLead reports whether a piece that starts with t can hold a
// compound statement: a routine, trigger or event definition, or a
// compound statement itself (MariaDB runs IF, WHILE, ... outside routines).
func compoundLead(text string, t token) bool {
	for _, w := range []string{"create", "alter", "if", "while", "repeat", "loop", "case", "for"} {
		if t.is(text, w) {
			return true
		}
	}
	return false
}

// parsePiece parses one piece on its own; ok is false when TiDB rejects it
// too.
func parsePiece(text string) (sts []engine.StmtFacts, ok bool) {
	parse(text, func(stmts []ast.StmtNode, err error) {
		if err != nil || len(stmts) == 0 {
			return
		}
		sts, ok = stmtFacts(text, engine.LexStats{}, stmts, nil).Stmts, true
	})
	return sts, ok
}

// lead walks the leading tokens of a piece.
type lead struct {
	text string
	t    []token
	i    int
}

// at reports whether the current token is one of the bare words ws.
func (l *lead) at(ws ...string) bool {
	if l.i >= len(l.t) {
		return false
	}
	for _, w := range ws {
		if l.t[l.i].is(l.text, w) {
			return true
		}
	}
	return false
}

// eat advances past the current token when it is one of ws.
func (l *lead) eat(ws ...string) bool {
	if l.at(ws...) {
		l.i++
		return true
	}
	return false
}

func (l *lead) eatByte(c byte) bool {
	if l.i < len(l.t) && l.t[l.i].kind == c {
		l.i++
		return true
	}
	return false
}

// object eats the current token when it is one of os and returns it.
func (l *lead) object(os ...string) string {
	for _, o := range os {
		if l.eat(o) {
			return o
		}
	}
	return ""
}

// isName reports whether the current token can be a name.
func (l *lead) isName() bool {
	return l.i < len(l.t) && (l.t[l.i].kind == tokWord || l.t[l.i].kind == tokIdent)
}

// name reads [schema.]name.
func (l *lead) name() (schema, name string, ok bool) {
	if !l.isName() {
		return "", "", false
	}
	name = l.t[l.i].name(l.text)
	l.i++
	if l.eatByte('.') {
		if !l.isName() {
			return "", "", false
		}
		schema, name = name, l.t[l.i].name(l.text)
		l.i++
	}
	return schema, name, true
}

// definer reads an optional DEFINER = account; other is true when the
// account is not CURRENT_USER. ok is false when the clause is there but
// cannot be read.
func (l *lead) definer() (present, other, ok bool) {
	if !l.eat("definer") {
		return false, false, true
	}
	if !l.eatByte('=') {
		return true, false, false
	}
	if l.eat("current_user") {
		if l.eatByte('(') && !l.eatByte(')') {
			return true, false, false
		}
		return true, false, true
	}
	// 'user'@'host', `user`@`host`, user@host, 'user'
	if l.i >= len(l.t) || (l.t[l.i].kind != tokString && !l.isName()) {
		return true, false, false
	}
	l.i++
	if l.eatByte('@') {
		if l.i >= len(l.t) || (l.t[l.i].kind != tokString && !l.isName()) {
			return true, false, false
		}
		l.i++
	}
	return true, true, true
}

// options reads the clauses before a view's or routine's object word, in
// any order: ALGORITHM = a, DEFINER = account, SQL SECURITY x. other is
// true when the DEFINER is not CURRENT_USER.
func (l *lead) options() (other, ok bool) {
	for {
		switch {
		case l.at("definer"):
			_, o, good := l.definer()
			if !good {
				return false, false
			}
			other = other || o
		case l.eat("algorithm"):
			if !l.eatByte('=') || !l.isName() {
				return false, false
			}
			l.i++
		case l.at("sql") && l.i+1 < len(l.t) && l.t[l.i+1].is(l.text, "security"):
			l.i += 2
			if !l.eat("definer", "invoker") {
				return false, false
			}
		default:
			return other, true
		}
	}
}

// serverSetting reports whether a piece holds a SET of a server-wide
// setting as its words say: SET or a "," at depth 0 followed by GLOBAL,
// PERSIST or PERSIST_ONLY and a name, or @@ followed by one of those words
// and a ".". A text the server refuses either way is only denied by
// another rule.
func serverSetting(text string, pc *piece) bool {
	var ts []token
	for i := pc.lo; ; {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		ts = append(ts, t)
		i = t.hi
	}
	scope := func(k int) bool {
		return k < len(ts) && (ts[k].is(text, "global") || ts[k].is(text, "persist") || ts[k].is(text, "persist_only"))
	}
	set, depth := false, 0
	for k, t := range ts {
		switch {
		case t.kind == '(':
			depth++
		case t.kind == ')':
			depth--
		case t.is(text, "set"):
			set = true
			if scope(k+1) && k+2 < len(ts) && (ts[k+2].kind == tokWord || ts[k+2].kind == tokIdent) {
				return true
			}
		case set && depth == 0 && t.kind == ',' && scope(k+1) && k+2 < len(ts) && (ts[k+2].kind == tokWord || ts[k+2].kind == tokIdent):
			return true
		case set && t.kind == '@' && k+2 < len(ts) && ts[k+1].kind == '@' && scope(k+2):
			return true
		}
	}
	return false
}

// classifyLead recognizes a piece TiDB did not parse by its leading words
// (see the table above); ok is false when nothing about it is certain.
func classifyLead(text string, pc *piece) (st engine.StmtFacts, ok bool) {
	l := &lead{text: text, t: pc.lead}
	ddl := func(verb engine.DDLVerb, object string) {
		st.Kind, st.Verb, st.Object, ok = engine.KindDDL, verb, object, true
	}
	switch {
	case l.eat("install"):
		if l.at("plugin", "soname") {
			ddl(engine.VerbCreate, "plugin")
			st.Effects |= engine.EffLoadsCode
		}
	case l.eat("uninstall"):
		if l.at("plugin", "soname") {
			ddl(engine.VerbDrop, "plugin")
			st.Effects |= engine.EffLoadsCode
		}
	case l.eat("create"):
		if l.eat("or") && !l.eat("replace") {
			return st, false
		}
		other, good := l.options()
		if !good {
			return st, false
		}
		l.eat("aggregate")
		object := ""
		switch {
		case l.eat("function"):
			object = "function"
		case l.eat("procedure"):
			object = "procedure"
		case l.eat("trigger"):
			object = "trigger"
		case l.eat("event"):
			object = "event"
		case l.eat("view"):
			object = "view"
		case l.eat("server"):
			ddl(engine.VerbCreate, "server")
			st.Effects |= engine.EffOpensConnection
			return st, true
		case l.at("user", "role"):
			st.Kind, st.Verb, st.Object = engine.KindDCL, engine.VerbCreate, l.text[l.t[l.i].lo:l.t[l.i].hi]
			st.Object = strings.ToLower(st.Object)
			return st, true
		default:
			// CREATE TABLE and the others TiDB knows failed for a reason
			// of their own: nothing is certain.
			return st, false
		}
		ddl(engine.VerbCreate, object)
		if other && (object == "trigger" || object == "event" || !pc.invoker) {
			// Triggers and events always run as their definer; routines
			// and views unless SQL SECURITY INVOKER.
			st.Effects |= engine.EffChangesIdentity
		}
		if l.eat("if") && !(l.eat("not") && l.eat("exists")) {
			return st, true
		}
		schema, _, named := l.name()
		if !named {
			return st, true
		}
		if systemSchema(schema) {
			st.Effects |= engine.EffWritesCatalog // mysql.proc, mysql.event
		}
		if schema == "" && (object == "function" || object == "procedure") {
			// CREATE FUNCTION f ... in a session whose database is mysql
			// creates mysql.f (currentdb.go)
			routineInDatabases(&st)
		}
		if object == "trigger" && l.eat("before", "after") && l.eat("insert", "update", "delete") && l.eat("on") {
			if ts, tn, ok := l.name(); ok {
				st.Tables = append(st.Tables, engine.TableRef{Schema: ts, Name: tn, Write: true})
				tableEffects(&st)
			}
		}
	case l.at("alter") && l.i+1 < len(l.t) && l.t[l.i+1].is(text, "user"):
		// ALTER USER USER() / CURRENT_USER: the session's own account
		st.Kind, st.Verb, st.Object, ok = engine.KindDCL, engine.VerbAlter, "user", true
		own := func(k int) bool { // USER() or CURRENT_USER[()]
			return k < len(l.t) && (l.t[k].is(text, "current_user") ||
				l.t[k].is(text, "user") && k+2 < len(l.t) && l.t[k+1].kind == '(' && l.t[k+2].kind == ')')
		}
		if own(l.i + 2) {
			st.Object = ""
			for k := l.i + 3; k < len(l.t); k++ {
				if l.t[k].kind == ',' {
					st.Object = "user" // and another account after it
				}
			}
		}
	case l.eat("alter"):
		other, good := l.options()
		if !good {
			return st, false
		}
		if o := l.object("event", "function", "procedure", "server", "view"); o != "" {
			ddl(engine.VerbAlter, o)
			if other && (o == "event" || o == "view" && !pc.invoker) {
				st.Effects |= engine.EffChangesIdentity // ALTER DEFINER = u VIEW, EVENT
			}
			if o == "server" {
				st.Effects |= engine.EffOpensConnection
			} else if schema, _, _ := l.name(); systemSchema(schema) {
				st.Effects |= engine.EffWritesCatalog
			}
		}
	case l.eat("load"):
		if l.eat("data") || l.eat("xml") {
			l.eat("low_priority", "concurrent")
			st.Kind, st.Kinds, st.CopyDir = engine.KindCopy, 1<<engine.KindInsert, engine.CopyFrom
			switch {
			case l.eat("local"):
				st.Copy, ok = engine.CopyStdio, true
			case l.at("infile"):
				st.Copy, st.Effects, ok = engine.CopyFile, engine.EffReadsServerFile, true
			}
		}
	case l.eat("grant"):
		return grant(text, pc, engine.VerbGrant)
	case l.eat("revoke"):
		return grant(text, pc, engine.VerbRevoke)
	case l.eat("rename"):
		if l.at("user") {
			st.Kind, st.Verb, st.Object, ok = engine.KindDCL, engine.VerbAlter, "user", true
		}
	case l.at("drop") && l.i+1 < len(l.t) && (l.t[l.i+1].is(text, "user") || l.t[l.i+1].is(text, "role")):
		st.Kind, st.Verb, st.Object, ok = engine.KindDCL, engine.VerbDrop, l.t[l.i+1].name(text), true
	case l.eat("drop"):
		if o := l.object("function", "procedure", "trigger", "event", "server"); o != "" {
			ddl(engine.VerbDrop, o)
			if l.eat("if") && !l.eat("exists") {
				return st, true
			}
			if schema, _, _ := l.name(); systemSchema(schema) && o != "trigger" && o != "server" {
				st.Effects |= engine.EffWritesCatalog
			}
		}
	case l.eat("change"):
		if l.at("master") || l.eat("replication") && l.at("source") {
			st.Effects, ok = engine.EffOpensConnection, true
		}
	case l.eat("start"):
		if l.at("slave", "replica") || l.eat("all") && l.at("slaves", "replicas") {
			st.Effects, ok = engine.EffOpensConnection, true
		}
	case l.eat("execute"):
		if l.eat("immediate") {
			return immediate(text, l)
		}
	case l.eat("prepare"):
		// TiDB parses PREPARE s FROM 'text' and FROM @v: one here prepares
		// an expression (MariaDB: CONCAT(...), 'a' 'b'), text the server
		// assembles as it runs
		if _, _, named := l.name(); named && l.eat("from") {
			st.DynamicSQL, ok = true, true
		}
	case l.at("update", "delete"):
		if st, ok := portionOf(text, pc); ok {
			return st, true
		}
		if l.at("delete") {
			return returning(text, pc)
		}
	case l.at("insert", "replace"):
		return returning(text, pc)
	case l.eat("set"):
		if l.at("statement") {
			return setStatement(text, pc, l.t[l.i])
		}
		if l.eat("password") {
			// SET PASSWORD [FOR account] = OLD_PASSWORD(...) and the other
			// forms TiDB does not parse: another account's password is
			// its takeover (ddl.go classify).
			st.Kind, st.Verb = engine.KindDCL, engine.VerbAlter
			if l.eat("for") && !l.at("current_user") {
				st.Object = "user"
			}
			return st, true
		}
		if l.eat("default") && l.at("role") {
			// MariaDB's SET DEFAULT ROLE r [FOR account]: the roles the
			// account's sessions start with, which may hold anything.
			st.Kind, st.Effects = engine.KindSetStmt, engine.EffGrantsPrivilege
			return st, true
		}
	}
	return st, ok
}

// grant recognizes a GRANT or REVOKE TiDB does not parse (MariaDB's
// privileges: SET USER, BINLOG ADMIN, READ_ONLY ADMIN, ...; IDENTIFIED
// VIA; ON PACKAGE): as the parsed ones (effects.go), a GRANT hands out
// control of the server when it is global (ON *.*) or on the mysql schema,
// of SUPER, FILE, PROCESS, RELOAD, SHUTDOWN or CREATE USER, WITH GRANT
// OPTION, IDENTIFIED (it creates the account or sets its password) or
// PROXY. Without ON it grants roles.
func grant(text string, pc *piece, verb engine.DDLVerb) (st engine.StmtFacts, ok bool) {
	st.Kind, st.Verb, st.Object = engine.KindDCL, verb, "user"
	var privs, roles []string
	on, global, mysqlLevel, proxy, dangerous, unqualified := false, false, false, false, false, false
	depth, toSeen, expectName := 0, false, true
	var prev token
	for i, first := pc.lo, true; i < pc.hi; first = false {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		i = t.hi
		switch {
		case t.kind == '(':
			depth++
		case t.kind == ')':
			depth--
		case depth > 0:
		case first:
			// GRANT or REVOKE itself
		case !on && !toSeen && t.is(text, "on"):
			on = true
			// [TABLE | FUNCTION | PROCEDURE | PACKAGE [BODY]] level
			lv, _ := nextToken(text[:pc.hi], i)
			for lv.is(text, "table") || lv.is(text, "function") || lv.is(text, "procedure") || lv.is(text, "package") || lv.is(text, "body") {
				i = lv.hi
				lv, _ = nextToken(text[:pc.hi], i)
			}
			dot, _ := nextToken(text[:pc.hi], lv.hi)
			star, _ := nextToken(text[:pc.hi], dot.hi)
			switch {
			case lv.kind == '*' && dot.kind == '.' && star.kind == '*':
				global = true
			case (lv.kind == tokWord || lv.kind == tokIdent) && dot.kind == '.' && coversSystem(lv.name(text)):
				mysqlLevel = true // ON mysql.*, ON `m_sql`.*, ON `%`.t (currentdb.go)
			case dot.kind != '.':
				unqualified = true // ON * or ON t: the current database's
			}
		case !on && !toSeen && (t.is(text, "to") || t.is(text, "from")):
			toSeen = true
		case !on && !toSeen && t.kind == tokWord:
			if len(privs) == 0 && t.is(text, "proxy") {
				proxy = true
			}
			w := t.name(text)
			privs = append(privs, w)
			if prev.kind == tokWord && prev.is(text, "create") && w == "user" {
				dangerous = true
			}
			switch w {
			case "super", "file", "process", "reload", "shutdown", "grant":
				dangerous = true
			}
			if expectName {
				roles = append(roles, w)
			}
			expectName = false
		case !on && !toSeen && t.kind == tokIdent:
			if expectName {
				roles = append(roles, t.name(text))
			}
			expectName = false
		case !on && !toSeen && t.kind == ',':
			expectName = true
		case t.is(text, "identified"):
			if verb == engine.VerbGrant {
				st.Effects |= engine.EffGrantsPrivilege
			}
		case t.is(text, "option") && prev.is(text, "grant") && verb == engine.VerbGrant:
			st.Effects |= engine.EffGrantsPrivilege // WITH GRANT OPTION
		}
		prev = t
	}
	if !toSeen && !on {
		return st, false
	}
	if !on {
		// What a role holds is not in the text: it may be anything,
		// granted or revoked (REVOKE ALL PRIVILEGES, GRANT OPTION FROM u
		// takes every privilege).
		if verb == engine.VerbGrant {
			st.Object, st.Roles = "role", roles
		}
		st.Effects |= engine.EffGrantsPrivilege
		return st, true
	}
	if verb == engine.VerbGrant {
		// TO an account that may not exist (grantee.go): CURRENT_USER
		// is not told apart here, which can only deny more
		st.CreatesGrantee = engine.GranteeMay
	}
	if global || mysqlLevel || proxy && verb == engine.VerbGrant || dangerous {
		// (a REVOKE at these levels takes control of the server from
		// whoever held it: currentdb.go revokeEffects)
		st.Effects |= engine.EffGrantsPrivilege
	}
	if unqualified && st.Effects&engine.EffGrantsPrivilege == 0 {
		for _, db := range systemDatabases {
			in := st
			in.Effects |= engine.EffGrantsPrivilege
			st.InDatabase = append(st.InDatabase, engine.DatabaseFacts{Database: db, Facts: in})
		}
	}
	return st, true
}

// depthTokens returns the tokens of a piece with the parenthesis depth at
// each (an opening parenthesis counts itself: it is at depth 1).
func depthTokens(text string, pc *piece) (ts []token, depths []int) {
	depth := 0
	for i := pc.lo; i < pc.hi; {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		i = t.hi
		switch t.kind {
		case '(':
			depth++
		case ')':
			depth--
		}
		ts, depths = append(ts, t), append(depths, depth)
	}
	return ts, depths
}

// returning is MariaDB's INSERT, REPLACE or DELETE ... RETURNING list: the
// statement's facts with those of SELECT list. The RETURNING is the last
// one at depth 0 before which the statement parses (TiDB does not parse a
// text with the real one in it; a later one is a name in the list).
func returning(text string, pc *piece) (st engine.StmtFacts, ok bool) {
	var at []token
	ts, depths := depthTokens(text, pc)
	for k, t := range ts {
		if depths[k] == 0 && t.is(text, "returning") {
			at = append(at, t)
		}
	}
	for k := len(at) - 1; k >= 0 && k >= len(at)-maxReturning; k-- {
		main, parsed := parsePiece(text[pc.lo:at[k].lo])
		if !parsed || len(main) != 1 {
			continue
		}
		switch main[0].Kind {
		case engine.KindInsert, engine.KindDelete:
		default:
			continue
		}
		list, parsed := parsePiece("SELECT " + text[at[k].hi:pc.hi])
		if !parsed || len(list) != 1 {
			continue
		}
		st = main[0]
		merge(&st, &list[0])
		st.Loc, st.Length = 0, 0
		return st, true
	}
	return st, false
}

// portionOf is MariaDB's DELETE FROM t FOR PORTION OF p FROM a TO b
// [WHERE ...] and UPDATE t FOR PORTION OF p FROM a TO b SET ...
// (application-time periods), which TiDB does not parse: the statement's
// facts without the clause, which only narrows the rows it changes (so a
// WHERE-less one is still WHERE-less), with those of SELECT a, b. The
// clause is the first FOR PORTION OF at depth 0; it ends at the first
// WHERE, SET, ORDER, LIMIT or RETURNING at depth 0 after its TO.
func portionOf(text string, pc *piece) (st engine.StmtFacts, ok bool) {
	ts, depths := depthTokens(text, pc)
	at := -1
	for k := 0; k+2 < len(ts); k++ {
		if depths[k] == 0 && ts[k].is(text, "for") && ts[k+1].is(text, "portion") && ts[k+2].is(text, "of") {
			at = k
			break
		}
	}
	// FOR PORTION OF name FROM
	if at < 0 || at+4 >= len(ts) || !ts[at+4].is(text, "from") {
		return st, false
	}
	from, to, end := at+4, -1, len(ts)
	for k := from + 1; k < len(ts); k++ {
		if depths[k] != 0 || ts[k].kind != tokWord {
			continue
		}
		if to < 0 {
			if ts[k].is(text, "to") {
				to = k
			}
			continue
		}
		if ts[k].is(text, "where") || ts[k].is(text, "set") || ts[k].is(text, "order") || ts[k].is(text, "limit") || ts[k].is(text, "returning") {
			end = k
			break
		}
	}
	if to < 0 || to == from+1 || to+1 == end {
		return st, false
	}
	rest := ""
	if end < len(ts) {
		rest = text[ts[end].lo:pc.hi]
	}
	main, parsed := parsePiece(text[pc.lo:ts[at].lo] + " " + rest)
	if !parsed || len(main) != 1 {
		return st, false
	}
	switch main[0].Kind {
	case engine.KindDelete, engine.KindUpdate:
	default:
		return st, false
	}
	bounds, parsed := parsePiece("SELECT " + text[ts[from].hi:ts[to].lo] + ", " + text[ts[to].hi:ts[end-1].hi])
	if !parsed || len(bounds) != 1 {
		return st, false
	}
	st = main[0]
	merge(&st, &bounds[0])
	st.Loc, st.Length = 0, 0
	return st, true
}

// setStatement is MariaDB's SET STATEMENT var = value [, ...] FOR
// statement: the statement's facts, with those of SET var = value, ...
// (the settings hold while it runs); its FOR is setStatementFor's.
func setStatement(text string, pc *piece, kw token) (st engine.StmtFacts, ok bool) {
	t, found := setStatementFor(text, pc, kw)
	if !found {
		return st, false
	}
	inner := text[t.hi:pc.hi]
	sts, parsed := parsePiece(inner)
	if !parsed {
		sts = recognize(inner)
	}
	if len(sts) == 1 {
		st, ok = sts[0], true
	}
	set, parsed := parsePiece("SET " + text[kw.hi:t.lo])
	if !parsed || len(set) != 1 {
		if ok {
			st.Unparsed = "the settings of a SET STATEMENT could not be parsed"
		}
		return st, ok
	}
	st.Settings = append(st.Settings, set[0].Settings...)
	st.Effects |= set[0].Effects
	st.Kinds |= 1<<engine.KindSetStmt | set[0].Kinds&(1<<engine.KindAlterSystem)
	statementGrantee(&st, text[kw.hi:t.lo]) // grantee.go
	ok = ok || len(set[0].Settings) > 0     // what it sets, whatever the statement is
	first, _ := nextToken(inner, 0)
	dynamic := first.is(inner, "prepare") || first.is(inner, "execute") || first.is(inner, "create") || first.is(inner, "alter")
	for _, name := range set[0].Settings {
		if lexSetting(name) && dynamic && !plainMode(text[kw.hi:t.lo], name) {
			// The statement itself is lexed as read, but the text a
			// PREPARE or EXECUTE IMMEDIATE runs, and the body of a
			// routine, trigger, event or view it creates (stored
			// with the sql_mode it ran under), are lexed under the
			// new setting.
			st.Unparsed = "a statement run under SET STATEMENT of sql_mode or the character set is lexed by the server otherwise than as read"
			ok = true
		}
	}
	st.Loc, st.Length = 0, 0
	return st, ok
}

// setStatementFor returns the FOR of a SET STATEMENT whose SET STATEMENT
// ends at kw: the first FOR at depth 0 after it (a value's subquery can
// hold a FOR UPDATE in parentheses).
func setStatementFor(text string, pc *piece, kw token) (token, bool) {
	depth := 0
	for i := kw.hi; i < pc.hi; {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		i = t.hi
		switch {
		case t.kind == '(':
			depth++
		case t.kind == ')':
			depth--
		case depth == 0 && t.is(text, "for"):
			return t, true
		}
	}
	return token{}, false
}

// plainMode reports whether the assignments in text set name, when it is
// sql_mode, only to string literals without ANSI_QUOTES (or a mode that
// implies it) and NO_BACKSLASH_ESCAPES: modes that do not change lexing.
func plainMode(text, name string) bool {
	return name == "sql_mode" && sqlModeLiterals(text, func(m mode) bool { return !m.ansiQuotes && !m.noBackslash })
}

// sqlModeLiterals reports whether text (a SET's list of settings) assigns
// sql_mode at least once, each time a string literal alone (an expression's
// value is not known here) whose modes hold ok.
func sqlModeLiterals(text string, ok func(mode) bool) bool {
	seen := false
	var prev [2]token
	for i := 0; ; {
		t, more := nextToken(text, i)
		if !more {
			return seen
		}
		i = t.hi
		if prev[1].kind == '=' && prev[0].is(text, "sql_mode") {
			end, more := nextToken(text, i)
			if t.kind != tokString || more && end.kind != ',' || !ok(parseMode(text[t.lo+1:t.hi-1])) {
				return false
			}
			seen = true
		}
		prev[0], prev[1] = prev[1], t
	}
}

// onlyStatement returns the piece of text's one statement, or nil when the
// text holds more than one, none, or a kept executable comment (two
// readings).
func onlyStatement(text string) *piece {
	if _, two := skipReading(text); two {
		return nil
	}
	pieces := cut(text)
	var pc *piece
	for i := range pieces {
		if pieces[i].words == 0 {
			continue
		}
		if pc != nil {
			return nil // more than one statement
		}
		pc = &pieces[i]
	}
	return pc
}

// composed reads a text that is one MariaDB SET STATEMENT v = x, ... FOR
// stmt (Connector/J's query timeout: SET STATEMENT max_statement_time = n
// FOR the query) as parsed when TiDB parses both parts: the SET of
// settings that do not change lexing, and a SELECT, INSERT, UPDATE or
// DELETE, nothing else. Its facts are stmt's with the SET's settings and
// effects: all of what the server runs, so every rule applies, as to a
// parsed text. A text with a kept executable comment (two readings) is not
// composed.
func composed(text string) (engine.StmtFacts, bool) {
	var none engine.StmtFacts
	pc := onlyStatement(text)
	if pc == nil || len(pc.lead) < 2 || !pc.lead[0].is(text, "set") || !pc.lead[1].is(text, "statement") {
		return none, false
	}
	kw := pc.lead[1]
	t, found := setStatementFor(text, pc, kw)
	if !found {
		return none, false
	}
	inner, parsed := parsePiece(text[t.hi:pc.hi])
	if !parsed || len(inner) != 1 {
		return none, false
	}
	st := inner[0]
	switch st.Kind {
	case engine.KindSelect, engine.KindInsert, engine.KindUpdate, engine.KindDelete:
	default:
		return none, false
	}
	set, parsed := parsePiece("SET " + text[kw.hi:t.lo])
	if !parsed || len(set) != 1 || set[0].Kind != engine.KindSetStmt {
		return none, false
	}
	for _, name := range set[0].Settings {
		if lexSetting(name) {
			return none, false
		}
	}
	st.Settings = append(st.Settings, set[0].Settings...)
	st.Effects |= set[0].Effects
	st.Kinds |= 1<<engine.KindSetStmt | set[0].Kinds&(1<<engine.KindAlterSystem)
	st.Loc, st.Length = 0, 0
	return st, true
}

// immediateParsed is composed for MariaDB's EXECUTE IMMEDIATE of one
// string literal, which runs the statement the literal holds now: a text
// that is only
//
//	EXECUTE IMMEDIATE 'text' [USING expr, ...]
//
// has the facts of the one statement in text, when TiDB parses it (and it
// is no USE, whose database change the relay would not see), together with
// those of the USING expressions, so that it is judged as that statement:
// EXECUTE IMMEDIATE 'SELECT 1' is a select, EXECUTE IMMEDIATE 'DELETE FROM
// t' a delete without WHERE. Anything else stays a parse error, with what
// recognize finds (immediate: a literal's statements, or dynamic_sql). Read
// (lex.go) refuses a literal whose text the server would lex under a
// sql_mode other than the one the engine reads it in.
func immediateParsed(text string) (engine.StmtFacts, bool) {
	var none engine.StmtFacts
	pc := onlyStatement(text)
	if pc == nil || len(pc.lead) < 3 || !pc.lead[0].is(text, "execute") || !pc.lead[1].is(text, "immediate") || pc.lead[2].kind != tokString {
		return none, false
	}
	lit := pc.lead[2]
	args := ""
	if pc.words > 3 {
		if len(pc.lead) < 5 || !pc.lead[3].is(text, "using") {
			return none, false
		}
		args = text[pc.lead[3].hi:pc.hi]
	}
	var body string
	parse("PREPARE sqlfw_immediate FROM "+text[lit.lo:lit.hi], func(stmts []ast.StmtNode, err error) {
		if err == nil && len(stmts) == 1 {
			if x, ok := stmts[0].(*ast.PrepareStmt); ok && x.SQLVar == nil {
				body = x.SQLText
			}
		}
	})
	if body == "" {
		return none, false
	}
	if t, ok := nextToken(body, 0); !ok || t.is(body, "use") {
		return none, false
	}
	read, ok := innerRun(body)
	if !ok {
		return none, false
	}
	var tidb []engine.StmtFacts // TiDB's reading of a text with executable comments (facts.go innerRun)
	if read != body {
		if tidb, ok = parsePiece(body); !ok || len(tidb) != 1 {
			return none, false
		}
		body = read
	}
	inner, parsed := parsePiece(body)
	if !parsed || len(inner) != 1 {
		return none, false
	}
	st := inner[0]
	for i := range tidb {
		merge(&st, &tidb[i])
	}
	switch st.Kind {
	case engine.KindSelect, engine.KindInsert, engine.KindUpdate, engine.KindDelete, engine.KindTruncate,
		engine.KindDDL, engine.KindDCL, engine.KindCall, engine.KindDo, engine.KindSetStmt, engine.KindExplain:
	default:
		// PREPARE, EXECUTE, DEALLOCATE (names the relay follows from
		// their own texts), transaction control, SHOW, ...
		return none, false
	}
	if st.Kind == engine.KindSetStmt && setsLexing(body) {
		// the relay follows SET NAMES and sql_mode from their own texts
		// and the server's answer (relay/mysql lexstate.go)
		return none, false
	}
	if args != "" {
		using, parsed := parsePiece("SELECT " + args)
		if !parsed || len(using) != 1 || using[0].Kind != engine.KindSelect {
			return none, false
		}
		// The values are bound to the parameters before the statement
		// runs: judged in their places (DELETE FROM t WHERE ? USING 1 is
		// DELETE FROM t WHERE (1), ... WHERE ? = 1 USING 1 folds), when
		// the statement still reads so; a parameter standing alone as a
		// condition whose value the text does not hold (USING @v), or
		// that could not be put in place, may be true.
		literal := true
		if sub, ok := bindUsing(body, args, true, &literal); ok {
			if in, parsed := parsePiece(sub); parsed && len(in) == 1 && in[0].Kind == st.Kind {
				bareWhere, bareOr := st.BareWhere, st.BareOr
				st = in[0]
				if literal {
					bareWhere, bareOr = 0, false
				}
				st.Unfiltered |= bareWhere
				st.Tautology = st.Tautology || bareOr
			}
		}
		if !literal {
			// an expression is one value for every row, which its text
			// in place may not read as (USING (SELECT id FROM u LIMIT
			// 1) names a column): the rows written as with each one an
			// unknown value too
			if sub, ok := bindUsing(body, args, false, &literal); ok {
				if in, parsed := parsePiece(sub); parsed && len(in) == 1 {
					st.Unfiltered |= in[0].Unfiltered
					st.LimitedWhole |= in[0].LimitedWhole
				}
			}
		}
		if len(st.BareParams) > 0 {
			st.Unfiltered |= st.BareWhere
			st.Tautology = st.Tautology || st.BareOr
		}
		if st.ParamWrite {
			// its values could not be put in place (bound.go)
			st.Unfiltered |= 1<<engine.KindUpdate | 1<<engine.KindDelete
		}
		merge(&st, &using[0])
	}
	st.Loc, st.Length = 0, 0
	return st, true
}

// bindUsing returns body with each parameter (?) replaced by the
// parenthesized USING value of its position, args split at their top-level
// commas; false when their counts differ. A literal or a user variable is
// put in place as it is (sqlprepare.go usingValues); any other expression
// (a function, a subquery) as it is when asIs (for the shapes it makes in
// its place: UNION SELECT (VERSION())), else as a user variable of its
// own, @sqlfw_unknown_N: the server evaluates it once, before the
// statement runs, a value the same for every row that the text does not
// hold. literal is cleared when a value is not a literal.
func bindUsing(body, args string, asIs bool, literal *bool) (string, bool) {
	var toks []token
	for t, ok := nextToken(args, 0); ok; t, ok = nextToken(args, t.hi) {
		toks = append(toks, t)
	}
	vals := usingValues(args, toks)
	if asIs {
		vals = splitArgs(args, toks)
	}
	for i, v := range vals {
		switch {
		case v == "":
			vals[i] = "@sqlfw_unknown_" + strconv.Itoa(i)
			*literal = false
		case usingValue(v, argToks(v)) != v || v[0] == '@':
			*literal = false
		}
	}
	var b strings.Builder
	n, at := 0, 0
	for t, ok := nextToken(body, 0); ok; t, ok = nextToken(body, t.hi) {
		if t.kind != '?' {
			continue
		}
		if n >= len(vals) {
			return "", false
		}
		b.WriteString(body[at:t.lo])
		b.WriteString("(" + vals[n] + ")")
		at = t.hi
		n++
	}
	if n != len(vals) {
		return "", false
	}
	b.WriteString(body[at:])
	return b.String(), true
}

// splitArgs returns the USING values' texts as written, split at the
// top-level commas.
func splitArgs(args string, toks []token) []string {
	var out []string
	for _, v := range topLevelList(toks) {
		out = append(out, argText(args, v))
	}
	return out
}

func argText(args string, toks []token) string {
	if len(toks) == 0 {
		return ""
	}
	return args[toks[0].lo:toks[len(toks)-1].hi]
}

// argToks tokenizes one value's text.
func argToks(v string) []token {
	var toks []token
	for t, ok := nextToken(v, 0); ok; t, ok = nextToken(v, t.hi) {
		toks = append(toks, t)
	}
	return toks
}

// setsLexing reports whether a SET text names sql_mode or a character set
// or collation (SET NAMES, SET CHARACTER SET, character_set_client, ...).
func setsLexing(text string) bool {
	for t, ok := nextToken(text, 0); ok; t, ok = nextToken(text, t.hi) {
		if t.kind != tokWord && t.kind != tokIdent {
			continue
		}
		n := t.name(text)
		if n == "names" || n == "charset" || n == "sql_mode" || strings.HasPrefix(n, "character") || strings.HasPrefix(n, "collation") {
			return true
		}
	}
	return false
}

// lexSetting reports whether a system variable changes how the server
// lexes text (lex.go).
func lexSetting(name string) bool {
	switch name {
	case "sql_mode", "character_set_client", "character_set_connection", "collation_connection", "names", "character_set":
		return true
	}
	return false
}

// immediate is MariaDB's EXECUTE IMMEDIATE: a string literal is analysed
// as the statements it holds, as PREPARE ... FROM 'text' is; anything else
// is SQL text computed at run time.
func immediate(text string, l *lead) (st engine.StmtFacts, ok bool) {
	if l.i >= len(l.t) {
		return st, false
	}
	lit := l.t[l.i]
	if lit.kind != tokString {
		st.DynamicSQL = true
		return st, true
	}
	l.i++
	if l.i < len(l.t) && !l.at("using") {
		// 'a' 'b' (one string to the server: 'DELETE FROM ' 't'),
		// 'a' || x, ...: not one literal TiDB reads, so text assembled
		// at run time as for any other expression
		st.DynamicSQL = true
		return st, true
	}
	// The literal, lexed as the server lexes it, in a statement TiDB has.
	prep := "PREPARE sqlfw_immediate FROM " + text[lit.lo:lit.hi]
	parse(prep, func(stmts []ast.StmtNode, err error) {
		if err != nil || len(stmts) != 1 {
			return
		}
		x, isPrep := stmts[0].(*ast.PrepareStmt)
		if !isPrep {
			return
		}
		w := &walker{st: &st}
		w.prepare(x)
		ok = true
		if mayDiffer(&st, w.dependent) {
			// its statements in the session's database (currentdb.go)
			for _, db := range systemDatabases {
				var v engine.StmtFacts
				(&walker{st: &v, db: db}).prepare(x)
				if v.Effects != st.Effects || v.CatalogUnion != st.CatalogUnion {
					st.InDatabase = append(st.InDatabase, engine.DatabaseFacts{Database: db, Facts: v})
				}
			}
		}
	})
	return st, ok
}
