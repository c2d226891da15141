package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/sqlfw/sqlfw/engine"
)

// The shapes of blind extraction (issue 22), in statements that read or
// write an application table (probes.go appTable):
//
//	boolean_blind    a term of a WHERE, HAVING or ON condition's AND or
//	                 OR chain whose value is known before it runs, in a
//	                 place no query builder puts one: AND 5678=5678,
//	                 AND 'a'='a', AND 5678=1234, OR 5678=1234, OR NOT
//	                 5678=5678, AND (SELECT 3)=3 — the two answers an
//	                 injected boolean oracle compares. Kept, as the
//	                 builders emit them: a constant as a chain's first
//	                 term (WHERE 1=1 AND ..., WHERE (1=0 OR a = 1)), a
//	                 whole condition that is constant (WHERE 1=0, WHERE
//	                 1=1), and the empty IN list's false anywhere in a
//	                 chain — a comparison of the literals 0 and 1 that is
//	                 false (1=0, 0=1, 1<>1, 0!=0) or a bare 0/FALSE
//	                 (Rails, Laravel, SQLAlchemy put it where the IN
//	                 was). An OR term that is always true is a tautology
//	                 (no-tautology's). Also a CASE WHEN, IF(), ELT() or
//	                 MAKE_SET() choosing by a comparison of constants
//	                 (RLIKE (SELECT CASE WHEN (1=1) THEN 1 ELSE 0x28
//	                 END)): the conditional error or value of an oracle.
//	char_extraction  a character-taking function (ASCII, ORD, SUBSTRING,
//	                 MID, LEFT, HEX, LENGTH ..., charFuncs) of a scalar
//	                 subquery or of server information, or a scalar
//	                 subquery selecting one, compared with a constant
//	                 (ORD(MID((SELECT ... FROM secrets), 1, 1)) > 64) or
//	                 used as a truth value; a scalar subquery matched
//	                 against a constant LIKE or REGEXP pattern.
//
// What only an allowlist stops: an oracle whose question names nothing
// of this (AND (SELECT COUNT(*) FROM secrets) > 3, AND EXISTS (SELECT 1
// FROM secrets WHERE id = 3)), which an application's own statements ask
// too.

// charFuncs take a string apart into characters or numbers a blind probe
// compares one by one.
var charFuncs = map[string]bool{
	"ascii": true, "ord": true, "substring": true, "substr": true, "mid": true, "left": true, "right": true,
	"hex": true, "unhex": true, "bin": true, "oct": true, "conv": true, "length": true, "char_length": true,
	"character_length": true, "bit_length": true, "octet_length": true, "strcmp": true, "instr": true,
	"locate": true, "position": true, "lpad": true, "rpad": true, "reverse": true, "substring_index": true,
	"regexp_substr": true, "crc32": true, "char": true, "weight_string": true, "soundex": true,
}

// choosers pick a value by their first argument's truth.
var choosers = map[string]bool{"if": true, "elt": true, "make_set": true}

// blindCond notes (walker.blind) that a condition has a known-valued term
// where builders put none, in some reading of its X'...' literals.
func (w *walker) blindCond(e ast.ExprNode) {
	if e == nil || w.blind {
		return
	}
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if fo.blindTerm(e, true, 0) {
			w.blind = true
			return
		}
	}
}

// blindHaving notes a HAVING whose whole condition is known before it
// runs (WHERE id = 1 HAVING 6534=6534: sqlmap's boolean test where AND
// is refused); builders write no HAVING of constants but 1=1 / 1=0.
func (w *walker) blindHaving(e ast.ExprNode) {
	if w.blind || builderForm(e) {
		return
	}
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if _, known := fo.knownTruth(e); known {
			w.blind = true
			return
		}
	}
}

