package mysql

import (
	"reflect"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// A routine's body keeps its kind: the statements of a procedure,
// function, trigger or event body are what CALL, a query or the server
// runs later, so they count as the CREATE's own, whatever the body's form —
// one statement (CREATE PROCEDURE p() TRUNCATE t), BEGIN [NOT ATOMIC] ...
// END, a label, IF / CASE / WHILE / LOOP / REPEAT / FOR blocks, DECLARE
// ... HANDLER FOR statement, or RETURN expression (a function's):
//
//	CREATE PROCEDURE p() TRUNCATE t       ddl create procedure, kinds ddl+truncate
//	CREATE PROCEDURE p() DELETE FROM t    ... and without_where, as DELETE FROM t
//	CREATE FUNCTION f() RETURNS INT RETURN (SELECT ... FROM mysql.user)
//	                                      ... and the facts of SELECT (...)
//	CREATE TRIGGER tr ... FOR EACH ROW DELETE FROM t
//
// TiDB parses CREATE PROCEDURE with most bodies (routineBody adds a
// single-statement body's kind and effects; the walker walks the blocks:
// facts.go procedure). Functions, triggers, events and the bodies TiDB
// rejects are parse errors whose certain facts unparsed.go collects piece by
// piece; for those, routinePiece finds where a body that is one statement
// starts (BEGIN cuts a piece of its own: cut) and judges it as its own
// statement, and blockStatement judges the statement a piece holds after
// the words that open a block (IF c THEN DELETE FROM t).

// routineBody adds the kind and the effects of a procedure body that is one
// statement; its nodes are walked as the procedure's.
func (w *walker) routineBody(body ast.StmtNode) {
	if body == nil || procedural(body) {
		return // blocks: procedure, procedureChild
	}
	k, _, _ := classify(body)
	w.st.Kinds |= 1 << k
	statementEffects(w.st, body)
}

// bodyEntries appends to sts, for each statement of a parsed procedure's
// body that has a DDL or DCL verb of its own (CREATE PROCEDURE p() SET
// PASSWORD FOR root@localhost = PASSWORD('x') alters an account when CALLed),
// its facts as an entry of their own, located in text, as mariadb.go
// gives the body statements of the programs it reads: the CREATE's facts
// hold its kind and effects (routineBody, procedure), but one statement has
// one verb and object, the CREATE's. Its names resolve in the routine's
// database, not the session's, which the engine cannot know: they are
// judged as an application's.
func bodyEntries(sts []engine.StmtFacts, text string, body ast.StmtNode) []engine.StmtFacts {
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		s, ok := n.(ast.StmtNode)
		if !ok || procedural(n) {
			eachChild(n, walk)
			return
		}
		if _, verb, _ := classify(s); verb == engine.VerbNone {
			return
		}
		var in engine.StmtFacts
		fillStmtIn(&in, s, 0, "")
		if t := s.Text(); t != "" {
			if k := strings.Index(text, t); k >= 0 {
				in.Loc, in.Length = int32(k), int32(len(t))
			}
		}
		sts = append(sts, in)
	}
	if body != nil {
		walk(body)
	}
	return sts
}

// eachChild calls f with every node n holds, found by reflection so that no
// field is missed (a procedure part's Accept does not visit them).
func eachChild(n ast.Node, f func(ast.Node)) {
	v := reflect.ValueOf(n)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	child := func(c reflect.Value) {
		if (c.Kind() == reflect.Interface || c.Kind() == reflect.Pointer) && c.IsNil() {
			return
		}
		if node, ok := c.Interface().(ast.Node); ok {
			f(node)
		}
	}
	for i := 0; i < v.NumField(); i++ {
		fv := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch fv.Kind() {
		case reflect.Interface, reflect.Pointer:
			child(fv)
		case reflect.Slice:
			for j := 0; j < fv.Len(); j++ {
				child(fv.Index(j))
			}
		}
	}
}

// maxBodyTries bounds the parses one piece's body costs.
const maxBodyTries = 4

// routinePiece adds to st, the facts of a CREATE FUNCTION, PROCEDURE,
// TRIGGER or EVENT piece TiDB rejected, those of its body when the body is
// one statement in the same piece.
func routinePiece(text string, pc *piece, st *engine.StmtFacts) {
	if pc.compound || st.Kind != engine.KindDDL || st.Verb != engine.VerbCreate {
		return
	}
	ts, depths := depthTokens(text, pc)
	at := bodyStart(text, ts, depths, st.Object)
	if at < 0 {
		return
	}
	for _, in := range bodyStatement(text, ts[at].lo, pc.hi, 0) {
		merge(st, &in)
	}
}

// bodyStart returns the index of the token a single-statement body of an
// object of that type starts at, or -1.
func bodyStart(text string, ts []token, depths []int, object string) int {
	switch object {
	case "trigger":
		// ... FOR EACH ROW [FOLLOWS | PRECEDES other] body
		for k := 0; k+3 < len(ts); k++ {
			if depths[k] == 0 && ts[k].is(text, "for") && ts[k+1].is(text, "each") && ts[k+2].is(text, "row") {
				k += 3
				if ts[k].is(text, "follows") || ts[k].is(text, "precedes") {
					k += 2
					if k < len(ts) && ts[k].kind == '.' {
						k += 2 // schema.name
					}
				}
				if k < len(ts) {
					return k
				}
				return -1
			}
		}
	case "event":
		// ... ON SCHEDULE ... DO body
		for k := range ts {
			if depths[k] == 0 && ts[k].is(text, "do") && k+1 < len(ts) {
				return k + 1
			}
		}
	case "function":
		// ... RETURNS type [characteristics] RETURN expr: the RETURN ends
		// the characteristics (a single-statement function body is one).
		returns := false
		for k := range ts {
			if depths[k] != 0 {
				continue
			}
			switch {
			case ts[k].is(text, "returns"):
				returns = true
			case returns && ts[k].is(text, "return"):
				return k
			}
		}
	case "procedure":
		// name ( params ) [characteristics] body
		k := 0
		for k < len(ts) && !(ts[k].kind == '(' && depths[k] == 1) {
			k++
		}
		for k < len(ts) && !(ts[k].kind == ')' && depths[k] == 0) {
			k++
		}
		return characteristicsEnd(text, ts, k+1)
	}
	return -1
}

