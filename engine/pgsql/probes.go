package pgsql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// The shapes of an injected extraction step (engine.ProbeSet), decided by
// where a statement puts what it reads, not by the names alone: psql,
// pg_dump, ORMs and dashboards read the catalogs and the server's version
// too, but in statements of their own, never inside a statement on an
// application table. An application table is a relation that is not a
// catalog (isCatalog) nor a WITH name; the relation a DDL statement creates
// (CREATE VIEW, CREATE TABLE AS) is not one, and DDL statements are not
// judged for probes (an injection lands in an application's query, and a
// restored dump's views may read catalogs), nor are DO blocks (a
// migration's tests the catalogs before it creates or changes a table).
//
//	catalog          a catalog relation (pg_catalog, information_schema,
//	                 unqualified pg_*) other than the statistics views and
//	                 pg_locks (probesCatalog, catalogNextToApp) read by a
//	                 statement that also reads or writes an application
//	                 table, wherever it stands: subquery, derived table,
//	                 CTE, join, UNION arm, function argument, ORDER BY,
//	                 INSERT ... SELECT; or any catalog read stacked after an
//	                 application statement (probeStacked).
//	server_info      what describes the server (serverInfo: version(),
//	                 current_user, session_user, user, current_role,
//	                 current_database(), current_catalog, current_schema,
//	                 current_setting() of a server parameter,
//	                 inet_server_addr(), pg_backend_pid(), pg_get_* ...),
//	                 in a statement on an application table: returned by a
//	                 subquery, derived table or CTE, an ORDER BY item,
//	                 compared with a constant (version() LIKE 'P%'), or
//	                 taken apart (ASCII(SUBSTR(current_user, 1, 1)) > 97);
//	                 or read by a statement stacked after an application
//	                 statement. owner = current_user, INSERT ... VALUES
//	                 (current_user) and SELECT version() alone are not.
//	error_based      a conversion whose error message quotes its input, fed
//	                 a subquery or server information, in a statement on an
//	                 application table: a cast (CAST, ::, int4(...) and the
//	                 other type-named functions, to_number, to_date,
//	                 to_timestamp) to anything but a string type, of a value
//	                 built as text (a || concatenation, a cast to text, a
//	                 string function, server information); a cast of a
//	                 subquery (not of count(*) or a constant) compared with
//	                 a constant (AND 1=CAST((SELECT ...) AS int)); XML and
//	                 JSON parsers and path functions (XMLPARSE, xpath,
//	                 xmlexists, jsonb_path_*, json_populate_*
//	                 ...) fed a subquery or server information.
//	boolean_blind    a comparison of two constants that is not the 0/1
//	                 idiom query builders emit (1=1, 1=0, 1<>1, true): a
//	                 conjunct of a condition that also tests a row
//	                 (id = 1 AND 4307=4307), or a CASE WHEN condition
//	                 (ORDER BY CASE WHEN 4307=4307 THEN 1 ELSE ... END); a
//	                 division by a constant subquery (1/(SELECT 0)), the
//	                 error half of an ORDER BY oracle. And a value computed
//	                 from literals as no builder writes it (valueExpr: 'nu'
//	                 || 't', div(23, -2)) compared with a row's value (=, <>,
//	                 <, >, not a pattern) or assigned by UPDATE's SET: an
//	                 application puts a literal there, an injection an
//	                 expression whose answer, the same as the literal's,
//	                 confirms that the text is run. A pattern built from
//	                 literals (LIKE '%' || 'x' || '%', psycopg2's), a
//	                 typed literal (now() - interval '1 day', '2024-01-01'::
//	                 date + 1), a value of a column (SET n = n + 1) and
//	                 constant arithmetic on numbers (price > 10 * 2, id =
//	                 2-1, OFFSET 2*10) are not.
//	char_extraction  a subquery or server information taken apart (ASCII,
//	                 SUBSTRING, SUBSTR, LEFT, RIGHT, LENGTH, STRPOS,
//	                 GET_BYTE ...: extractWrappers) and compared with a
//	                 constant, or a subquery compared with a constant
//	                 pattern (LIKE, ILIKE, SIMILAR TO, ~).
//
// A generate_series of a million rows or more inside a subquery or WITH
// query of a statement on an application table (in a subquery also one of
// numeric bounds not known from the text), or a cross join of catalog
// relations without a condition there, is heavy work
// that waits without a sleep function: a time probe (StmtFacts.TimeProbe).
//
// The walker (facts.go) only notes that a statement has one of the nodes
// these shapes need (walker.probeNode); the search below runs for those
// statements alone, so the others pay nothing for it.

// heavySeriesRows: a generate_series this long inside a subquery is a wait.
const heavySeriesRows = 1_000_000