// blindTerm reports whether the AND or OR chain of e (each parenthesised
// group a chain of its own) has a term whose value is known in a place a
// query builder puts none.
func (fo *folder) blindTerm(e ast.ExprNode, top bool, depth int) bool {
	if depth > maxFoldDepth {
		return false
	}
	x, ok := unparen(e).(*ast.BinaryOperationExpr)
	if !ok || x.Op != opcode.LogicAnd && x.Op != opcode.LogicOr && x.Op != opcode.LogicXor {
		return false
	}
	terms := chainTerms(x, x.Op, nil)
	for k, t := range terms {
		if v, known := fo.knownTruth(t); known {
			switch {
			case x.Op == opcode.LogicXor:
				if k > 0 && readsColumn(terms) {
					return true // name = 'a' XOR 'b': no builder writes XOR of a constant
				}
			case k == 0 && (top || builderForm(t)): // WHERE 1=1 AND ..., (1=0 OR ...)
			case !v && builderFalse(t): // an empty IN list
			case v && x.Op == opcode.LogicOr: // a tautology
			case x.Op == opcode.LogicOr && fo.optionalFilterArm(t, terms): // (name = 'x' OR 'x' IS NULL)
			default:
				return true
			}
			continue
		}
		if fo.blindTerm(t, false, depth+1) {
			return true
		}
	}
	return false
}

// chainTerms appends the terms of the op chain x, in order, without
// entering parentheses.
func chainTerms(e ast.ExprNode, op opcode.Op, out []ast.ExprNode) []ast.ExprNode {
	if x, ok := e.(*ast.BinaryOperationExpr); ok && x.Op == op {
		out = chainTerms(x.L, op, out)
		return chainTerms(x.R, op, out)
	}
	return append(out, e)
}

// knownTruth returns the truth of e when it is known before it runs (not
// NULL).
func (fo *folder) knownTruth(e ast.ExprNode) (bool, bool) {
	v, ok := fo.fold(e, 0)
	if !ok || v.null {
		return false, false
	}
	return truthy(v), true
}

// builderFalse reports whether e is what builders write for an empty IN
// list: a comparison of the literals 0 and 1 (1=0, 0=1, 1<>1, 1!=1), or
// 0 / FALSE. Its truth is checked by the caller.
func builderFalse(e ast.ExprNode) bool {
	e = unparen(e)
	if bitLiteral(e) {
		return true
	}
	x, ok := e.(*ast.BinaryOperationExpr)
	if !ok || x.Op != opcode.EQ && x.Op != opcode.NE {
		return false
	}
	return bitLiteral(unparen(x.L)) && bitLiteral(unparen(x.R))
}

// builderForm reports whether e is a constant as builders write one at
// the head of a nested group: 1=1, 1=0, 0<>0, 1, 0 (MyBatis' "(1=1 AND
// ...)", Rails' "(1=0 OR ...)"), not '1'='1' or 5678=5678.
func builderForm(e ast.ExprNode) bool { return builderFalse(e) }

// bitLiteral: the integer literal 0 or 1 (TRUE and FALSE are read as
// them).
func bitLiteral(e ast.ExprNode) bool {
	v, ok := e.(*test_driver.ValueExpr)
	if !ok {
		return false
	}
	switch v.Kind() {
	case test_driver.KindInt64:
		n := v.GetInt64()
		return n == 0 || n == 1
	case test_driver.KindUint64:
		n := v.GetUint64()
		return n == 0 || n == 1
	}
	return false
}

// constChoice reports whether e, a chooser's or CASE's condition, is a
// comparison or logical expression of constants (1=1, 5678=5678, NOT
// 1=2), not a bare value.
func constChoice(e ast.ExprNode) bool {
	switch x := unparen(e).(type) {
	case *ast.BinaryOperationExpr, *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternInExpr,
		*ast.PatternLikeOrIlikeExpr, *ast.PatternRegexpExpr, *ast.BetweenExpr:
	case *ast.UnaryOperationExpr:
		if x.Op != opcode.Not && x.Op != opcode.Not2 {
			return false
		}
	default:
		return false
	}
	if !constant(e) {
		return false // reads the row: IF(id = 9 OR 1, ...) is no-tautology's
	}
	v, ok := value(e)
	return ok && !v.null
}

