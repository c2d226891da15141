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
//     'text' just before it holds only when that PREPARE is the statement
//     right before it in the same statement list (PREPARE s FROM 'text';
//     EXECUTE s), which every path to the EXECUTE then runs (a PREPARE
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
// EXECUTE IMMEDIATE) that is not right after a PREPARE of the same name
// from a literal in the same statement list (routineExecutes).
func unsureExecute(text string) bool {
	var ts [8]token // the last tokens, ts[7] the current one
	n := 0
	for t, ok := nextToken(text, 0); ok; t, ok = nextToken(text, t.hi) {
		copy(ts[:], ts[1:])
		ts[7] = t
		n++
		if n < 2 || !ts[6].is(text, "execute") || ts[7].is(text, "immediate") {
			continue
		}
		// ts[6] is EXECUTE, ts[7] its name; before it: PREPARE name FROM
		// 'text' ; as a statement of the same list (not a handler's)
		if n < 8 || ts[5].kind != ';' || ts[4].kind != tokString || !ts[3].is(text, "from") ||
			!sameName(text, ts[2], ts[7]) || !ts[1].is(text, "prepare") ||
			!(ts[0].kind == ';' || ts[0].is(text, "begin") || ts[0].is(text, "atomic") || ts[0].is(text, "then") ||
				ts[0].is(text, "else") || ts[0].is(text, "do") || ts[0].is(text, "loop") || ts[0].is(text, "repeat")) {
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