// textTypes are the string types: a cast to them never fails on text.
var textTypes = map[string]bool{
	"text": true, "varchar": true, "bpchar": true, "char": true, "name": true, "citext": true, "unknown": true,
}

// typedFuncs convert their argument as a cast does, and quote it in the
// error when it does not convert.
var typedFuncs = map[string]bool{
	"int2": true, "int4": true, "int8": true, "integer": true, "smallint": true, "bigint": true, "numeric": true,
	"float4": true, "float8": true, "bool": true, "boolean": true, "date": true, "time": true, "timetz": true,
	"timestamp": true, "timestamptz": true, "interval": true, "inet": true, "cidr": true, "uuid": true,
	"macaddr": true, "macaddr8": true, "money": true, "oid": true, "regclass": true, "regtype": true,
	"regproc": true, "regprocedure": true, "regoper": true, "regrole": true, "regnamespace": true,
	"to_number": true, "to_date": true, "to_timestamp": true, "xml": true, "json": true, "jsonb": true,
	"point": true, "box": true, "tsquery": true, "tsvector": true, "bit": true, "varbit": true,
	"bytea": true, "decode": true, "int4range": true, "int8range": true, "numrange": true,
	"daterange": true, "tsrange": true, "tstzrange": true,
}

// textInputFuncs convert their first argument, text by their signature.
var textInputFuncs = map[string]bool{"to_number": true, "to_date": true, "to_timestamp": true}

// parserFuncs parse a document or a path from their arguments, and quote
// what does not parse.
var parserFuncs = map[string]bool{
	// (query_to_xml and its kin run their text: no-dynamic-sql's.)
	"xpath": true, "xpath_exists": true, "xmlexists": true, "xmltable": true,
	"jsonb_path_query": true, "jsonb_path_query_array": true, "jsonb_path_query_first": true,
	"jsonb_path_exists": true, "jsonb_path_match": true, "jsonb_path_query_tz": true,
	"jsonb_path_query_array_tz": true, "jsonb_path_query_first_tz": true, "jsonb_path_exists_tz": true,
	"jsonb_path_match_tz": true, "json_populate_record": true, "jsonb_populate_record": true,
	"json_populate_recordset": true, "jsonb_populate_recordset": true, "json_to_record": true,
	"jsonb_to_record": true, "json_extract_path": true, "jsonb_extract_path": true,
	"json_extract_path_text": true, "jsonb_extract_path_text": true, "json_array_elements": true,
	"jsonb_array_elements": true, "json_each": true, "jsonb_each": true, "json_object_keys": true,
	"jsonb_object_keys": true, "json_typeof": true, "jsonb_typeof": true, "jsonb_set": true,
	"jsonb_insert": true, "jsonb_pretty": true, "json_array_length": true, "jsonb_array_length": true,
}

// stringFuncs return text: a cast of what they return to a number fails
// on the text, and quotes it.
var stringFuncs = map[string]bool{
	"chr": true, "concat": true, "concat_ws": true, "string_agg": true, "array_to_string": true,
	"format": true, "lpad": true, "rpad": true, "substr": true, "substring": true, "left": true,
	"right": true, "lower": true, "upper": true, "initcap": true, "md5": true, "encode": true,
	"quote_ident": true, "quote_literal": true, "quote_nullable": true, "replace": true, "translate": true,
	"reverse": true, "repeat": true, "btrim": true, "ltrim": true, "rtrim": true, "trim": true,
	"split_part": true, "regexp_replace": true, "to_char": true, "convert_from": true, "overlay": true,
}

// extractWrappers turn a string into the characters or numbers a blind
// probe compares one by one (ASCII(SUBSTRING((SELECT ...), 1, 1)) > 64).
var extractWrappers = map[string]bool{
	"ascii": true, "substring": true, "substr": true, "left": true, "right": true, "length": true,
	"char_length": true, "character_length": true, "octet_length": true, "bit_length": true,
	"strpos": true, "position": true, "get_byte": true, "get_bit": true, "split_part": true,
	"md5": true, "encode": true, "convert_to": true, "starts_with": true, "regexp_match": true,
	"regexp_matches": true, "regexp_like": true, "regexp_instr": true, "regexp_count": true,
	"regexp_substr": true, "lower": true, "upper": true, "reverse": true, "overlay": true,
	"bit_count": true, "sha224": true, "sha256": true, "sha384": true, "sha512": true, "hashtext": true,
}

// probeNode reports whether node m is one the probe search needs, so that
// the walker runs it.
func probeNode(m any) bool {
	switch n := m.(type) {
	case *pg_query.SubLink, *pg_query.SQLValueFunction, *pg_query.XmlExpr:
		return true
	case *pg_query.TypeCast:
		_, k := constValue(n.Arg)
		return k == constNone
	case *pg_query.FuncCall:
		_, name := lastTwo(n.Funcname)
		return catalogDataFunc(name) || typedFuncs[name] || parserFuncs[name] || name == "generate_series"
	case *pg_query.A_Expr:
		return constComparison(n) && !builderIdiom(n) || valueComparison(n)
	case *pg_query.SortBy:
		return true
	case *pg_query.UpdateStmt:
		return valueSet(n)
	}
	return false
}

