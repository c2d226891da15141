package mysql

import (
	"github.com/sqlfw/sqlfw/engine"
)

// Stored programs and compound statements, read by their grammar
// (MariaDB's sql_yacc.yy: sp_proc_stmt and its kin), for mariadb.go:
//
//	CREATE [OR REPLACE] [DEFINER = u] [SQL SECURITY x] [AGGREGATE]
//	  PROCEDURE | FUNCTION [IF NOT EXISTS] name ([IN|OUT|INOUT] p type, ...)
//	  [RETURNS type] [characteristic ...] statement
//	CREATE ... TRIGGER [IF NOT EXISTS] name BEFORE | AFTER INSERT | UPDATE | DELETE
//	  ON table FOR EACH ROW [FOLLOWS | PRECEDES other] statement
//	CREATE ... EVENT [IF NOT EXISTS] name ON SCHEDULE schedule [ON COMPLETION [NOT]
//	  PRESERVE] [ENABLE | DISABLE [ON SLAVE]] [COMMENT 's'] DO statement
//
// Example: CREATE FUNCTION f(a INT) RETURNS INT BEGIN DECLARE x INT DEFAULT
// (SELECT COUNT(*) FROM t); RETURN x + a; END is the DDL create function
// (unparsedlead.go's classifyLead: the header's facts) whose body reads t.
//
// The statement of a program (its body) and of a compound statement is one
// of: [label:] BEGIN [NOT ATOMIC] statement; ... END [label], IF c THEN ...
// [ELSEIF c THEN ...] [ELSE ...] END IF, CASE [e] WHEN c THEN ... [ELSE
// ...] END CASE, [label:] LOOP | WHILE c DO | REPEAT ... UNTIL c END REPEAT
// | FOR v IN [REVERSE] a .. b | cursor [(args)] | (select) DO ... END FOR,
// DECLARE (variables with a type, TYPE OF, ROW, ROW TYPE OF, and DEFAULT
// e; a CONDITION; a CURSOR [(params)] FOR select; a CONTINUE | EXIT | UNDO
// HANDLER FOR conditions statement), RETURN e, LEAVE | ITERATE label, OPEN
// cursor [(args)], FETCH ... INTO, CLOSE, SIGNAL | RESIGNAL [... SET item
// = e, ...], GET DIAGNOSTICS, or any statement mariadb.go reads (a body's
// "SELECT ... INTO local" and "SET local = e" included). Every expression
// (c, e, a, b, args) is read as SELECT e.
//
// What a body does is judged statement by statement: each statement's facts
// are merged into the program's (facts.go's merge, as the walker does for
// a parsed CREATE PROCEDURE: CALL, a trigger's event or an event's
// schedule runs them later, with the program's kind beside theirs in
// Kinds). Anything in a body that is not read so leaves the whole text a
// parse error.

// maxNest bounds compound statements inside each other.
const maxNest = 256

// programAt reports whether token i starts a stored program's CREATE.
func (r *mread) programAt(i int) bool {
	if !r.is(i, "create") {
		return false
	}
	k := i + 1
	if r.is(k, "or") && r.is(k+1, "replace") {
		k += 2
	}
	for n := 0; n < 8; n++ {
		switch {
		case r.is(k, "definer"):
			k = r.account(k + 1)
		case r.is(k, "sql") && r.is(k+1, "security"):
			k += 3
		case r.is(k, "aggregate"):
			k++
		default:
			return r.isAny(k, "procedure", "function", "trigger", "event")
		}
		if k < 0 {
			return false
		}
	}
	return false
}

