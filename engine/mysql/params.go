package mysql

// Bare parameters: a condition of a prepared statement that is a
// parameter on its own, which the value bound at execution makes always
// true or never (engine bound.go):
//
//	DELETE FROM t WHERE ?                  -- every row when ? is true
//	UPDATE t SET a = 1 WHERE (NOT ?)       -- every row when ? is false
//	SELECT * FROM t WHERE a = ? OR ?       -- an always-true OR arm when the second ? is true
//	DELETE FROM t WHERE ? AND ? IS TRUE    -- every row when both are true
//
// A condition is read as an OR of arms, each an AND of atoms; an arm whose
// atoms are all bare parameters (?, (?), NOT ?, ! ?, ? IS TRUE, ? IS
// FALSE) is reported with them. It is an UPDATE's or DELETE's whole WHERE
// (BareWhere: an execution that makes it true is the WHERE-less write), or
// one arm of several in a WHERE, HAVING or ON (BareOr: the always-true OR
// arm). Conditions whose truth depends on the values in other ways (? = 1,
// ? IS NULL OR a = ?) are not bare: what the folding of constants decides
// of them (taut.go) is decided on the text. Parameters are numbered in
// text order, as the server numbers them.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/sqlfw/sqlfw/engine"
)

// bareParams fills st's bare parameters from s; a statement without a "?"
// costs a byte scan.
func bareParams(st *engine.StmtFacts, s ast.StmtNode) {
	if strings.IndexByte(s.Text(), '?') < 0 {
		return
	}
	b := &bareWalker{st: st}
	s.Accept(&b.offsets)
	if len(b.offsets.at) == 0 {
		return
	}
	slices.Sort(b.offsets.at)
	switch x := s.(type) {
	case *ast.DeleteStmt:
		b.write = true
		if !multiTable(x.TableRefs) && !x.IsMultiTable {
			b.plain = plainParams(x.Where, nil)
		}
	case *ast.UpdateStmt:
		b.write = true
		if !multiTable(x.TableRefs) {
			b.plain = plainParams(x.Where, nil)
		}
	case *ast.InsertStmt:
		b.write = x.IsReplace || len(x.OnDuplicate) > 0
	}
	s.Accept(b)
}

// multiTable reports whether a write names more than one table: its
// conditions may compare a column of another table (UPDATE t, u SET t.a =
// 1 WHERE u.x = ?), which filters none of the written table's rows, so no
// parameter of it is plain.
func multiTable(refs *ast.TableRefsClause) bool {
	return refs != nil && refs.TableRefs != nil && refs.TableRefs.Right != nil
}

// plainParams appends the offsets of the parameters that condition e
// compares straight with a column (id = ?, id IN (?, ?), id BETWEEN ? AND
// ?), through AND, OR, XOR, NOT and parentheses: those filter by the row.
func plainParams(e ast.ExprNode, out []int) []int {
	if e == nil {
		return out
	}
	param := func(e ast.ExprNode) (int, bool) {
		m, ok := unparen(e).(*driver.ParamMarkerExpr)
		if !ok {
			return 0, false
		}
		return m.Offset, true
	}
	column := func(e ast.ExprNode) bool {
		_, ok := unparen(e).(*ast.ColumnNameExpr)
		return ok
	}
	switch x := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			return plainParams(x.R, plainParams(x.L, out))
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
			if o, ok := param(x.R); ok && column(x.L) {
				out = append(out, o)
			} else if o, ok := param(x.L); ok && column(x.R) {
				out = append(out, o)
			}
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return plainParams(x.V, out)
		}
	case *ast.PatternInExpr:
		if column(x.Expr) && x.Sel == nil {
			for _, it := range x.List {
				if o, ok := param(it); ok {
					out = append(out, o)
				}
			}
		}
	case *ast.BetweenExpr:
		if column(x.Expr) {
			if o, ok := param(x.Left); ok {
				out = append(out, o)
			}
			if o, ok := param(x.Right); ok {
				out = append(out, o)
			}
		}
	}
	return out
}

// paramOffsets collects the offsets of a statement's parameters.
type paramOffsets struct{ at []int }

func (p *paramOffsets) Enter(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*driver.ParamMarkerExpr); ok {
		p.at = append(p.at, m.Offset)
	}
	return n, false
}
func (p *paramOffsets) Leave(n ast.Node) (ast.Node, bool) { return n, true }

type bareWalker struct {
	st      *engine.StmtFacts
	offsets paramOffsets
	arm     int32
	write   bool  // the statement is a write whose rows a condition may decide
	plain   []int // offsets of the parameters that filter by the row (plainParams)
}

// decides marks the statement a ParamWrite when condition e of a write
// holds a parameter that is not plain.
func (b *bareWalker) decides(e ast.ExprNode) {
	if !b.write || b.st.ParamWrite {
		return
	}
	e.Accept(visitFunc(func(n ast.Node) {
		if m, ok := n.(*driver.ParamMarkerExpr); ok && !slices.Contains(b.plain, m.Offset) {
			b.st.ParamWrite = true
		}
	}))
}

