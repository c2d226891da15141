package mysql

import (
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