// account reads "= account" at i (after DEFINER) and returns the index after
// it, or -1: CURRENT_USER[()], 'u'@'h', `u`@`h`, u@h, 'u', a role.
func (r *mread) account(i int) int {
	if r.kind(i) != '=' {
		return -1
	}
	i++
	if r.is(i, "current_user") || r.is(i, "current_role") {
		if r.kind(i+1) == '(' && r.kind(i+2) == ')' {
			return i + 3
		}
		return i + 1
	}
	if k := r.kind(i); k != tokString && k != tokWord && k != tokIdent {
		return -1
	}
	i++
	if r.kind(i) == '@' {
		if k := r.kind(i + 1); k != tokString && k != tokWord && k != tokIdent {
			return -1
		}
		i += 2
	}
	return i
}

// program reads a stored program's CREATE at i; end is the index after it.
func (r *mread) program(i int) (st engine.StmtFacts, end int, ok bool) {
	k := i + 1
	invoker := false
	if r.is(k, "or") {
		k += 2
	}
	for {
		switch {
		case r.is(k, "definer"):
			k = r.account(k + 1)
		case r.is(k, "sql") && r.is(k+1, "security"):
			if !r.isAny(k+2, "definer", "invoker") {
				return st, 0, false
			}
			invoker = invoker || r.is(k+2, "invoker")
			k += 3
		case r.is(k, "aggregate"):
			k++
		default:
			goto object
		}
		if k < 0 {
			return st, 0, false
		}
	}
object:
	object := k
	k++
	if r.is(k, "if") {
		if !r.is(k+1, "not") || !r.is(k+2, "exists") {
			return st, 0, false
		}
		k += 3
	}
	if k = r.name(k); k < 0 {
		return st, 0, false
	}
	var head []engine.StmtFacts // facts of expressions in the header
	switch {
	case r.isAny(object, "procedure", "function"):
		if k = r.params(k); k < 0 {
			return st, 0, false
		}
		if r.is(object, "function") {
			if !r.is(k, "returns") {
				return st, 0, false
			}
			if k = r.typ(k + 1); k < 0 || r.is(k, "soname") {
				return st, 0, false // a UDF: loads code, left to unparsed.go
			}
		}
		var inv bool
		k, inv = r.characteristics(k)
		invoker = invoker || inv
	case r.is(object, "trigger"):
		if !r.isAny(k, "before", "after") || !r.isAny(k+1, "insert", "update", "delete") || !r.is(k+2, "on") {
			return st, 0, false
		}
		if k = r.name(k + 3); k < 0 || !r.is(k, "for") || !r.is(k+1, "each") || !r.is(k+2, "row") {
			return st, 0, false
		}
		k += 3
		if r.isAny(k, "follows", "precedes") {
			if k = r.name(k + 1); k < 0 {
				return st, 0, false
			}
		}
	case r.is(object, "event"):
		var good bool
		if k, head, good = r.schedule(k); !good {
			return st, 0, false
		}
	default:
		return st, 0, false
	}
	if k >= len(r.t) {
		return st, 0, false
	}
	pc := piece{lo: r.t[i].lo, hi: r.t[k-1].hi, words: k - i, invoker: invoker}
	pc.lead = r.t[i:min(k, i+leadTokens)]
	st, ok = classifyLead(r.text, &pc)
	if !ok || st.Kind != engine.KindDDL {
		return st, 0, false
	}
	for h := range head {
		merge(&st, &head[h])
	}
	end, ok = r.bodyStmt(k, &st)
	return st, end, ok
}

// params reads a routine's ([IN|OUT|INOUT] name type, ...) at i.
func (r *mread) params(i int) int {
	if r.kind(i) != '(' {
		return -1
	}
	i++
	if r.kind(i) == ')' {
		return i + 1
	}
	for {
		if r.isAny(i, "in", "out", "inout") && r.isName(i+1) && !r.isAny(i+1, "int", "integer", "char", "varchar", "text") {
			i++
		}
		if !r.isName(i) {
			return -1
		}
		if i = r.typ(i + 1); i < 0 {
			return -1
		}
		switch r.kind(i) {
		case ',':
			i++
		case ')':
			return i + 1
		default:
			return -1
		}
	}
}