// valueOps combine values into a value.
var valueOps = map[string]bool{"||": true, "+": true, "-": true, "*": true, "/": true, "%": true, "^": true}

// mathFuncs compute a number from numbers alone.
var mathFuncs = map[string]bool{
	"div": true, "mod": true, "abs": true, "sign": true, "ceil": true, "ceiling": true, "floor": true,
	"round": true, "trunc": true, "power": true, "pow": true, "sqrt": true, "cbrt": true, "exp": true,
	"ln": true, "log": true, "log10": true, "pi": true, "degrees": true, "radians": true, "sin": true,
	"cos": true, "tan": true, "factorial": true, "gcd": true, "lcm": true,
}

// valueExpr: a value computed from untyped literals by what no query
// builder writes in a literal's place: string literals joined ('A' ||
// 'B'), or a math function of literals (div(23, -2), floor(pi())).
// Constant arithmetic on numbers (price > 10 * 2, id = 2-1: builders' and
// hand-written), typed literals (interval '1 day', '2024-01-01'::date) and
// anything with a column, parameter or other function are not.
func valueExpr(n *pg_query.Node) bool {
	return valueTree(n, 0) == 2
}

// valueTree is 1 for an untyped literal or numeric constant arithmetic of
// them, 2 for a value valueExpr describes, 0 for anything else.
func valueTree(n *pg_query.Node, depth int) uint8 {
	if n == nil || depth > 32 {
		return 0
	}
	switch x := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		switch x.AConst.Val.(type) {
		case *pg_query.A_Const_Ival, *pg_query.A_Const_Fval, *pg_query.A_Const_Sval:
			return 1
		}
	case *pg_query.Node_AExpr:
		a := x.AExpr
		op := opName(a.Name)
		if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Rexpr == nil || !valueOps[op] {
			return 0
		}
		r := valueTree(a.Rexpr, depth+1)
		if a.Lexpr == nil { // -(1), a unary minus the grammar did not fold
			return r
		}
		l := valueTree(a.Lexpr, depth+1)
		switch {
		case l == 0 || r == 0:
			return 0
		case l == 2 || r == 2 || op == "||":
			return 2
		}
		return 1
	case *pg_query.Node_FuncCall:
		fc := x.FuncCall
		schema, name := lastTwo(fc.Funcname)
		if (schema != "" && schema != "pg_catalog") || !mathFuncs[name] || fc.AggStar || fc.Over != nil {
			return 0
		}
		for _, a := range fc.Args {
			if valueTree(a, depth+1) == 0 {
				return 0
			}
		}
		return 2
	}
	return 0
}

// valueComparison: a value computed from literals compared, not as a
// pattern, with something that is not a constant (name = 'nu' || 't',
// id = 2-1).
func valueComparison(a *pg_query.A_Expr) bool {
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Lexpr == nil || a.Rexpr == nil || isPattern(a) || !isComparison(a) {
		return false
	}
	return valueExpr(a.Rexpr) && !isConst(a.Lexpr) && !valueExpr(a.Lexpr) ||
		valueExpr(a.Lexpr) && !isConst(a.Rexpr) && !valueExpr(a.Rexpr)
}

// valueSet: an UPDATE that assigns a value computed from literals (SET
// name = 'A' || 'B').
func valueSet(u *pg_query.UpdateStmt) bool {
	for _, t := range u.TargetList {
		if rt := t.GetResTarget(); rt != nil && valueExpr(rt.Val) {
			return true
		}
	}
	return false
}

// serverInfo reports whether node m (as pushChildren pushes it) is a value
// that describes the server.
func serverInfo(m any) bool {
	switch n := m.(type) {
	case *pg_query.FuncCall:
		schema, name := lastTwo(n.Funcname)
		if (schema != "" && schema != "pg_catalog") || !catalogDataFunc(name) {
			return false
		}
		if name == "current_setting" && len(n.Args) > 0 {
			// An application's own setting (current_setting('app.tenant'),
			// row-level security's idiom) is not server data.
			if v, k := constValue(n.Args[0]); k == constLiteral && strings.Contains(v, ".") {
				return false
			}
		}
		return true
	case *pg_query.SQLValueFunction:
		switch n.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER,
			pg_query.SQLValueFunctionOp_SVFOP_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return true
		}
	}
	return false
}

// What contains reports about a subtree.
const (
	hasSub     uint8 = 1 << iota // a subquery
	hasServer                    // server information
	hasText                      // a value built as text: ||, a cast to text, a string function
	hasCatalog                   // a catalog relation
	hasColumn                    // a column reference
	hasParam                     // a bind parameter
)