// blindNode adds the boolean_blind and char_extraction shapes the node n
// has, in a statement on application tables.
func blindNode(st *engine.StmtFacts, n ast.Node) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.OrderBy != nil {
			for _, it := range x.OrderBy.Items {
				if it != nil && constOrderItem(it.Expr) {
					st.Probes |= engine.ProbeBooleanBlind // ORDER BY 1 OR 1=1
				}
			}
		}
	case *ast.Assignment:
		if x.Expr != nil && constChoice(x.Expr) {
			st.Probes |= engine.ProbeBooleanBlind // SET name = 'x' OR '1'='1'
		}
	case *ast.CaseExpr:
		if x.Value == nil {
			for _, wc := range x.WhenClauses {
				if constChoice(wc.Expr) {
					st.Probes |= engine.ProbeBooleanBlind
				}
			}
		}
	case *ast.FuncCallExpr:
		if choosers[x.FnName.L] && len(x.Args) > 0 && constChoice(x.Args[0]) {
			st.Probes |= engine.ProbeBooleanBlind
		}
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
			if plainOperand(x.L) && plainOperand(x.R) {
				return // id = 5, a.id = b.id: the common comparison, nothing to find
			}
			if constant(x.R) && extraction(x.L) || constant(x.L) && extraction(x.R) {
				st.Probes |= engine.ProbeCharExtraction
			}
			if constant(x.R) && comparison(x.L) || constant(x.L) && comparison(x.R) {
				st.Probes |= engine.ProbeBooleanBlind // (name = 'x') = 'y'
			}
			if literalMatch(x.L) || literalMatch(x.R) || columnVsTest(x.L, x.R) || columnVsTest(x.R, x.L) {
				st.Probes |= engine.ProbeBooleanBlind // name = ('A' NOT RLIKE 'B'), id = ('a' OR 'b')
			}
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod,
			opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift:
			if stringLiteral(x.L) && stringLiteral(x.R) {
				st.Probes |= engine.ProbeBooleanBlind // name = '' * '', '' >> ''
			}
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			if extractTruth(leafTerm(x.L)) || extractTruth(leafTerm(x.R)) {
				st.Probes |= engine.ProbeCharExtraction
			}
		}
	case *ast.UnaryOperationExpr:
		if (x.Op == opcode.Not || x.Op == opcode.Not2) && extractTruth(x.V) {
			st.Probes |= engine.ProbeCharExtraction
		}
	case *ast.BetweenExpr:
		if extraction(x.Expr) && constant(x.Left) && constant(x.Right) {
			st.Probes |= engine.ProbeCharExtraction
		}
	case *ast.PatternInExpr:
		if x.Sel == nil && extraction(x.Expr) {
			all := true
			for _, v := range x.List {
				all = all && constant(v)
			}
			if all {
				st.Probes |= engine.ProbeCharExtraction
			}
		}
	case *ast.PatternLikeOrIlikeExpr:
		if constant(x.Pattern) && (extraction(x.Expr) || scalarSubquery(x.Expr)) {
			st.Probes |= engine.ProbeCharExtraction
		}
		if constant(x.Pattern) && comparison(x.Expr) {
			st.Probes |= engine.ProbeBooleanBlind // name = 'A' NOT LIKE 'B'
		}
	case *ast.PatternRegexpExpr:
		if constant(x.Pattern) && (extraction(x.Expr) || scalarSubquery(x.Expr)) {
			st.Probes |= engine.ProbeCharExtraction
		}
		if constant(x.Pattern) && comparison(x.Expr) {
			st.Probes |= engine.ProbeBooleanBlind // name = 'A' RLIKE 'B'
		}
	}
}

// extractTruth: e, used as a truth value, is an extraction and reads no
// column of the statement's rows (AND ORD(MID((SELECT ...), 1, 1))).
func extractTruth(e ast.ExprNode) bool {
	if e == nil || !extraction(e) {
		return false
	}
	v := &outerColumns{}
	e.Accept(v)
	return !v.found
}

// outerColumns finds a column or parameter outside the subqueries of what
// it visits.
type outerColumns struct{ found, columnsOnly bool }