// typ reads a data type at i: name [(n, ...)] [modifiers] [CHARACTER SET
// cs] [COLLATE co], TYPE OF x[.y[.z]], ROW TYPE OF x[.y], ROW(name type,
// ...); it returns the index after it, or -1.
func (r *mread) typ(i int) int {
	switch {
	case r.is(i, "type") && r.is(i+1, "of"):
		return r.name(i + 2)
	case r.is(i, "row") && r.is(i+1, "type") && r.is(i+2, "of"):
		return r.name(i + 3)
	case r.is(i, "row") && r.kind(i+1) == '(':
		i += 2
		for {
			if !r.isName(i) {
				return -1
			}
			if i = r.typ(i + 1); i < 0 {
				return -1
			}
			switch r.kind(i) {
			case ',':
				i++
			case ')':
				return i + 1
			default:
				return -1
			}
		}
	}
	if r.kind(i) != tokWord || r.isAny(i, "default", "begin", "return", "returns", "select", "set") {
		return -1
	}
	i++
	for {
		switch {
		case r.isAny(i, "precision", "varying", "unsigned", "signed", "zerofill", "binary", "ascii", "unicode", "byte", "int", "integer",
			"varchar", "varcharacter", "char", "character", "varbinary", "national", "nchar", "nvarchar") &&
			!(r.is(i, "character") && r.is(i+1, "set")):
			i++
		case r.kind(i) == '(':
			// lengths, ENUM and SET values: literals only
			i++
			for r.kind(i) == tokWord || r.kind(i) == tokString || r.kind(i) == ',' {
				i++
			}
			if r.kind(i) != ')' {
				return -1
			}
			i++
		case r.is(i, "character") && r.is(i+1, "set"), r.is(i, "charset"), r.is(i, "collate"):
			if r.is(i, "character") {
				i++
			}
			i++
			if k := r.kind(i); k != tokWord && k != tokIdent && k != tokString {
				return -1
			}
			i++
		default:
			return i
		}
	}
}

// characteristics reads a routine's characteristics at i; invoker is true
// for SQL SECURITY INVOKER.
func (r *mread) characteristics(i int) (int, bool) {
	invoker := false
	for {
		switch {
		case r.is(i, "comment") && r.kind(i+1) == tokString:
			i += 2
		case r.is(i, "language") && r.is(i+1, "sql"):
			i += 2
		case r.is(i, "not") && r.is(i+1, "deterministic"):
			i += 2
		case r.is(i, "deterministic"):
			i++
		case r.is(i, "contains") && r.is(i+1, "sql"), r.is(i, "no") && r.is(i+1, "sql"):
			i += 2
		case r.isAny(i, "reads", "modifies") && r.is(i+1, "sql") && r.is(i+2, "data"):
			i += 3
		case r.is(i, "sql") && r.is(i+1, "security") && r.isAny(i+2, "definer", "invoker"):
			invoker = invoker || r.is(i+2, "invoker")
			i += 3
		default:
			return i, invoker
		}
	}
}