// prober searches one statement for the probe shapes.
type prober struct {
	w      *walker // whose stack the scans use
	found  engine.ProbeSet
	heavy  bool // heavy work inside a subquery (a time probe)
	server bool // the statement reads server information anywhere
}

// contains reports what the subtree of n holds, of the bits in want.
func (p *prober) contains(n any, want uint8) uint8 {
	if n == nil {
		return 0
	}
	sw := p.w
	base := len(sw.stack)
	sw.stack = append(sw.stack, frame{m: n})
	var got uint8
	for len(sw.stack) > base && got != want {
		m := sw.stack[len(sw.stack)-1].m
		sw.stack = sw.stack[:len(sw.stack)-1]
		switch x := m.(type) {
		case *pg_query.SubLink:
			got |= hasSub & want
		case *pg_query.ColumnRef:
			got |= hasColumn & want
		case *pg_query.ParamRef:
			got |= hasParam & want
		case *pg_query.RangeVar:
			if probesCatalog(strings.ToLower(x.Schemaname), strings.ToLower(x.Relname)) {
				got |= hasCatalog & want
			}
		case *pg_query.FuncCall:
			_, name := lastTwo(x.Funcname)
			if stringFuncs[name] {
				got |= hasText & want
			}
		case *pg_query.TypeCast:
			if isTextType(x.TypeName) {
				got |= hasText & want
			}
		case *pg_query.A_Expr:
			if x.Kind == pg_query.A_Expr_Kind_AEXPR_OP && opName(x.Name) == "||" {
				got |= hasText & want
			}
		}
		if serverInfo(m) {
			got |= (hasServer | hasText) & want
		}
		sw.pushChildren(m)
	}
	sw.stack = sw.stack[:base]
	return got
}

func isTextType(tn *pg_query.TypeName) bool {
	if tn == nil || len(tn.ArrayBounds) > 0 {
		return false
	}
	_, name := lastTwo(tn.Names)
	return textTypes[name]
}

// peel strips casts and returns the expression under them.
func peel(n *pg_query.Node) *pg_query.Node {
	for range 16 {
		tc := n.GetTypeCast()
		if tc == nil {
			return n
		}
		n = tc.Arg
	}
	return n
}

// isConst: a literal, a constant arithmetic expression, or a list of them
// (IN (1, 2), BETWEEN 1 AND 2).
func isConst(n *pg_query.Node) bool {
	if n == nil {
		return false
	}
	if l := n.GetList(); l != nil {
		for _, it := range l.Items {
			if !isConst(it) {
				return false
			}
		}
		return len(l.Items) > 0
	}
	if _, k := constValue(n); k == constLiteral {
		return true
	}
	if fc := n.GetFuncCall(); fc != nil {
		// SIMILAR TO 'a%' is parsed as ~ similar_to_escape('a%').
		_, name := lastTwo(fc.Funcname)
		if name != "similar_to_escape" && name != "similar_escape" {
			return false
		}
		for _, a := range fc.Args {
			if !isConst(a) {
				return false
			}
		}
		return true
	}
	if ac := peel(n).GetAConst(); ac != nil {
		return true // NULL, booleans
	}
	if hasColumnOrCall(n) {
		return false
	}
	_, ok := constNumber(n)
	return ok
}

// hasColumnOrCall: an expression that is not made of literals and
// operators alone.
func hasColumnOrCall(n *pg_query.Node) bool {
	switch x := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		return false
	case *pg_query.Node_TypeCast:
		return hasColumnOrCall(x.TypeCast.Arg)
	case *pg_query.Node_AExpr:
		return (x.AExpr.Lexpr != nil && hasColumnOrCall(x.AExpr.Lexpr)) || (x.AExpr.Rexpr != nil && hasColumnOrCall(x.AExpr.Rexpr))
	}
	return true
}

// isComparison: an operator or predicate that compares its two sides.
func isComparison(a *pg_query.A_Expr) bool {
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		switch opName(a.Name) {
		case "=", "<>", "!=", "<", ">", "<=", ">=", "~", "~*", "!~", "!~*", "~~", "~~*", "!~~", "!~~*":
			return true
		}
	case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE,
		pg_query.A_Expr_Kind_AEXPR_SIMILAR, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM,
		pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg_query.A_Expr_Kind_AEXPR_OP_ANY:
		return true
	}
	return false
}

// isPattern: a comparison with a pattern (LIKE, ILIKE, SIMILAR TO, ~).
func isPattern(a *pg_query.A_Expr) bool {
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE, pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		return true
	case pg_query.A_Expr_Kind_AEXPR_OP:
		switch opName(a.Name) {
		case "~", "~*", "!~", "!~*", "~~", "~~*", "!~~", "!~~*":
			return true
		}
	}
	return false
}

