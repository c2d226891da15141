package mysql

import (
	"github.com/sqlfw/sqlfw/engine"
)

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