// schedule reads an event's ON SCHEDULE ... up to its DO, and returns the
// index after the DO and the facts of its expressions.
func (r *mread) schedule(i int) (int, []engine.StmtFacts, bool) {
	if !r.is(i, "on") || !r.is(i+1, "schedule") {
		return 0, nil, false
	}
	i += 2
	var out []engine.StmtFacts
	stops := []string{"starts", "ends", "on", "enable", "disable", "comment", "do"}
	exprTo := func(k int, wrap string) (int, bool) {
		e := r.exprEnd(k, stops...)
		if e <= k {
			return 0, false
		}
		if wrap != "" {
			// EVERY e unit: the unit is a word
			if e-1 <= k || r.kind(e-1) != tokWord {
				return 0, false
			}
			e--
		}
		src := r.src(k, e)
		if wrap != "" {
			e++
		}
		sub := &mread{text: src, parses: r.parses}
		sub.tokenize()
		f, ok := sub.expr(0, len(sub.t))
		r.parses = sub.parses
		if !ok {
			return 0, false
		}
		out = append(out, f)
		return e, true
	}
	var ok bool
	switch {
	case r.is(i, "at"):
		i, ok = exprTo(i+1, "")
	case r.is(i, "every"):
		i, ok = exprTo(i+1, "interval")
	}
	if !ok {
		return 0, nil, false
	}
	for {
		switch {
		case r.isAny(i, "starts", "ends"):
			if i, ok = exprTo(i+1, ""); !ok {
				return 0, nil, false
			}
		case r.is(i, "on") && r.is(i+1, "completion"):
			i += 2
			if r.is(i, "not") {
				i++
			}
			if !r.is(i, "preserve") {
				return 0, nil, false
			}
			i++
		case r.is(i, "enable"):
			i++
		case r.is(i, "disable"):
			i++
			if r.is(i, "on") && r.is(i+1, "slave") {
				i += 2
			}
		case r.is(i, "comment") && r.kind(i+1) == tokString:
			i += 2
		case r.is(i, "do"):
			return i + 1, out, true
		default:
			return 0, nil, false
		}
	}
}

// tokenize fills r.t from r.text.
func (r *mread) tokenize() {
	for i := 0; ; {
		t, ok := nextToken(r.text, i)
		if !ok {
			return
		}
		r.t = append(r.t, t)
		i = t.hi
	}
}

// exprEnd returns the index of the first of the bare words stops (or a
// ";") at depth 0 from i, outside CASE ... END: where an expression ends.
func (r *mread) exprEnd(i int, stops ...string) int {
	depth, cases := 0, 0
	for ; i < len(r.t); i++ {
		switch r.kind(i) {
		case '(':
			depth++
			continue
		case ')':
			depth--
			if depth < 0 {
				return i
			}
			continue
		case ';':
			if depth == 0 {
				return i
			}
		}
		if depth > 0 {
			continue
		}
		switch {
		case r.is(i, "case"):
			cases++
			continue
		case r.is(i, "end") && cases > 0:
			cases--
			continue
		}
		if cases == 0 && r.isAny(i, stops...) {
			return i
		}
	}
	return i
}

// cond reads the expression of tokens [i, e) into st.
func (r *mread) cond(i, e int, st *engine.StmtFacts) bool {
	f, ok := r.expr(i, e)
	if ok {
		merge(st, &f)
	}
	return ok
}

// compoundAt reports whether token i starts a compound statement (top: at
// a message's top level, where BEGIN alone starts a transaction).
func (r *mread) compoundAt(i int, top bool) bool {
	if r.isName(i) && r.kind(i+1) == ':' && r.kind(i+2) != '=' {
		return r.isAny(i+2, "begin", "loop", "while", "repeat", "for")
	}
	switch {
	case r.is(i, "begin"):
		return !top || r.is(i+1, "not") && r.is(i+2, "atomic")
	case r.isAny(i, "loop", "while", "repeat", "case"):
		return true
	case r.isAny(i, "if", "for"):
		return true // no other statement starts so
	}
	return false
}

