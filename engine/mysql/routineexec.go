package mysql

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// SQL-level prepared statements inside a stored routine's body (issue 21).
// At the top of a session the relay judges EXECUTE s by the statement the
// server holds under s, with the values bound (relay/mysql sqlprepare.go);
// inside a body nobody does: the body's EXECUTE runs when the routine is
// CALLed, on the prepared statements of the calling session, which the
// body shares. So, for a CREATE of a procedure, function, trigger or
// event:
//
//   - a body's EXECUTE s [USING ...] runs what the body's PREPARE s FROM
//     'text' holds only when that PREPARE is before it in the same
//     statement list with only plain statements between (PREPARE s FROM
//     'text'; SELECT 1; EXECUTE s: unsureExecute), which every path to the
//     EXECUTE then runs (a PREPARE
//     that fails leaves no statement under s: MariaDB deallocates the old
//     one first). Any other EXECUTE (of a name the body does not prepare,
//     prepared in an IF branch, a handler or a loop before it, or after a
//     DEALLOCATE) may run the caller's statement under that name, which
//     was judged, if at all, with other values or in another mode: it is
//     dynamic SQL, denied as unsure (no-dynamic-sql);
//   - a body's PREPAREd text whose rows its parameters decide (DELETE FROM
//     t WHERE ?, WHERE ? IS NULL OR id = ?) is judged with the values not
//     known, which may be any: the write is unfiltered, as EXECUTE
//     IMMEDIATE ... USING an unknown value is (immediate.go).
//
// Example: CREATE PROCEDURE p() EXECUTE s USING 1 is dynamic SQL (the
// session may hold PREPARE s FROM 'DELETE FROM t WHERE ?'); CREATE
// PROCEDURE p() BEGIN PREPARE s FROM 'DELETE FROM t WHERE ?'; EXECUTE s
// USING 1; END deletes every row (no-unfiltered-writes).
func routineExecutes(text string, sts []engine.StmtFacts) {
	for i := range sts {
		st := &sts[i]
		if st.Verb != engine.VerbCreate && st.Verb != engine.VerbAlter {
			continue
		}
		switch st.Object {
		case "procedure", "function", "trigger", "event":
		default:
			continue
		}
		lo, hi := int(st.Loc), int(st.Loc)+int(st.Length)
		if st.Length <= 0 || lo < 0 || hi > len(text) {
			lo, hi = 0, len(text)
		}
		body := text[lo:hi]
		if !containsWordFold(body, "execute") && !containsWordFold(body, "prepare") {
			continue // the cost of the rest only for bodies that name them
		}
		if st.BareWhere != 0 || st.BareOr || st.ParamWrite {
			st.Unfiltered |= st.BareWhere
			st.Tautology = st.Tautology || st.BareOr
			if st.ParamWrite {
				st.Unfiltered |= st.Kinds & (1<<engine.KindUpdate | 1<<engine.KindDelete)
			}
		}
		if unsureExecute(body) {
			st.DynamicSQL = true
		}
	}
}