func (v *outerColumns) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.ColumnNameExpr:
		v.found = true
	case ast.ParamMarkerExpr:
		v.found = v.found || !v.columnsOnly
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, v.found
}

func (v *outerColumns) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// extraction reports whether e holds a character-taking function of a
// scalar subquery or of server information, or is a scalar subquery that
// selects one.
func extraction(e ast.ExprNode) bool {
	if sq, ok := unparen(e).(*ast.SubqueryExpr); ok && !sq.Exists {
		if sel, ok := sq.Query.(*ast.SelectStmt); ok && sel.Fields != nil {
			for _, f := range sel.Fields.Fields {
				if f.Expr != nil && hasCharFunc(f.Expr) {
					return true
				}
			}
		}
	}
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if f, ok := n.(*ast.FuncCallExpr); ok && !found && charFuncs[f.FnName.L] {
			for _, a := range f.Args {
				if fed(a) {
					found = true
					return
				}
			}
		}
	}))
	return found
}

func hasCharFunc(e ast.ExprNode) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if f, ok := n.(*ast.FuncCallExpr); ok && charFuncs[f.FnName.L] {
			found = true
		}
	}))
	return found
}

// scalarSubquery: e is a subquery used as a value.
func scalarSubquery(e ast.ExprNode) bool {
	sq, ok := unparen(e).(*ast.SubqueryExpr)
	return ok && !sq.Exists
}

// comparison reports whether e is a comparison of a column: its truth
// value, compared again with a constant ((name = 'x') = 'y', name = 'A'
// NOT RLIKE 'B', which MySQL reads as (name = 'A') NOT RLIKE 'B'), turns
// an application's test into an injected one.
func comparison(e ast.ExprNode) bool {
	x, ok := e.(*ast.BinaryOperationExpr) // not parenthesised: (a = b) = 1 is written so on purpose
	if !ok {
		return false
	}
	switch x.Op {
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
	default:
		return false
	}
	_, l := x.L.(*ast.ColumnNameExpr)
	_, r := x.R.(*ast.ColumnNameExpr)
	return l || r
}

// stringLiteral: a quoted string literal (the empty string times itself has
// no use but a probe's).
func stringLiteral(e ast.ExprNode) bool {
	v, ok := unparen(e).(*test_driver.ValueExpr)
	return ok && v.Kind() == test_driver.KindString
}

// literalMatch: a LIKE or REGEXP of a string literal against a constant,
// compared again (name = 'A' NOT RLIKE 'B', as TiDB groups it).
func literalMatch(e ast.ExprNode) bool {
	switch x := e.(type) {
	case *ast.PatternLikeOrIlikeExpr:
		return stringLiteral(x.Expr) && constant(x.Pattern)
	case *ast.PatternRegexpExpr:
		return stringLiteral(x.Expr) && constant(x.Pattern)
	}
	return false
}

// constOrderItem reports whether an ORDER BY item is worked out from
// constants alone with an operator or CASE in it (ORDER BY 1 OR 1=1,
// ORDER BY 6444930 AND 6=6, ORDER BY CASE 1 WHEN 2 THEN 2 END): the same
// for every row, so it orders nothing; a literal, a position, NULL, -1
// and RAND() are not.
func constOrderItem(e ast.ExprNode) bool {
	switch x := unparen(e).(type) {
	case nil, ast.ValueExpr, *ast.PositionExpr, ast.ParamMarkerExpr:
		return false
	case *ast.UnaryOperationExpr:
		if _, lit := unparen(x.V).(ast.ValueExpr); lit {
			return false
		}
	case *ast.SubqueryExpr:
		return constQuery(x.Query) // ORDER BY (SELECT 1 FROM DUAL)
	case *ast.VariableExpr:
		return false // ORDER BY @sort: a variable alone
	}
	return sameForRows(e) // ORDER BY 1*56, 1 OR 1=1, 1 - ORD('a'), CASE 1 WHEN 2 THEN 2 END, @a OR 1
}