// bodyStmt reads one statement of a body (or a program's or compound's
// statement) at i into st; end is the index after it: a ";" or the end
// of the text follows in a well-formed body.
func (r *mread) bodyStmt(i int, st *engine.StmtFacts) (end int, ok bool) {
	r.nest++
	defer func() { r.nest-- }()
	if r.nest > maxNest || i >= len(r.t) {
		return 0, false
	}
	label := ""
	if r.isName(i) && r.kind(i+1) == ':' && r.kind(i+2) != '=' {
		label = r.t[i].name(r.text)
		i += 2
		if !r.isAny(i, "begin", "loop", "while", "repeat", "for") {
			return 0, false
		}
	}
	// endLabel reads END word [label] at k: the label when the block has
	// one (MariaDB: it must be the same).
	endLabel := func(k int, word string) (int, bool) {
		if !r.is(k, "end") {
			return 0, false
		}
		k++
		if word != "" {
			if !r.is(k, word) {
				return 0, false
			}
			k++
		}
		if label != "" && r.isName(k) && r.t[k].name(r.text) == label {
			k++
		}
		return k, true
	}
	switch {
	case r.is(i, "begin"):
		i++
		if r.is(i, "not") && r.is(i+1, "atomic") {
			i += 2
		}
		if i, ok = r.list(i, st, "end"); !ok {
			return 0, false
		}
		return endLabel(i, "")
	case r.is(i, "if"):
		for {
			e := r.exprEnd(i+1, "then")
			if !r.is(e, "then") || !r.cond(i+1, e, st) {
				return 0, false
			}
			if i, ok = r.list(e+1, st, "elseif", "else", "end"); !ok {
				return 0, false
			}
			if r.is(i, "elseif") {
				continue
			}
			break
		}
		if r.is(i, "else") {
			if i, ok = r.list(i+1, st, "end"); !ok {
				return 0, false
			}
		}
		return endLabel(i, "if")
	case r.is(i, "case"):
		i++
		if !r.is(i, "when") {
			e := r.exprEnd(i, "when")
			if !r.is(e, "when") || !r.cond(i, e, st) {
				return 0, false
			}
			i = e
		}
		for r.is(i, "when") {
			e := r.exprEnd(i+1, "then")
			if !r.is(e, "then") || !r.cond(i+1, e, st) {
				return 0, false
			}
			if i, ok = r.list(e+1, st, "when", "else", "end"); !ok {
				return 0, false
			}
		}
		if r.is(i, "else") {
			if i, ok = r.list(i+1, st, "end"); !ok {
				return 0, false
			}
		}
		return endLabel(i, "case")
	case r.is(i, "loop"):
		if i, ok = r.list(i+1, st, "end"); !ok {
			return 0, false
		}
		return endLabel(i, "loop")
	case r.is(i, "while"):
		e := r.exprEnd(i+1, "do")
		if !r.is(e, "do") || !r.cond(i+1, e, st) {
			return 0, false
		}
		if i, ok = r.list(e+1, st, "end"); !ok {
			return 0, false
		}
		return endLabel(i, "while")
	case r.is(i, "repeat"):
		if i, ok = r.list(i+1, st, "until"); !ok || !r.is(i, "until") {
			return 0, false
		}
		e := r.exprEnd(i+1, "end")
		if !r.is(e, "end") || !r.cond(i+1, e, st) {
			return 0, false
		}
		return endLabel(e, "repeat")
	case r.is(i, "for"):
		if i, ok = r.forRange(i+1, st); !ok {
			return 0, false
		}
		if i, ok = r.list(i, st, "end"); !ok {
			return 0, false
		}
		return endLabel(i, "for")
	case r.is(i, "declare"):
		return r.declare(i+1, st)
	case r.is(i, "return"):
		e := r.stmtEnd(i + 1)
		return e, r.cond(i+1, e, st)
	case r.isAny(i, "leave", "iterate"):
		if !r.isName(i + 1) {
			return 0, false
		}
		return i + 2, true
	case r.is(i, "close"):
		if !r.isName(i + 1) {
			return 0, false
		}
		return i + 2, true
	case r.is(i, "open"):
		if !r.isName(i + 1) {
			return 0, false
		}
		if r.kind(i+2) != '(' {
			return i + 2, true
		}
		e := r.stmtEnd(i + 2)
		if r.kind(e-1) != ')' {
			return 0, false
		}
		if e-1 == i+3 {
			return e, true // OPEN c()
		}
		return e, r.cond(i+3, e-1, st)
	case r.is(i, "fetch") && r.is(i+1, "group") && r.is(i+2, "next") && r.is(i+3, "row"):
		return i + 4, true // an aggregate function's next row
	case r.is(i, "fetch"):
		k := i + 1
		if r.is(k, "next") {
			k++
		}
		if r.is(k, "from") {
			k++
		}
		if !r.isName(k) || !r.is(k+1, "into") {
			return 0, false
		}
		for k += 2; ; k += 2 {
			if !r.isName(k) {
				return 0, false
			}
			if r.kind(k+1) == '.' && r.isName(k+2) { // a ROW variable's field
				k += 2
			}
			if r.kind(k+1) != ',' {
				return k + 1, true
			}
		}
	case r.isAny(i, "signal", "resignal") || r.is(i, "get") && r.isAny(i+1, "diagnostics", "current", "stacked"):
		return r.condStmt(i, st)
	}
	e := r.stmtEnd(i)
	f, ok := r.simple(i, e)
	if !ok {
		f, ok = r.localSet(i, e)
	}
	if !ok {
		return 0, false
	}
	merge(st, &f)
	// The statement is also one of the text's own, as unparsed.go's
	// pieces are: a rule on its verb and object (CREATE USER in a
	// trigger) sees it, not only the program's merged facts.
	f.Kinds |= 1 << f.Kind
	f.Loc, f.Length = int32(r.t[i].lo), int32(r.t[e-1].hi-r.t[i].lo)
	r.inner = append(r.inner, f)
	return e, true
}