// unsureExecute reports whether a routine's text holds an EXECUTE (not
// EXECUTE IMMEDIATE) that may run another statement than the body's own
// PREPARE name FROM 'literal' (routineExecutes). The PREPARE must be in
// the same statement list before it, and the statements between must leave
// the name as the PREPARE made it: each a plain statement (no compound
// statement, label, DECLARE, CALL, PREPARE, DEALLOCATE, EXECUTE IMMEDIATE,
// LEAVE, ITERATE, GOTO, RETURN, SIGNAL or RESIGNAL in it, so nothing
// re-prepares the name, runs another routine that could, or jumps back
// before the PREPARE), none naming a user variable the prepared text
// reads, and no handler declared before them that calls, prepares,
// deallocates or executes (a CONTINUE handler runs between two statements
// and comes back). A stored function or trigger a statement calls or fires
// cannot prepare (MariaDB refuses dynamic SQL there).
func unsureExecute(text string) bool {
	pending := map[string]string{} // name -> the prepared literal, lower-cased
	risky := false                 // a handler that may re-prepare
	var stmt []token
	depth := 0
	end := func() bool {
		defer func() { stmt = stmt[:0] }()
		if len(stmt) == 0 {
			return false
		}
		first := stmt[0]
		for k, t := range stmt {
			if t.is(text, "execute") && !(k+1 < len(stmt) && stmt[k+1].is(text, "immediate")) {
				if k != 0 || len(stmt) < 2 {
					return true // a handler's EXECUTE, or one inside another statement
				}
			}
		}
		switch {
		case first.is(text, "prepare") && len(stmt) == 4 && stmt[2].is(text, "from") && stmt[3].kind == tokString && isNameTok(stmt[1]):
			pending[strings.ToLower(stmt[1].name(text))] = strings.ToLower(text[stmt[3].lo:stmt[3].hi])
			return false
		case first.is(text, "execute") && !stmt[1].is(text, "immediate"):
			if !isNameTok(stmt[1]) {
				return true
			}
			_, ok := pending[strings.ToLower(stmt[1].name(text))]
			return !ok
		}
		if first.is(text, "declare") && stmtHas(text, stmt, "handler") &&
			stmtHas(text, stmt, "call", "prepare", "deallocate", "execute") {
			risky = true
		}
		if risky || len(stmt) > 1 && stmt[1].kind == ':' || first.isAny(text, "if", "case", "while", "loop", "repeat", "for", "begin", "end",
			"declare", "until", "elseif", "when") ||
			stmtHas(text, stmt, "call", "prepare", "deallocate", "immediate", "leave", "iterate", "goto", "return", "signal", "resignal") {
			clear(pending)
			return false
		}
		src := strings.ToLower(text[first.lo:stmt[len(stmt)-1].hi])
		for name, lit := range pending {
			for k := strings.IndexByte(src, '@'); k >= 0; k = nextAt(src, k) {
				e := k + 1
				for e < len(src) && isIdentByte(src[e]) {
					e++
				}
				if e > k+1 && strings.Contains(lit, src[k:e]) {
					delete(pending, name) // SET @v between, @v read by the prepared text
				}
			}
		}
		return false
	}
	for t, ok := nextToken(text, 0); ok; t, ok = nextToken(text, t.hi) {
		switch t.kind {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth <= 0 {
				if end() {
					return true
				}
				continue
			}
		}
		if depth <= 0 && t.isAny(text, "begin", "then", "else", "do", "loop", "repeat", "atomic") && !plainStatement(text, stmt, t) {
			// a statement list starts: what came before is a compound
			// statement's header
			stmt = append(stmt, t)
			if end() {
				return true
			}
			clear(pending)
			continue
		}
		stmt = append(stmt, t)
	}
	return end()
}

// plainStatement reports whether t, a word that may start a statement
// list, is instead a word of a plain statement: DO as a statement's first
// word (DO 1; the DO of WHILE c DO and of an event's body never is), or a
// CASE expression's or IF's THEN and ELSE in a statement that SELECT, DO,
// SET, INSERT, UPDATE, DELETE, REPLACE or VALUES starts (SELECT CASE WHEN
// a THEN 1 ELSE 2 END): no compound statement starts with those words, so
// a list cannot begin in one (a label is a word then ':').
func plainStatement(text string, stmt []token, t token) bool {
	if len(stmt) == 0 {
		return t.is(text, "do")
	}
	if len(stmt) > 1 && stmt[1].kind == ':' {
		return false
	}
	return t.isAny(text, "then", "else") &&
		stmt[0].isAny(text, "select", "do", "set", "insert", "update", "delete", "replace", "values")
}

func nextAt(s string, k int) int {
	n := strings.IndexByte(s[k+1:], '@')
	if n < 0 {
		return -1
	}
	return k + 1 + n
}

// isAny reports whether t is one of the bare words ws.
func (t token) isAny(text string, ws ...string) bool {
	for _, w := range ws {
		if t.is(text, w) {
			return true
		}
	}
	return false
}

func isNameTok(t token) bool { return t.kind == tokWord || t.kind == tokIdent }

// stmtHas reports whether one of the bare words ws is among the tokens.
func stmtHas(text string, ts []token, ws ...string) bool {
	for _, t := range ts {
		if t.isAny(text, ws...) {
			return true
		}
	}
	return false
}

// sameName reports whether two tokens are the same prepared statement's
// name (names of prepared statements are not case-sensitive).
func sameName(text string, a, b token) bool {
	if (a.kind != tokWord && a.kind != tokIdent) || (b.kind != tokWord && b.kind != tokIdent) {
		return false
	}
	return strings.EqualFold(a.name(text), b.name(text))
}

// containsWordFold reports whether s contains w (lower-case ASCII) in any
// case, without allocating.
func containsWordFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