// sameForRows reports whether e's value is the same for every row: no
// column, parameter, table (but DUAL), aggregate or random number in it;
// constants and variables (@a, @@x) are.
func sameForRows(e ast.Node) bool {
	ok := true
	e.Accept(visitFunc(func(n ast.Node) {
		switch x := n.(type) {
		case *ast.ColumnNameExpr, ast.ParamMarkerExpr, *ast.DefaultExpr, *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
			ok = false
		case *ast.TableName:
			if x.Schema.L != "" || x.Name.L != "dual" {
				ok = false
			}
		case *ast.FuncCallExpr:
			if len(x.Args) == 0 || x.FnName.L == "rand" {
				ok = false
			}
		}
	}))
	return ok
}

// constQuery: a SELECT of constants, without a table or FROM DUAL, and
// without a condition.
func constQuery(q ast.ResultSetNode) bool {
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.Where != nil || sel.Fields == nil || sel.GroupBy != nil || sel.Having != nil {
		return false
	}
	if sel.From != nil {
		j := sel.From.TableRefs
		if j == nil || j.Right != nil {
			return false
		}
		ts, ok := j.Left.(*ast.TableSource)
		if !ok {
			return false
		}
		if t, ok := ts.Source.(*ast.TableName); !ok || t.Schema.L != "" || t.Name.L != "dual" {
			return false
		}
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil || f.Expr == nil || !sameForRows(f.Expr) {
			return false
		}
	}
	return true
}

// columnVsTest: col is a column and other a constant with a test in it
// (id = ('a' OR 'b'), id = COS(1 IN (BINARY 'b'))): an injected truth
// value where the application compares a value.
func columnVsTest(col, other ast.ExprNode) bool {
	_, ok := col.(*ast.ColumnNameExpr)
	return ok && sameForRows(other) && (hasTest(other) || mixedArith(other) || constSubquery(other) || literalValue(other))
}

// valueFuncs compute a number from a number or a character alone.
var valueFuncs = map[string]bool{
	"cos": true, "sin": true, "tan": true, "cot": true, "acos": true, "asin": true, "atan": true,
	"abs": true, "sign": true, "ceil": true, "ceiling": true, "floor": true, "round": true,
	"truncate": true, "pow": true, "power": true, "sqrt": true, "exp": true, "ln": true, "log": true,
	"log2": true, "log10": true, "mod": true, "pi": true, "degrees": true, "radians": true,
	"ord": true, "ascii": true, "bit_count": true, "crc32": true, "conv": true,
}

// literalValue reports whether e is a value computed from literals by
// what no query builder writes there: a function of valueFuncs, a BINARY
// of what is not a plain literal, an operator with a string literal operand
// (id = COS(BINARY('b')), id = (BINARY BINARY (1)), id = 1 - ORD('A'),
// name = 'aa' | +'1'). An application puts a literal there; an injected
// expression that answers as the literal does confirms the text runs.
// Constant arithmetic on numbers (price > 10 * 2, id = 1*56: builders'
// and hand-written), BINARY 'x' (Rails' case-sensitive comparison),
// parentheses and signs ((1), -1), variables, parameters, columns, dates
// and other casts are not such values.
func literalValue(e ast.ExprNode) bool {
	return literalTree(e, 0) == 2
}

// literalTree is 1 for a literal or numeric constant arithmetic of
// literals, 2 for a value computed from literals as literalValue says, 0
// for anything else.
func literalTree(e ast.ExprNode, depth int) uint8 {
	if depth > 32 {
		return 0
	}
	switch x := unparen(e).(type) {
	case ast.ValueExpr:
		return 1
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return 0
		}
		return literalTree(x.V, depth+1)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod,
			opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift:
			l, r := literalTree(x.L, depth+1), literalTree(x.R, depth+1)
			if l == 0 || r == 0 {
				return 0
			}
			if l == 2 || r == 2 || stringLiteral(x.L) || stringLiteral(x.R) {
				return 2
			}
			return 1
		}
	case *ast.FuncCastExpr:
		if x.FunctionType != ast.CastBinaryOperator {
			return 0
		}
		k := literalTree(x.Expr, depth+1)
		if _, lit := unparen(x.Expr).(ast.ValueExpr); lit || k == 0 {
			return k // BINARY 'x'
		}
		return 2
	case *ast.FuncCallExpr:
		if !valueFuncs[x.FnName.L] || x.Schema.L != "" {
			return 0
		}
		for _, a := range x.Args {
			if literalTree(a, depth+1) == 0 {
				return 0
			}
		}
		return 2
	}
	return 0
}