// characteristicsEnd skips a routine's characteristics from ts[k] and
// returns the index of the token after them, or -1.
func characteristicsEnd(text string, ts []token, k int) int {
	for k < len(ts) {
		t := ts[k]
		switch {
		case t.is(text, "comment"):
			k += 2
		case t.is(text, "language") || t.is(text, "contains"):
			k += 2 // LANGUAGE SQL, CONTAINS SQL
		case t.is(text, "not") || t.is(text, "deterministic"):
			k++
		case t.is(text, "no") && k+1 < len(ts) && ts[k+1].is(text, "sql"):
			k += 2
		case (t.is(text, "reads") || t.is(text, "modifies")) && k+2 < len(ts) && ts[k+2].is(text, "data"):
			k += 3
		case t.is(text, "sql") && k+1 < len(ts) && ts[k+1].is(text, "security"):
			k += 3
		default:
			return k
		}
	}
	return -1
}

// blockWords open a block whose first statement follows them in the same
// piece.
var blockWords = []string{"then", "else", "do", "loop", "repeat"}

// bodyStatement returns the facts of text[lo:hi], a body's statement: the
// facts of SELECT expr for RETURN expr; of the statement after the words
// that open a block (IF c THEN stmt, WHILE c DO stmt, lbl: LOOP stmt,
// DECLARE ... HANDLER FOR cond stmt); of the statement itself when TiDB
// parses it; else what is certain of it (unparsed.go).
func bodyStatement(text string, lo, hi, depth int) []engine.StmtFacts {
	body := text[lo:hi]
	first, ok := nextToken(body, 0)
	if !ok {
		return nil
	}
	if first.is(body, "return") {
		if sts, ok := parsePiece("SELECT " + body[first.hi:]); ok {
			return sts
		}
		return recognizeRead(body[first.hi:])
	}
	if sts, ok := parsePiece(body); ok {
		return sts
	}
	if depth < maxBodyTries {
		if at := blockOpen(body); at > 0 {
			return bodyStatement(body, at, len(body), depth+1)
		}
	}
	return recognizeRead(body)
}

// blockOpen returns the offset in body after the first word at depth 0
// that opens a block holding a statement (blockWords, a label's ":", a
// handler's conditions), or 0.
func blockOpen(body string) int {
	depth := 0
	handler := false
	var prev token
	for i := 0; ; {
		t, ok := nextToken(body, i)
		if !ok {
			return 0
		}
		i = t.hi
		switch t.kind {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth != 0 {
			prev = t
			continue
		}
		if handler {
			// FOR cond [, cond]: SQLEXCEPTION, SQLWARNING, NOT FOUND,
			// SQLSTATE [VALUE] 'x', an error number or a condition name
			switch {
			case t.is(body, "for"), t.kind == ',', t.is(body, "not"), t.is(body, "value"),
				t.is(body, "sqlstate"), t.kind == tokString:
			case prev.is(body, "for") || prev.kind == ',' || prev.is(body, "not"):
			default:
				return t.lo
			}
			prev = t
			continue
		}
		switch {
		case t.is(body, "handler"):
			handler = true
		case t.kind == ':' && (prev.kind == tokWord || prev.kind == tokIdent):
			if next, ok := nextToken(body, i); ok && (next.is(body, "begin") || next.is(body, "loop") ||
				next.is(body, "repeat") || next.is(body, "while") || next.is(body, "for")) {
				if next.is(body, "loop") || next.is(body, "repeat") {
					return next.hi
				}
				return t.hi
			}
		default:
			for _, w := range blockWords {
				if t.is(body, w) {
					return t.hi
				}
			}
		}
		prev = t
	}
}

// blockLeads start a piece that is a compound statement's part: a block's
// opening with its first statement, a handler, a function's RETURN.
var blockLeads = []string{"if", "elseif", "else", "while", "repeat", "loop", "case", "when", "declare", "return", "for"}

// blockPiece returns the facts of the statement a piece TiDB rejected holds
// after the words that open a block, or of RETURN's expression; nil when
// the piece starts with none of them.
func blockPiece(text string, pc *piece) []engine.StmtFacts {
	if len(pc.lead) == 0 {
		return nil
	}
	lead := pc.lead[0].is(text, "return") || len(pc.lead) > 1 && pc.lead[1].kind == ':'
	for _, w := range blockLeads {
		lead = lead || pc.lead[0].is(text, w)
	}
	if !lead {
		return nil
	}
	body := text[pc.lo:pc.hi]
	if first, _ := nextToken(body, 0); first.is(body, "return") {
		return bodyStatement(text, pc.lo, pc.hi, 0)
	}
	at := blockOpen(body)
	if at <= 0 {
		return nil
	}
	return bodyStatement(body, at, len(body), 1)
}