// constComparison: a comparison of two constants (4307=4307, 'a'='b').
func constComparison(a *pg_query.A_Expr) bool {
	return a.Lexpr != nil && a.Rexpr != nil && isComparison(a) && isConst(a.Lexpr) && isConst(a.Rexpr)
}

// builderIdiom: the constant comparisons query builders emit: 1=1, 1=0,
// 1<>1, 0=1, 1!=1 (the integers 0 and 1 only, not '1'='1').
func builderIdiom(a *pg_query.A_Expr) bool {
	_, ok := idiomValue(a)
	return ok
}

// idiomValue is a builder idiom's value (1=1 is true, 1=0 false).
func idiomValue(a *pg_query.A_Expr) (value, ok bool) {
	zeroOne := func(n *pg_query.Node) (string, bool) {
		ac := n.GetAConst()
		if ac == nil || ac.GetIval() == nil {
			return "", false
		}
		v, _ := constValue(n)
		return v, v == "0" || v == "1"
	}
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
		return false, false
	}
	l, okl := zeroOne(a.Lexpr)
	r, okr := zeroOne(a.Rexpr)
	if !okl || !okr {
		return false, false
	}
	switch opName(a.Name) {
	case "=":
		return l == r, true
	case "<>", "!=":
		return l != r, true
	}
	return false, false
}

// blindConst: a constant comparison (maybe under NOT) that is not a
// builder's idiom.
func blindConst(n *pg_query.Node) bool {
	for range 8 {
		b := n.GetBoolExpr()
		if b == nil || b.Boolop != pg_query.BoolExprType_NOT_EXPR || len(b.Args) != 1 {
			break
		}
		n = b.Args[0]
	}
	a := n.GetAExpr()
	return a != nil && constComparison(a) && !builderIdiom(a)
}

// appTables reports whether the statement reads or writes an application
// table, and whether it reads a catalog relation next to one.
func appTables(f *engine.StmtFacts) (app, catalog bool) {
	for i := range f.Tables {
		t := &f.Tables[i]
		switch {
		case t.CTE:
		case isCatalog(t.Schema, t.Name):
			if catalogNextToApp(t.Schema, t.Name) {
				catalog = true
			}
		case t.Write && f.Kind == engine.KindDDL:
		default:
			app = true
		}
	}
	return app, catalog
}

// catalogNextToApp: catalog relations that are a probe next to an
// application table. The statistics views and pg_locks are read with
// application tables by dashboards and job queues (good_job, que join
// pg_locks for their advisory locks); they hold no schema and no values.
func catalogNextToApp(schema, name string) bool {
	return probesCatalog(schema, name) && !((schema == "" || schema == "pg_catalog") && name == "pg_locks")
}

// probeSearch fills f.Probes (and f.TimeProbe for heavy work) for the
// statement n. It returns what the statement reads that a statement stacked
// after an application's must not (a catalog relation, server
// information), and whether it reads or writes an application table.
func (w *walker) probeSearch(n *pg_query.Node, f *engine.StmtFacts) (engine.ProbeSet, bool) {
	p := prober{w: w}
	app, catalog := appTables(f)
	var stack engine.ProbeSet
	for i := range f.Tables {
		t := &f.Tables[i]
		if !t.CTE && probesCatalog(t.Schema, t.Name) {
			stack |= engine.ProbeCatalog
		}
	}
	if f.Kind == engine.KindDDL || f.Kind == engine.KindDo {
		// A migration's DO block tests the catalogs before its DDL (IF NOT
		// EXISTS (SELECT 1 FROM pg_class ...) THEN CREATE TABLE ...).
		return stack, false
	}
	if catalog && app {
		f.Probes |= engine.ProbeCatalog
	}
	if !w.probeHint {
		return stack, app
	}
	if !app {
		if p.contains(n, hasServer) != 0 {
			stack |= engine.ProbeServerInfo
		}
		return stack, app
	}
	p.search(n)
	f.Probes |= p.found
	if p.heavy {
		f.TimeProbe = true
	}
	if p.server {
		stack |= engine.ProbeServerInfo
	}
	return stack, app
}

// search walks the statement once and judges each node, on the walker's
// own stack (empty after the walk, and grown to the tree's size by it).
func (p *prober) search(root *pg_query.Node) {
	p.walk(root, func(m any) (bool, bool) {
		p.judge(m)
		return false, false
	})
}