// list reads statements, each ended by ";", until one of the bare words
// stops where a statement would start; it returns that word's index.
func (r *mread) list(i int, st *engine.StmtFacts, stops ...string) (int, bool) {
	for {
		if i >= len(r.t) {
			return 0, false
		}
		if r.isAny(i, stops...) {
			return i, true
		}
		e, ok := r.bodyStmt(i, st)
		if !ok || r.kind(e) != ';' {
			return 0, false
		}
		i = e + 1
	}
}

// forRange reads FOR's v IN [REVERSE] a .. b | cursor [(args)] | (select)
// DO at i (after FOR) and returns the index after DO.
func (r *mread) forRange(i int, st *engine.StmtFacts) (int, bool) {
	if !r.isName(i) || !r.is(i+1, "in") {
		return 0, false
	}
	i += 2
	if r.is(i, "reverse") {
		i++
	}
	do := r.exprEnd(i, "do")
	if !r.is(do, "do") || do == i {
		return 0, false
	}
	// a .. b: the first ". ." at depth 0
	depth := 0
	for k := i; k < do; k++ {
		switch r.kind(k) {
		case '(':
			depth++
		case ')':
			depth--
		case '.':
			if depth == 0 && r.kind(k+1) == '.' && r.t[k+1].lo == r.t[k].hi {
				if !r.cond(i, k, st) || !r.cond(k+2, do, st) {
					return 0, false
				}
				return do + 1, true
			}
		}
	}
	switch {
	case r.kind(i) == '(' && r.kind(do-1) == ')' && r.isAny(i+1, "select", "with", "values", "table", "("):
		f, ok := r.simple(i+1, do-1)
		if !ok || f.Kind != engine.KindSelect {
			return 0, false
		}
		merge(st, &f)
	case r.isName(i) && do == i+1:
		// a cursor
	case r.isName(i) && r.kind(i+1) == '(' && r.kind(do-1) == ')':
		if do-1 > i+2 && !r.cond(i+2, do-1, st) {
			return 0, false
		}
	default:
		return 0, false
	}
	return do + 1, true
}

