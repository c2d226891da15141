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
	slices.Sort(b.offsets.at)
	s.Accept(b)
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