// judge looks at one node of a statement on an application table.
func (p *prober) judge(m any) {
	if serverInfo(m) {
		p.server = true
	}
	switch n := m.(type) {
	case *pg_query.SubLink:
		sel := n.Subselect.GetSelectStmt()
		if p.returnsServer(sel) {
			p.found |= engine.ProbeServerInfo
		}
		if p.heavyWork(n.Subselect, true) {
			p.heavy = true
		}
	case *pg_query.RangeSubselect:
		if p.returnsServer(n.Subquery.GetSelectStmt()) {
			p.found |= engine.ProbeServerInfo
		}
	case *pg_query.CommonTableExpr:
		if p.returnsServer(n.Ctequery.GetSelectStmt()) {
			p.found |= engine.ProbeServerInfo
		}
		if p.heavyWork(n.Ctequery, false) {
			p.heavy = true
		}
	case *pg_query.SortBy:
		if p.contains(n.Node, hasServer) != 0 {
			p.found |= engine.ProbeServerInfo
		}
		if constOrder(n.Node) && p.contains(n.Node, hasColumn|hasParam) == 0 {
			p.found |= engine.ProbeBooleanBlind // ORDER BY 1=1, ORDER BY (SELECT ...), ORDER BY lo_get(16400)
		}
		if subCast(n.Node) {
			p.found |= engine.ProbeErrorBased
		}
	case *pg_query.SelectStmt:
		for _, g := range n.GroupClause {
			if p.contains(g, hasServer) != 0 {
				p.found |= engine.ProbeServerInfo
			}
		}
		if crossCatalog(n) {
			p.heavy = true
		}
		if subCast(n.WhereClause) || subCast(n.HavingClause) {
			p.found |= engine.ProbeErrorBased // WHERE CAST((SELECT ...) AS boolean)
		}
		if n.WhereClause != nil && serverInfo(unwrap(peel(n.WhereClause))) {
			p.found |= engine.ProbeServerInfo
		}
	case *pg_query.TypeCast:
		if !isTextType(n.TypeName) && p.textProbe(n.Arg) {
			p.found |= engine.ProbeErrorBased
		}
	case *pg_query.FuncCall:
		_, name := lastTwo(n.Funcname)
		switch {
		case textInputFuncs[name] && (name != "to_timestamp" || len(n.Args) == 2): // to_timestamp(epoch) takes a number
			for _, a := range n.Args[:min(1, len(n.Args))] {
				if p.contains(a, hasSub|hasServer) != 0 {
					p.found |= engine.ProbeErrorBased // to_number((SELECT ...), '9')
				}
			}
		case typedFuncs[name]:
			for _, a := range n.Args {
				if p.textProbe(a) {
					p.found |= engine.ProbeErrorBased
				}
			}
		case parserFuncs[name]:
			for _, a := range n.Args {
				if p.contains(a, hasSub|hasServer) != 0 {
					p.found |= engine.ProbeErrorBased
				}
			}
		}
	case *pg_query.XmlExpr:
		if n.Op == pg_query.XmlExprOp_IS_XMLPARSE || n.Op == pg_query.XmlExprOp_IS_DOCUMENT {
			for _, a := range n.Args {
				if p.contains(a, hasSub|hasServer) != 0 {
					p.found |= engine.ProbeErrorBased
				}
			}
		}
	case *pg_query.NullTest:
		if subCast(n.Arg) {
			p.found |= engine.ProbeErrorBased
		}
	case *pg_query.BooleanTest:
		if subCast(n.Arg) {
			p.found |= engine.ProbeErrorBased
		}
	case *pg_query.BoolExpr:
		for _, a := range n.Args {
			if subCast(a) {
				p.found |= engine.ProbeErrorBased // AND CAST((SELECT ...) AS boolean)
			}
			if serverInfo(unwrap(peel(a))) {
				p.found |= engine.ProbeServerInfo // AND has_table_privilege('secrets', 'SELECT')
			}
		}
		if n.Boolop != pg_query.BoolExprType_NOT_EXPR {
			// A constant term next to a condition on rows: AND 4307=4307,
			// OR 1=2. (AND 1=1 after a condition is Prisma's: WHERE
			// ("email" = $1 AND 1=1).)
			cons, rows := false, false
			for _, a := range n.Args {
				if blindConst(a) {
					cons = true
				} else if !isConst(a) {
					rows = true
				}
			}
			if cons && rows {
				p.found |= engine.ProbeBooleanBlind
			}
		}
	case *pg_query.CaseWhen:
		if blindConst(n.Expr) {
			p.found |= engine.ProbeBooleanBlind
		}
	case *pg_query.A_Expr:
		p.comparison(n)
	case *pg_query.UpdateStmt:
		if valueSet(n) {
			p.found |= engine.ProbeBooleanBlind // SET name = 'A' || 'B'
		}
	}
}

