package mysql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Point selects through the shape cache (issue 26). An application that
// does not prepare its statements sends SELECT ... WHERE id=42 with a new
// key each time; like a bulk INSERT, each text was parsed. A SELECT is
// inert (its facts hold for every text of its shape) only in this short,
// strict form, and only when every literal the shape replaced is one of
// its comparison operands:
//
//	SELECT col, t.col, *, ... FROM t [, u ...]
//	WHERE col op literal [AND col op literal ...] [ORDER BY col ...] [FOR UPDATE]
//
// with op one of = <> != < <= > >=, the other operand a column (not a
// function of one) and the literal a number, a decimal or a string, or
// one of them after a unary minus or plus. Why no fact reads such a
// literal's value: a column compared with a constant is neither always
// true nor always false to the folding (taut.go, fold.go: the column's
// value is unknown, NULL makes no comparison true; tautself.go compares an
// expression with itself, never with a literal), so the AND of such
// comparisons folds to nothing; blind.go's builder idioms (1=1, 1=0,
// 'a'='a') and its probes compare constants with constants or read
// functions, operators and literals outside comparisons with a column;
// probes, effects and limits read function arguments (SLEEP(5),
// LOAD_FILE('/etc/passwd'), REPEAT('x', 1e9)), INTO OUTFILE paths and
// LIMIT counts, which this form has not. Everything that reads a literal's
// value is outside the form: LIMIT counts, target-list expressions,
// function arguments, IN lists, LIKE patterns, ORDER BY positions, WITH,
// set operations, GROUP BY, HAVING, INTO, AS OF. A text with a literal
// there has no entry: a literal the shape replaced that is not a
// comparison operand of this form makes the text not inert.

// inertSelect reports whether s is a point select of the form above whose
// comparison operands start at every one of starts.
func inertSelect(s *ast.SelectStmt, starts []int) bool {
	if s.Kind != ast.SelectStmtKindSelect || s.With != nil || s.GroupBy != nil || s.Having != nil ||
		len(s.WindowSpecs) > 0 || s.Limit != nil || s.SelectIntoOpt != nil || s.AfterSetOperator != nil ||
		len(s.Lists) > 0 || s.Where == nil || s.From == nil || s.Fields == nil {
		return false
	}
	for _, f := range s.Fields.Fields {
		if f.WildCard == nil {
			if _, ok := f.Expr.(*ast.ColumnNameExpr); !ok {
				return false
			}
		}
	}
	if !plainTables(s.From.TableRefs) {
		return false
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			if _, ok := it.Expr.(*ast.ColumnNameExpr); !ok {
				return false
			}
		}
	}
	at := map[int]bool{}
	if !columnComparisons(s.Where, at, 0) {
		return false
	}
	for _, p := range starts {
		if !at[p] {
			return false
		}
	}
	return true
}

// plainTables reports whether refs names tables only, joined by commas.
func plainTables(n ast.ResultSetNode) bool {
	switch x := n.(type) {
	case *ast.Join:
		if x.On != nil || len(x.Using) > 0 || x.NaturalJoin || x.StraightJoin {
			return false
		}
		return plainTables(x.Left) && (x.Right == nil || plainTables(x.Right))
	case *ast.TableSource:
		t, ok := x.Source.(*ast.TableName)
		return ok && t.AsOf == nil
	}
	return false
}

// columnComparisons records in at the start of each literal operand of
// cond, an AND of comparisons of a column with a literal, and reports
// whether cond is one.
func columnComparisons(cond ast.ExprNode, at map[int]bool, depth int) bool {
	if depth > 64 {
		return false
	}
	x, ok := cond.(*ast.BinaryOperationExpr)
	if !ok {
		return false
	}
	switch x.Op {
	case opcode.LogicAnd:
		return columnComparisons(x.L, at, depth+1) && columnComparisons(x.R, at, depth+1)
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
	default:
		return false
	}
	col, v := x.L, x.R
	if _, ok := col.(*ast.ColumnNameExpr); !ok {
		col, v = v, col
	}
	if _, ok := col.(*ast.ColumnNameExpr); !ok {
		return false
	}
	if u, ok := v.(*ast.UnaryOperationExpr); ok && (u.Op == opcode.Minus || u.Op == opcode.Plus) {
		v = u.V
	}
	if _, ok := v.(ast.ValueExpr); !ok {
		return false
	}
	at[v.OriginTextPosition()] = true
	return true
}