// constSubquery: e is (through parentheses, BINARY and functions of one
// argument) a scalar subquery of constants (id = ((SELECT 1)), id =
// BINARY (SELECT 'b')): a value no application wraps in a query.
func constSubquery(e ast.ExprNode) bool {
	for {
		switch x := unparen(e).(type) {
		case *ast.SubqueryExpr:
			return !x.Exists && constQuery(x.Query)
		case *ast.FuncCallExpr:
			if len(x.Args) != 1 {
				return false
			}
			e = x.Args[0]
		case *ast.FuncCastExpr:
			e = x.Expr
		case *ast.UnaryOperationExpr:
			e = x.V
		default:
			return false
		}
	}
}

// mixedArith reports whether e holds arithmetic between a string or
// boolean literal and another operand (id = 'a' * 1, id = 1 - true): no
// application computes a number from a string literal so.
func mixedArith(e ast.ExprNode) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		x, ok := n.(*ast.BinaryOperationExpr)
		if !ok || found {
			return
		}
		switch x.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
			found = oddOperand(x.L) || oddOperand(x.R)
		}
	}))
	return found
}

// oddOperand: a string literal, or TRUE / FALSE as written.
func oddOperand(e ast.ExprNode) bool {
	if stringLiteral(e) {
		return true
	}
	v, ok := unparen(e).(*test_driver.ValueExpr)
	if !ok {
		return false
	}
	var sb strings.Builder
	if err := v.Restore(format.NewRestoreCtx(0, &sb)); err != nil {
		return false
	}
	t := strings.ToLower(sb.String())
	return t == "true" || t == "false"
}

// hasTest reports whether e holds a logical operator, comparison or
// pattern test.
func hasTest(e ast.ExprNode) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		switch x := n.(type) {
		case *ast.BinaryOperationExpr:
			switch x.Op {
			case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor, opcode.EQ, opcode.NE, opcode.LT, opcode.LE,
				opcode.GT, opcode.GE, opcode.NullEQ:
				found = true
			}
		case *ast.PatternInExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternRegexpExpr, *ast.IsNullExpr,
			*ast.IsTruthExpr, *ast.BetweenExpr, *ast.CaseExpr:
			found = true
		case *ast.UnaryOperationExpr:
			if x.Op == opcode.Not || x.Op == opcode.Not2 {
				found = true
			}
		}
	}))
	return found
}

// plainOperand: a column, a literal, a parameter or a variable.
func plainOperand(e ast.ExprNode) bool {
	switch e.(type) {
	case *ast.ColumnNameExpr, ast.ValueExpr, ast.ParamMarkerExpr, *ast.VariableExpr:
		return true
	}
	return false
}

// valueOperand: a literal or variable as an operand of AND/OR/XOR
// ('a' OR 'b', 'admin' OR ...): the walker's cue to look for a test of
// constants where a value stands.
func valueOperand(e ast.ExprNode) bool {
	switch unparen(e).(type) {
	case ast.ValueExpr, *ast.VariableExpr:
		return true
	}
	return false
}

// isBoolLiteral: TRUE or FALSE as written (the walker's cue for
// mixedArith; TiDB keeps the spelling in the literal's text).
func isBoolLiteral(e ast.ExprNode) bool {
	v, ok := e.(*test_driver.ValueExpr)
	return ok && v.Kind() == test_driver.KindInt64 && oddOperand(e)
}

// readsColumn reports whether one of terms reads a column of the
// statement's rows (outside subqueries).
func readsColumn(terms []ast.ExprNode) bool {
	for _, t := range terms {
		v := &outerColumns{columnsOnly: true}
		t.Accept(v)
		if v.found {
			return true
		}
	}
	return false
}