// comparison judges an operator: a side compared with a constant, and a
// division by a constant subquery.
func (p *prober) comparison(a *pg_query.A_Expr) {
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_OP && opName(a.Name) == "/" && a.Rexpr != nil {
		if sl := peel(a.Rexpr).GetSubLink(); sl != nil && selectOfConsts(sl.Subselect.GetSelectStmt()) {
			p.found |= engine.ProbeBooleanBlind // 1/(SELECT 0): the error half of an oracle
		}
	}
	if a.Lexpr == nil || a.Rexpr == nil || !isComparison(a) {
		return
	}
	if constComparison(a) && !builderIdiom(a) {
		p.found |= engine.ProbeBooleanBlind // SET name = '' < '', ORDER BY 4307=4307
		return
	}
	if valueComparison(a) {
		p.found |= engine.ProbeBooleanBlind // name = 'nu' || 't', id = 2-1
	}
	// A subquery taken apart on both sides (sqlmap's greatest and least
	// tampers: GREATEST(ASCII(SUBSTRING((SELECT ...), 1, 1)), 52) =
	// ASCII(SUBSTRING((SELECT ...), 1, 1))).
	if p.wrapsSub(a.Lexpr) && p.wrapsSub(a.Rexpr) {
		p.found |= engine.ProbeCharExtraction
	}
	for _, sides := range [2][2]*pg_query.Node{{a.Lexpr, a.Rexpr}, {a.Rexpr, a.Lexpr}} {
		side, other := sides[0], sides[1]
		if fc := peel(side).GetFuncCall(); fc != nil && extractWrappers[funcName(fc.Funcname)] && p.contains(fc, hasServer) != 0 {
			p.found |= engine.ProbeServerInfo // id = LENGTH(version())
		}
		if !isConst(other) || isConst(side) {
			continue
		}
		x := peel(side)
		if serverInfo(unwrap(x)) {
			p.found |= engine.ProbeServerInfo
			continue
		}
		if fc := x.GetFuncCall(); fc != nil {
			_, name := lastTwo(fc.Funcname)
			if extractWrappers[name] {
				got := p.contains(fc, hasSub|hasServer)
				if got&hasSub != 0 {
					p.found |= engine.ProbeCharExtraction
				}
				if got&hasServer != 0 {
					p.found |= engine.ProbeServerInfo
				}
				continue
			}
		}
		if subCast(side) {
			p.found |= engine.ProbeErrorBased // 1=CAST((SELECT ...) AS int)
		}
		if sl := x.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
			if isPattern(a) || selectsWrapper(sl) {
				p.found |= engine.ProbeCharExtraction
			}
		}
	}
}

// subCast: a conversion to a non-string type (a cast, int4(...),
// to_number(...)) of a subquery whose value is not a number by
// construction: it fails on a text value, and its error quotes the value.
func subCast(n *pg_query.Node) bool {
	var arg *pg_query.Node
	switch x := n.GetNode().(type) {
	case *pg_query.Node_TypeCast:
		if isTextType(x.TypeCast.TypeName) {
			return false
		}
		arg = x.TypeCast.Arg
	case *pg_query.Node_FuncCall:
		_, name := lastTwo(x.FuncCall.Funcname)
		if !typedFuncs[name] || len(x.FuncCall.Args) == 0 {
			return false
		}
		arg = x.FuncCall.Args[0]
	default:
		return false
	}
	sl := peel(arg).GetSubLink()
	return sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK && !castOfCount(sl)
}

// selectsWrapper: a scalar subquery that returns a value taken apart
// ((SELECT ascii(substr(value, 1, 1)) FROM secrets) > 64).
func selectsWrapper(sl *pg_query.SubLink) bool {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return false
	}
	fc := peel(sel.TargetList[0].GetResTarget().GetVal()).GetFuncCall()
	if fc == nil {
		return false
	}
	_, name := lastTwo(fc.Funcname)
	return extractWrappers[name]
}

// unwrap returns the message inside a Node, as pushChildren pushes it.
func unwrap(n *pg_query.Node) any {
	switch x := n.GetNode().(type) {
	case *pg_query.Node_FuncCall:
		return x.FuncCall
	case *pg_query.Node_SqlvalueFunction:
		return x.SqlvalueFunction
	}
	return nil
}

// textProbe: the argument of a conversion to a non-string type is built as
// text and holds a subquery or server information, or is a subquery or
// server information itself, text inside.
func (p *prober) textProbe(arg *pg_query.Node) bool {
	got := p.contains(arg, hasSub|hasServer|hasText)
	if got&(hasSub|hasServer) == 0 {
		return false
	}
	if got&hasServer != 0 {
		return true
	}
	return got&hasText != 0
}

// castOfCount: a subquery whose value is a number by construction
// (count(...), a constant, EXISTS).
func castOfCount(sl *pg_query.SubLink) bool {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return false
	}
	v := peel(sel.TargetList[0].GetResTarget().GetVal())
	if fc := v.GetFuncCall(); fc != nil {
		_, name := lastTwo(fc.Funcname)
		return name == "count"
	}
	return isConst(v)
}