// declare reads a DECLARE at i (after the word).
func (r *mread) declare(i int, st *engine.StmtFacts) (int, bool) {
	switch {
	case r.isAny(i, "continue", "exit", "undo") && r.is(i+1, "handler") && r.is(i+2, "for"):
		k := i + 3
		for {
			switch {
			case r.is(k, "sqlstate"):
				k++
				if r.is(k, "value") {
					k++
				}
				if r.kind(k) != tokString {
					return 0, false
				}
				k++
			case r.is(k, "not") && r.is(k+1, "found"):
				k += 2
			case r.isName(k):
				k++ // SQLWARNING, SQLEXCEPTION, an error number or a condition's name
			default:
				return 0, false
			}
			if r.kind(k) != ',' {
				break
			}
			k++
		}
		return r.bodyStmt(k, st)
	case r.isName(i) && r.is(i+1, "condition") && r.is(i+2, "for"):
		k := i + 3
		if r.is(k, "sqlstate") {
			k++
			if r.is(k, "value") {
				k++
			}
			if r.kind(k) != tokString {
				return 0, false
			}
			return k + 1, true
		}
		if r.kind(k) != tokWord {
			return 0, false
		}
		return k + 1, true
	case r.isName(i) && r.is(i+1, "cursor"):
		k := i + 2
		if r.kind(k) == '(' {
			if k = r.params(k); k < 0 {
				return 0, false
			}
		}
		if !r.is(k, "for") {
			return 0, false
		}
		e := r.stmtEnd(k + 1)
		f, ok := r.simple(k+1, e)
		if !ok || f.Kind != engine.KindSelect {
			return 0, false
		}
		merge(st, &f)
		return e, true
	}
	// variables: name [, name] type [DEFAULT e]
	k := i
	for {
		if !r.isName(k) {
			return 0, false
		}
		k++
		if r.kind(k) != ',' {
			break
		}
		k++
	}
	if k = r.typ(k); k < 0 {
		return 0, false
	}
	if r.is(k, "default") {
		e := r.stmtEnd(k + 1)
		return e, r.cond(k+1, e, st)
	}
	return k, true
}

// condStmt reads SIGNAL, RESIGNAL or GET [CURRENT | STACKED] DIAGNOSTICS
// at i: names and literals, and the expressions of SET item = e, ....
func (r *mread) condStmt(i int, st *engine.StmtFacts) (int, bool) {
	e := r.stmtEnd(i)
	if r.is(i, "get") {
		// GET ... DIAGNOSTICS [CONDITION n] target = item, ...: variables
		// and item names
		for k := i + 1; k < e; k++ {
			switch r.kind(k) {
			case tokWord, tokIdent, '@', '=', ',', '-':
			default:
				return 0, false
			}
		}
		return e, true
	}
	k := i + 1
	switch {
	case r.is(k, "sqlstate"):
		k++
		if r.is(k, "value") {
			k++
		}
		if r.kind(k) != tokString {
			return 0, false
		}
		k++
	case r.isName(k) && !r.is(k, "set"):
		k++
	case r.is(i, "signal"):
		return 0, false
	}
	if k == e {
		return e, true
	}
	if !r.is(k, "set") {
		return 0, false
	}
	k++
	for {
		if !r.isName(k) || r.kind(k+1) != '=' {
			return 0, false
		}
		v := k + 2
		depth, x := 0, v
		for ; x < e; x++ {
			if c := r.kind(x); c == '(' {
				depth++
			} else if c == ')' {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
		if !r.cond(v, x, st) {
			return 0, false
		}
		if x == e {
			return e, true
		}
		k = x + 1
	}
}

// localSet reads a body's SET of local variables TiDB does not parse (SET
// r.field = e, of a ROW variable) as the expressions assigned: a local
// variable is not a setting.
func (r *mread) localSet(i, e int) (engine.StmtFacts, bool) {
	var st engine.StmtFacts
	if !r.is(i, "set") {
		return st, false
	}
	k := i + 1
	for {
		n := r.name(k)
		if n < 0 || r.kind(n) != '=' && !(r.kind(n) == ':' && r.kind(n+1) == '=') {
			return st, false
		}
		v := n + 1
		if r.kind(n) == ':' {
			v++
		}
		depth, x := 0, v
		for ; x < e; x++ {
			if c := r.kind(x); c == '(' {
				depth++
			} else if c == ')' {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
		if !r.cond(v, x, &st) {
			return st, false
		}
		if x == e {
			st.Kind = engine.KindSetStmt
			return st, true
		}
		k = x + 1
	}
}
