package mysql

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

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
	// A SET of sql_mode or the character set is judged as the SET it is
	// (EXECUTE IMMEDIATE 'SET sql_mode = ...' is that SET, run now): the
	// relay follows it as it follows the SET itself (relay/mysql
	// lexstate.go: the answer's status flags give the lexing modes, the
	// literal's SET the rest; what it cannot read leaves the state
	// unknown), and nothing after it in the same text is read (lex.go:
	// any EXECUTE may change the lexing state).
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