// selectOfConsts: SELECT of constants alone (SELECT 0).
func selectOfConsts(sel *pg_query.SelectStmt) bool {
	if sel == nil || len(sel.FromClause) > 0 || len(sel.TargetList) == 0 {
		return false
	}
	for _, t := range sel.TargetList {
		if !isConst(t.GetResTarget().GetVal()) {
			return false
		}
	}
	return true
}

// returnsServer: a query whose select list (of any arm) holds server
// information.
func (p *prober) returnsServer(sel *pg_query.SelectStmt) bool {
	for d := 0; sel != nil && d < 64; d++ {
		if sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			if p.returnsServer(sel.Larg) {
				return true
			}
			sel = sel.Rarg
			continue
		}
		for _, t := range sel.TargetList {
			if p.contains(t, hasServer) != 0 {
				return true
			}
		}
		return false
	}
	return false
}

// heavyWork: a subquery that runs a long generate_series (or, when unknown
// is set, one of bounds not known from the text) or a catalog cross join,
// work that waits. A WITH query's series of unknown length is a report's
// (the gaps in a sequence of ids), not counted.
func (p *prober) heavyWork(n *pg_query.Node, unknown bool) bool {
	return p.walk(n, func(m any) (found, skip bool) {
		switch x := m.(type) {
		case *pg_query.FuncCall:
			if funcName(x.Funcname) == "generate_series" {
				r := seriesRows(x)
				return r >= heavySeriesRows || (unknown && r == 0 && numericSeries(x)), false
			}
		case *pg_query.SelectStmt:
			return crossCatalog(x), false
		}
		return false, false
	})
}

// walk walks the subtree of n on the walker's stack until visit reports
// found; skip leaves the children of the node visited out. visit's own
// scans run above the stack's top and restore it.
func (p *prober) walk(n any, visit func(m any) (found, skip bool)) bool {
	sw := p.w
	base := len(sw.stack)
	sw.stack = append(sw.stack, frame{m: n})
	found := false
	for len(sw.stack) > base && !found {
		m := sw.stack[len(sw.stack)-1].m
		sw.stack = sw.stack[:len(sw.stack)-1]
		var skip bool
		if found, skip = visit(m); !skip {
			sw.pushChildren(m)
		}
	}
	sw.stack = sw.stack[:base]
	return found
}

// numericSeries: a generate_series whose bounds are not known from the text
// and are not timestamps (a series of days over a report's range is an
// application's).
func numericSeries(fc *pg_query.FuncCall) bool {
	if len(fc.Args) < 2 {
		return false
	}
	for _, a := range fc.Args {
		if tc := a.GetTypeCast(); tc != nil {
			_, name := lastTwo(tc.TypeName.Names)
			if strings.HasPrefix(name, "timestamp") || name == "date" || name == "interval" {
				return false
			}
		}
		if ac := a.GetAConst(); ac != nil && ac.GetSval() != nil {
			return false // a string bound: a timestamp or a date
		}
		if fc := a.GetFuncCall(); fc != nil {
			return false // now(), date_trunc(...): a time range
		}
		if a.GetSqlvalueFunction() != nil {
			return false // CURRENT_DATE, CURRENT_TIMESTAMP
		}
	}
	return true
}

// crossCatalog: a FROM list of two or more catalog relations without a
// WHERE (a cross join of catalogs: heavy work, sqlmap's wait without
// pg_sleep).
func crossCatalog(s *pg_query.SelectStmt) bool {
	if s.WhereClause != nil || len(s.FromClause) < 2 {
		return false
	}
	n := 0
	for _, it := range s.FromClause {
		if rv := it.GetRangeVar(); rv != nil && isCatalog(strings.ToLower(rv.Schemaname), strings.ToLower(rv.Relname)) {
			n++
		}
	}
	return n >= 2
}

// constOrder: an ORDER BY item that is not a position (ORDER BY 2) nor a
// random order: with no column in it, it orders nothing, and is there to
// make the server evaluate it (the ORDER BY slot's probes).
func constOrder(n *pg_query.Node) bool {
	if ac := n.GetAConst(); ac != nil && ac.GetIval() != nil {
		return false
	}
	if fc := n.GetFuncCall(); fc != nil && len(fc.Args) == 0 {
		switch funcName(fc.Funcname) {
		case "random", "now", "clock_timestamp", "statement_timestamp", "transaction_timestamp":
			return false
		}
	}
	return true
}

// wrapsSub: n, outside any subquery of its own, calls an extractWrapper on
// a subquery.
func (p *prober) wrapsSub(n *pg_query.Node) bool {
	return p.walk(n, func(m any) (found, skip bool) {
		switch x := m.(type) {
		case *pg_query.SubLink:
			return false, true
		case *pg_query.FuncCall:
			if extractWrappers[funcName(x.Funcname)] && p.contains(x, hasSub) != 0 {
				return true, true
			}
		}
		return false, false
	})
}
