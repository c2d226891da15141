package mysql

// Stored code judged as it will run (engine.Body): a view's SELECT, and a
// procedure's, function's, trigger's or event's body, created or altered
// (CREATE [OR REPLACE], ALTER VIEW, ALTER EVENT ... DO), also beside the
// statement that stores it, in the account it runs as.
//
// A routine's body already keeps its kind in the CREATE's facts
// (routine.go); a view's query is walked as the CREATE's. storedBodies
// gives each such statement a Body with those facts as the code's own: the
// statement's kinds but DDL (a view is a SELECT, a body's statements are
// what CALL, a write or the schedule runs), select when it reads a table,
// without the header's verb, object and DEFINER effect, and without the
// object it names (the view, the trigger's table). So the rules read the
// code as they read the statements in it: a user-scoped rule on reads of a
// table meets a view over that table (engine/body.go); a body's DELETE
// without WHERE meets no-unfiltered-writes with a reason that says it is
// stored code. A body's own DDL is not told apart from the CREATE's: a
// body statement with a verb of its own is an entry of its own already
// (routine.go bodyEntries, body.go).
//
// The account it runs as: DEFINER = u (not CURRENT_USER) with SQL
// SECURITY DEFINER, the default, runs the code as u: its Body has RunsAs
// u, and rules scoped by users are checked for u. SQL SECURITY INVOKER
// runs it as whoever uses it, which the engine judges as the session that
// creates it. Triggers and events always run as their definer.

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// What stored code is, in verdict reasons (engine.Body.Of).
const (
	ofView    = "the query of the view this statement creates, judged as it will run when the view is read"
	ofRoutine = "a statement in the body of the routine, trigger or event this statement creates, judged as it will run"
)

// storedBodies adds a Body to each statement of tf that stores code, and to
// its facts in other databases and as other users.
func storedBodies(text string, tf *engine.TextFacts) {
	for i := range tf.Stmts {
		st := &tf.Stmts[i]
		if !storesCode(st) {
			continue
		}
		runsAs := ""
		if stmtText := stmtText(text, st); !invoker(stmtText) {
			if user, _, ok := definerUser(stmtText); ok {
				runsAs = user
			}
		}
		addBody(st, runsAs)
		for j := range st.InDatabase {
			addBody(&st.InDatabase[j].Facts, runsAs)
		}
		for j := range st.AsUser {
			u := &st.AsUser[j].Facts
			// DEFINER = the session's own account: it runs as the session.
			addBody(u, "")
			for k := range u.InDatabase {
				addBody(&u.InDatabase[k].Facts, "")
			}
		}
	}
}

// storesCode reports whether the statement creates or replaces code that
// runs later.
func storesCode(st *engine.StmtFacts) bool {
	if st.Kind != engine.KindDDL || (st.Verb != engine.VerbCreate && st.Verb != engine.VerbAlter) {
		return false
	}
	switch st.Object {
	case "view", "procedure", "function", "trigger", "event":
		return true
	}
	return false
}

func addBody(st *engine.StmtFacts, runsAs string) {
	if !storesCode(st) {
		return
	}
	of := ofRoutine
	if st.Object == "view" {
		of = ofView
	}
	f := detached(*st)
	f.AsUser, f.Bodies, f.PrevKinds, f.Loc, f.Length = nil, nil, 0, 0, 0
	f.Verb, f.Object = engine.VerbNone, ""
	f.Effects &^= engine.EffChangesIdentity // DEFINER: the header's, judged by RunsAs
	f.Kinds &^= 1 << engine.KindDDL
	// The object the statement names is not what the code reads or writes.
	tables := make([]engine.TableRef, 0, len(f.Tables))
	for _, t := range f.Tables {
		if t.Write && f.Kinds&writeKinds == 0 {
			continue // a view's name, a trigger's table: nothing in the code writes
		}
		tables = append(tables, t)
	}
	f.Tables = tables
	for _, t := range f.Tables {
		if !t.Write {
			f.Kinds |= 1 << engine.KindSelect
			break
		}
	}
	f.Kind = engine.BodyKind(f.Kinds)
	st.Bodies = append(st.Bodies, engine.Body{Of: of, RunsAs: runsAs, Facts: f})
}

// stmtText is the text of one statement of text (StmtFacts.Loc, Length).
func stmtText(text string, st *engine.StmtFacts) string {
	lo, n := int(st.Loc), int(st.Length)
	if lo < 0 || lo > len(text) {
		return text
	}
	if n <= 0 || lo+n > len(text) {
		return text[lo:]
	}
	return text[lo : lo+n]
}

// invoker reports whether the statement says SQL SECURITY INVOKER (as
// prescan reads words: comments between them, any case).
func invoker(text string) bool {
	var prev [2]token
	for t, more := nextToken(text, 0); more; t, more = nextToken(text, t.hi) {
		if t.is(text, "invoker") && prev[1].is(text, "security") && prev[0].is(text, "sql") {
			return true
		}
		prev[0], prev[1] = prev[1], t
	}
	return false
}

// ReadBody is engine.BodyReader's: what stored code does when it runs.
// lang "sql" is a routine's, trigger's or event's body as
// information_schema holds it (ROUTINE_DEFINITION, ACTION_STATEMENT,
// EVENT_DEFINITION: one statement or BEGIN ... END), read as the body of a
// procedure; "view" is a view's SELECT (VIEW_DEFINITION); "create" is whole
// CREATE statements (SHOW CREATE ...), the Bodies they get. The account it
// runs as is the caller's to set (RunsAs: the catalog's DEFINER).
func (myDialect) ReadBody(lang, text string) (engine.Body, bool) {
	var create string
	switch strings.ToLower(lang) {
	case "sql":
		create = "CREATE PROCEDURE sqlfw_body() " + text
	case "view":
		create = "CREATE VIEW sqlfw_body AS " + text
	case "create":
		create = text
	default:
		return engine.Body{Facts: engine.StmtFacts{Unparsed: "stored code in a language the engine cannot read"}}, false
	}
	tf := analyze(create, prescan(create, 0))
	var b engine.Body
	found := false
	for i := range tf.Stmts {
		for _, sb := range tf.Stmts[i].Bodies {
			if !found {
				b, found = sb, true
				b.RunsAs = ""
				continue
			}
			merge(&b.Facts, &sb.Facts)
		}
	}
	if tf.ParseError || !found {
		b.Facts.Unparsed = "stored code that could not be parsed"
		return b, false
	}
	b.Facts.Kind = engine.BodyKind(b.Facts.Kinds)
	return b, true
}
