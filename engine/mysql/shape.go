package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/sqlfw/sqlfw/engine"
)

// The shape cache (engine/shapes.go). Bulk INSERT ... VALUES texts differ
// only in their literals, so the exact-text cache never hits and each one
// was parsed (~0.2 ms for 100 rows). ShapeSpans keys such a text (one read by
// lex.go, in TiDB's default sql_mode) by its shape: each number (digits,
// or digits.digits) not glued to an identifier and each '...' or "..."
// string not glued to a word before it (an introducer: _utf8'x', X'0a',
// N'x') is replaced by a NUL and a class byte; every other byte is kept.
// Example: INSERT INTO t VALUES (1, 'a'), (-2.5, "b") has the key
// INSERT INTO t VALUES (\0i, \0s), (-\0f, \0s).
//
// Why a hit is sound. AnalyzeShape calls the facts of text A inert only
// when A is one INSERT or REPLACE and every replaced literal starts where
// TiDB put a constant that is a whole row item of its VALUES list (or the
// operand of a unary minus or plus that is): the parser's own positions
// (OriginTextPosition) show that each span is one token and a row value.
// A text B with the same key is A with each such token swapped for another
// of its class; each class lexes as one token of the same kind whatever its
// value (a string with any content, escapes included, is one string token;
// digits are one integer token, digits.digits one decimal), so TiDB reads B
// as A's token sequence with other values in the same row items, and no
// fact reads the value of a row item. Texts with a NUL byte have no shape,
// so a marker cannot be forged by kept bytes.

// Classes of replaced literals.
const (
	shInt = 'i'
	shDec = 'f'
	shStr = 's'
)

// shapeSpans appends text's shape to key and the start of each replaced
// literal to starts; ok is false when the text is no INSERT or REPLACE,
// replaces nothing, or has a NUL byte or an unterminated quote.
func shapeSpans(key []byte, starts []int, text string) ([]byte, []int, bool) {
	spans, ok := scanShape(nil, text)
	if !ok {
		return key, starts, false
	}
	for _, s := range spans {
		starts = append(starts, s.Start)
	}
	return engine.AppendShapeKey(key, text, spans), starts, true
}

// scanShape appends to spans the literals text's shape replaces
// (shapeSpans).
func scanShape(spans []engine.ShapeSpan, text string) ([]engine.ShapeSpan, bool) {
	spans = spans[:0]
	if strings.IndexByte(text, 0) >= 0 {
		return spans, false
	}
	lead := text
	for len(lead) > 0 && (lead[0] == ' ' || lead[0] == '\t' || lead[0] == '\r' || lead[0] == '\n') {
		lead = lead[1:]
	}
	if len(lead) < 7 || !(strings.EqualFold(lead[:6], "insert") || strings.EqualFold(lead[:7], "replace") || strings.EqualFold(lead[:6], "select")) {
		return spans, false
	}
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
		switch {
		case c == '#' || (c == '-' && i+1 < n && text[i+1] == '-' && (i+2 == n || isSpaceByte(text[i+2]))):
			for i < n && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && text[i+1] == '*':
			if i+2 < n && text[i+2] == '!' {
				return spans, false // a kept executable comment: not worth it
			}
			k := strings.Index(text[i+2:], "*/")
			if k < 0 {
				return spans, false
			}
			i += 2 + k + 2
		case c == '`':
			j := quotedStr(text, i, '`', false)
			if j == n && text[n-1] != '`' {
				return spans, false
			}
			i = j
		case c == '\'' || c == '"':
			j := quotedStr(text, i, c, true)
			if j > n || j-i < 2 || text[j-1] != c {
				return spans, false
			}
			if i > 0 && isIdentByte(text[i-1]) {
				i = j // an introducer or prefix: kept
				continue
			}
			spans = append(spans, engine.ShapeSpan{Start: i, End: j, Class: shStr})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < n && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			class := byte(shInt)
			if j+1 < n && text[j] == '.' && text[j+1] >= '0' && text[j+1] <= '9' {
				j++
				for j < n && text[j] >= '0' && text[j] <= '9' {
					j++
				}
				class = shDec
			}
			if j < n && (isIdentByte(text[j]) || text[j] == '.') {
				// 1abc is an identifier, 1e5 and 0x1f other tokens: kept.
				for j < n && (isIdentByte(text[j]) || text[j] == '.') {
					j++
				}
				i = j
				continue
			}
			spans = append(spans, engine.ShapeSpan{Start: i, End: j, Class: class})
			i = j
		case isIdentByte(c):
			for i < n && isIdentByte(text[i]) {
				i++
			}
		default:
			i++
		}
	}
	return spans, len(spans) > 0
}

// ShapeSpans is engine.Shaper's.
func (myDialect) ShapeSpans(spans []engine.ShapeSpan, text string) ([]engine.ShapeSpan, bool) {
	return scanShape(spans, text)
}

// AnalyzeShape is Analyze; inert reports whether every replaced literal is
// a row value of the one INSERT the text holds.
func (myDialect) AnalyzeShape(text string, lex engine.LexStats) (*engine.TextFacts, bool) {
	inert := false
	tf := analyzeStmts(text, lex, func(tf *engine.TextFacts, stmts []ast.StmtNode) {
		inert = !tf.ParseError && len(stmts) == 1 && rowValuesOnly(text, stmts[0])
	})
	// The rest of analyze: a text led by INSERT or SELECT may hold more
	// statements (a CREATE with a DEFINER, a stored body), whose facts
	// these fill as for any text.
	definers(text, lex, tf)
	storedBodies(text, tf)
	return tf, inert
}

// rowValuesOnly reports whether s is an INSERT whose every literal Shape
// replaces starts where TiDB put a row value, or a point select whose
// every such literal is a comparison operand (shapeselect.go).
func rowValuesOnly(text string, s ast.StmtNode) bool {
	_, starts, ok := shapeSpans(nil, nil, text)
	if !ok {
		return false
	}
	if sel, isSel := s.(*ast.SelectStmt); isSel {
		return inertSelect(sel, starts) // shapeselect.go
	}
	ins, ok := s.(*ast.InsertStmt)
	if !ok || len(ins.Lists) == 0 {
		return false
	}
	rowValues := make(map[int]bool, len(starts))
	for _, row := range ins.Lists {
		for _, e := range row {
			if u, ok := e.(*ast.UnaryOperationExpr); ok && (u.Op == opcode.Minus || u.Op == opcode.Plus) {
				e = u.V
			}
			if _, ok := e.(ast.ValueExpr); ok {
				rowValues[e.OriginTextPosition()] = true
			}
		}
	}
	for _, s := range starts {
		if !rowValues[s] {
			return false
		}
	}
	return true
}