func (b *bareWalker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.DeleteStmt:
		b.cond(x.Where, engine.KindDelete)
	case *ast.UpdateStmt:
		b.cond(x.Where, engine.KindUpdate)
	case *ast.SelectStmt:
		b.cond(x.Where, 0)
		if x.Having != nil {
			b.cond(x.Having.Expr, 0)
		}
	case *ast.Join:
		if x.On != nil {
			b.cond(x.On.Expr, 0)
		}
	}
	return n, false
}
func (b *bareWalker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// cond reads condition e; kind is the UPDATE or DELETE whose WHERE it is.
func (b *bareWalker) cond(e ast.ExprNode, kind engine.StmtKind) {
	if e == nil {
		return
	}
	b.decides(e)
	arms := orArms(e, nil)
	if len(arms) == 1 && kind == 0 {
		return // a SELECT's whole WHERE: every row is no tautology
	}
	for _, arm := range arms {
		atoms := andAtoms(arm, nil)
		var ps []engine.BareParam
		for _, a := range atoms {
			i, neg, ok := b.atom(a)
			if !ok {
				ps = nil
				break
			}
			ps = append(ps, engine.BareParam{Index: i, Arm: b.arm, Negated: neg})
		}
		if ps == nil {
			continue
		}
		b.arm++
		b.st.BareParams = append(b.st.BareParams, ps...)
		if len(arms) > 1 {
			b.st.BareOr = true
		} else if kind != 0 {
			b.st.BareWhere |= 1 << kind
		}
	}
}

// atom reads a bare parameter: its index, and whether the condition
// holds when it is false.
func (b *bareWalker) atom(e ast.ExprNode) (int32, bool, bool) {
	neg := false
	for {
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			e = x.Expr
			continue
		case *ast.UnaryOperationExpr:
			if x.Op == opcode.Not || x.Op == opcode.Not2 {
				neg, e = !neg, x.V
				continue
			}
		case *ast.IsTruthExpr:
			if !x.Not {
				// ? IS TRUE holds when ? is true, ? IS FALSE when false
				if x.True == 0 {
					neg = !neg
				}
				e = x.Expr
				continue
			}
		case *driver.ParamMarkerExpr:
			i, found := slices.BinarySearch(b.offsets.at, x.Offset)
			return int32(i), neg, found
		}
		return 0, false, false
	}
}

func orArms(e ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	e = unparen(e)
	if x, ok := e.(*ast.BinaryOperationExpr); ok && x.Op == opcode.LogicOr {
		return orArms(x.R, orArms(x.L, out))
	}
	return append(out, e)
}

func andAtoms(e ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	e = unparen(e)
	if x, ok := e.(*ast.BinaryOperationExpr); ok && x.Op == opcode.LogicAnd {
		return andAtoms(x.R, andAtoms(x.L, out))
	}
	return append(out, e)
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// Bind is engine.ParamBinder: the statement text runs (a PREPARE's: the
// statement its string holds) with each parameter replaced by its value,
// parenthesized unless it is digits alone (LIMIT ? takes no parentheses,
// and ?--? must not become a comment), a value not known by the user
// variable @sqlfw_unknown_N, N its position. False for a PREPARE from a
// variable or expression, a text with executable comments (read one way
// here and another by the parser), and counts that differ.
func (myDialect) Bind(text string, vals engine.ParamValues) (string, bool) {
	body := text
	if leadsWithWord(text, "prepare") {
		var inner string
		ok := false
		parse(text, func(stmts []ast.StmtNode, err error) {
			if err != nil || len(stmts) != 1 {
				return
			}
			if x, is := stmts[0].(*ast.PrepareStmt); is && x.SQLVar == nil && x.SQLText != "" {
				inner, ok = x.SQLText, true
			}
		})
		if !ok {
			return "", false
		}
		body = inner
	}
	if strings.Contains(body, "/*!") || strings.Contains(body, "/*M!") || strings.Contains(body, "/*m!") {
		return "", false
	}
	count := vals.Count()
	out := make([]byte, 0, len(body)+32)
	n, at := 0, 0
	for t, ok := nextToken(body, 0); ok; t, ok = nextToken(body, t.hi) {
		if t.kind != '?' {
			continue
		}
		if count >= 0 && n >= count {
			return "", false
		}
		out = append(out, body[at:t.lo]...)
		mark := len(out)
		out = append(out, " ("...)
		var known bool
		if out, known = vals.AppendSQL(out, n); !known {
			out = append(out[:mark+2], "@sqlfw_unknown_"...)
			out = strconv.AppendInt(out, int64(n), 10)
		} else if digitsOnly(out[mark+2:]) {
			copy(out[mark+1:], out[mark+2:])
			out = out[:len(out)-1]
			out = append(out, ' ')
			at, n = t.hi, n+1
			continue
		}
		out = append(out, ") "...)
		at, n = t.hi, n+1
	}
	if count >= 0 && n != count {
		return "", false
	}
	out = append(out, body[at:]...)
	return string(out), true
}

func digitsOnly(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// leadsWithWord reports whether text's first word, after spaces and
// comments, is w (in any case).
func leadsWithWord(text, w string) bool {
	t, ok := nextToken(text, 0)
	return ok && t.kind == tokWord && strings.EqualFold(text[t.lo:t.hi], w)
}
