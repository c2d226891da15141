package mysql

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// What a value keeps or loses on its way through operators and functions,
// for the self-comparisons of tautself.go and the bounds of boundCompare:
//
//   - wrappers that return the value as it compares with itself (unwrap):
//     CAST/CONVERT to CHAR or BINARY without a length, CONVERT ... USING,
//     TRIM/LTRIM/RTRIM of spaces, LOWER/UPPER, SUBSTRING(x, 1), CONCAT of x
//     and empty strings, JSON_UNQUOTE, and JSON_EXTRACT/JSON_VALUE of the
//     element a JSON_ARRAY or JSON_OBJECT was built with; for integers also
//     CAST to DECIMAL (of 10 or more integer digits) and DOUBLE. As for
//     FLOOR(x) (tautself.go), some of these differ from x for strings of
//     other forms (TRIM of ' a', LOWER under a _bin collation, JSON_EXTRACT
//     of a string is quoted): they count because an attack compares a key
//     with itself, and keys are integers;
//   - operands that absorb the other (absorbed): x | ~0 is ~0, x & 0 and
//     x * 0 are 0, x << 64 and x >> 64 are 0, for every x that is not NULL;
//   - rows, compared element by element in order (rowCompare);
//   - functions of the row whose value is known all the same (jsonConst):
//     JSON_VALID of a JSON constructor is 1, JSON_TYPE of one 'ARRAY' or
//     'OBJECT', JSON_LENGTH its count;
//   - the range a value stays in (valueBounds), and bounds past every
//     integer type (pastIntegers);
//   - the strings a CONCAT of the row with constants can be, matched with
//     a LIKE pattern (templateLike).

// unwrap returns the operand of a wrapper that leaves it as it compares
// with itself, or nil.
func (fo *folder) unwrap(e ast.ExprNode) ast.ExprNode {
	switch x := e.(type) {
	case *ast.FuncCastExpr:
		if x.Tp == nil || x.FunctionType == ast.CastBinaryOperator {
			return nil
		}
		switch x.Tp.GetType() {
		case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
			if x.Tp.GetFlen() < 0 { // CHAR(1) cuts
				return x.Expr
			}
		case mysql.TypeNewDecimal:
			if x.Tp.GetFlen()-max(x.Tp.GetDecimal(), 0) >= 10 {
				return x.Expr
			}
		case mysql.TypeDouble:
			return x.Expr
		}
	case *ast.FuncCallExpr:
		if x.Schema.L != "" || len(x.Args) == 0 {
			return nil
		}
		a := x.Args
		switch x.FnName.L {
		case "convert": // CONVERT(x USING cs)
			if len(a) == 2 {
				return a[0]
			}
		case "trim":
			// TRIM(x), TRIM(BOTH|LEADING|TRAILING ' ' FROM x)
			if len(a) == 1 || fo.isConstString(a[1], " ") {
				return a[0]
			}
		case "ltrim", "rtrim", "lower", "upper", "lcase", "ucase", "json_unquote":
			if len(a) == 1 {
				return a[0]
			}
		case "reverse", "from_base64":
			// REVERSE(REVERSE(x)), FROM_BASE64(TO_BASE64(x))
			inner := map[string]string{"reverse": "reverse", "from_base64": "to_base64"}[x.FnName.L]
			if f, ok := unparen(a[0]).(*ast.FuncCallExpr); ok && len(a) == 1 && f.FnName.L == inner && f.Schema.L == "" && len(f.Args) == 1 {
				return f.Args[0]
			}
		case "concat_ws":
			// CONCAT_WS(sep, x) is x (a NULL x is skipped: '')
			if len(a) == 2 {
				return a[1]
			}
		case "substring", "substr", "mid":
			if len(a) == 2 && fo.isConstNumber(a[1], 1) {
				return a[0]
			}
		case "concat":
			var kept ast.ExprNode
			for _, arg := range a {
				if fo.isConstString(arg, "") {
					continue
				}
				if kept != nil {
					return nil
				}
				kept = arg
			}
			return kept
		case "json_extract", "json_value":
			if len(a) == 2 {
				return fo.jsonElement(a[0], a[1])
			}
		}
	}
	return nil
}

func (fo *folder) isConstString(e ast.ExprNode, s string) bool {
	v, ok := fo.fold(e, 0)
	return ok && !v.null && v.isStr && v.str == s
}

func (fo *folder) isConstNumber(e ast.ExprNode, n float64) bool {
	v, ok := fo.fold(e, 0)
	return ok && !v.null && !v.isStr && v.num == n
}

// jsonElement returns the argument a JSON_ARRAY or JSON_OBJECT doc was
// built with that path ('$[0]', '$.k') selects, or nil.
func (fo *folder) jsonElement(doc, path ast.ExprNode) ast.ExprNode {
	f, ok := unparen(doc).(*ast.FuncCallExpr)
	p, okp := fo.fold(path, 0)
	if !ok || !okp || p.null || !p.isStr || f.Schema.L != "" {
		return nil
	}
	switch f.FnName.L {
	case "json_array":
		var i int
		if n, err := parseIndexPath(p.str); err == nil && n < len(f.Args) {
			i = n
		} else {
			return nil
		}
		return f.Args[i]
	case "json_object":
		key, ok := strings.CutPrefix(p.str, "$.")
		if !ok || key == "" || len(f.Args)%2 != 0 || strings.ContainsAny(key, ".[]*\"' ") {
			return nil
		}
		var found ast.ExprNode
		for i := 0; i+1 < len(f.Args); i += 2 {
			k, ok := fo.fold(f.Args[i], 0)
			if !ok || k.null {
				return nil // a key the folding does not know may be the same
			}
			if text(k) == key {
				if found != nil {
					return nil // which of two equal keys is read is not decided here
				}
				found = f.Args[i+1]
			}
		}
		return found
	}
	return nil
}

// parseIndexPath reads '$[n]'.
func parseIndexPath(s string) (int, error) {
	in, ok := strings.CutPrefix(s, "$[")
	in, ok2 := strings.CutSuffix(in, "]")
	if !ok || !ok2 || in == "" || len(in) > 4 {
		return 0, errNotIndex
	}
	n := 0
	for i := 0; i < len(in); i++ {
		if in[i] < '0' || in[i] > '9' {
			return 0, errNotIndex
		}
		n = n*10 + int(in[i]-'0')
	}
	return n, nil
}

type notIndexError struct{}

func (notIndexError) Error() string { return "not a JSON array index path" }

var errNotIndex error = notIndexError{}

// absorbed returns the operand of a bit or arithmetic operation that the
// result equals for every other operand that is not NULL (x | ~0 is ~0,
// x & 0 and 0 * x are 0), or nil. zero is set for a shift of 64 or more,
// whose result 0 is neither operand.
func (fo *folder) absorbed(x *ast.BinaryOperationExpr) (c ast.ExprNode, zero bool) {
	cv := func(n ast.ExprNode) (folded, bool) {
		v, ok := fo.fold(n, 0)
		return v, ok && !v.null
	}
	switch x.Op {
	case opcode.Or:
		for _, n := range []ast.ExprNode{x.L, x.R} {
			// ~0 and 18446744073709551615 are the value itself; -1 | x is
			// 18446744073709551615, not -1: only its truth is known
			if v, ok := cv(n); ok && toUint(v) == math.MaxUint64 && num(v) >= 0 {
				return n, false
			}
		}
	case opcode.And, opcode.Mul:
		for _, n := range []ast.ExprNode{x.L, x.R} {
			if v, ok := cv(n); ok && num(v) == 0 && !v.isStr {
				return n, false
			}
		}
	case opcode.LeftShift, opcode.RightShift:
		if v, ok := cv(x.R); ok && num(v) >= 64 {
			return nil, true
		}
	}
	return nil, false
}

// allOnes reports whether x is a bit OR with an operand that is all ones
// as a 64-bit integer (~0, -1): true for every row where the other is not
// NULL.
func (fo *folder) allOnes(x *ast.BinaryOperationExpr) bool {
	if x.Op != opcode.Or {
		return false
	}
	for _, n := range []ast.ExprNode{x.L, x.R} {
		if v, ok := fo.fold(n, 0); ok && !v.null && toUint(v) == math.MaxUint64 {
			return true
		}
	}
	return false
}

// rowCompare decides l op r for two rows of the same length as MariaDB
// compares them, element by element in order: the first pair that is not
// equal decides (ROW(id, 1) > ROW(id, 0) is true: id = id, then 1 > 0),
// and rows whose every pair is equal are equal. A pair is equal or not as
// selfCompare decides it (id = id counts as true).
func (fo *folder) rowCompare(op opcode.Op, l, r *ast.RowExpr) (truth, bool) {
	for i := range l.Values {
		eq, ok := fo.selfCompare(opcode.EQ, l.Values[i], r.Values[i])
		if !ok {
			return tAny, false
		}
		if eq == tTrue {
			continue
		}
		if eq != tFalse {
			return tAny, false
		}
		switch op {
		case opcode.EQ:
			return tFalse, true
		case opcode.NE:
			return tTrue, true
		case opcode.LT, opcode.LE:
			return fo.selfCompare(opcode.LT, l.Values[i], r.Values[i])
		case opcode.GT, opcode.GE:
			return fo.selfCompare(opcode.GT, l.Values[i], r.Values[i])
		}
		return tAny, false
	}
	switch op {
	case opcode.EQ, opcode.LE, opcode.GE:
		return tTrue, true
	case opcode.NE, opcode.LT, opcode.GT:
		return tFalse, true
	}
	return tAny, false
}

// jsonConst returns the value of a JSON function of the row that is the
// same for every row where its arguments are not NULL: JSON_VALID of a
// JSON constructor (JSON_ARRAY, JSON_OBJECT, JSON_QUOTE) is 1, JSON_TYPE
// of a JSON_ARRAY 'ARRAY' and of a JSON_OBJECT 'OBJECT', JSON_LENGTH of a
// JSON_ARRAY the count of its arguments.
func (fo *folder) jsonConst(e ast.ExprNode) (folded, bool) {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.Schema.L != "" || len(f.Args) != 1 {
		return folded{}, false
	}
	in, ok := unparen(f.Args[0]).(*ast.FuncCallExpr)
	if !ok || in.Schema.L != "" {
		return folded{}, false
	}
	switch f.FnName.L {
	case "json_valid":
		switch in.FnName.L {
		case "json_array", "json_object", "json_quote":
			return boolF(true), true
		}
	case "json_type":
		switch in.FnName.L {
		case "json_array":
			return strF("ARRAY"), true
		case "json_object":
			return strF("OBJECT"), true
		}
	case "json_length":
		if in.FnName.L == "json_array" {
			return numF(float64(len(in.Args)))
		}
	}
	return folded{}, false
}

// integerLow and integerHigh bound every integer column type (BIGINT's
// least, BIGINT UNSIGNED's greatest and beyond).
const (
	integerLow  = -(1 << 63)
	integerHigh = 1 << 64
)

// valueBounds returns bounds a value of the row never leaves where it is
// not NULL: lo <= e <= hi (hasLo, hasHi say which are known).
func (fo *folder) valueBounds(e ast.ExprNode) (lo, hi float64, hasLo, hasHi bool) {
	if lo, hi, hasLo, hasHi, ok := fo.rangeBounds(e); ok {
		return lo, hi, hasLo, hasHi
	}
	switch x := unparen(e).(type) {
	case *ast.FuncCallExpr:
		if x.Schema.L != "" {
			return
		}
		switch x.FnName.L {
		case "length", "char_length", "character_length", "octet_length", "bit_length":
			// at least the constants a CONCAT adds: LENGTH(CONCAT(id, 'x')) >= 1
			if len(x.Args) == 1 {
				if n := fo.concatConstLen(x.Args[0], x.FnName.L == "char_length" || x.FnName.L == "character_length"); n > 0 {
					if x.FnName.L == "bit_length" {
						n *= 8
					}
					return float64(n), 0, true, false
				}
			}
			return 0, 0, true, false
		case "abs", "ascii", "ord":
			return 0, 0, true, false
		case "crc32":
			return 0, math.MaxUint32, true, true
		case "bit_count":
			return 0, 64, true, true
		case "sign":
			return -1, 1, true, true
		case "greatest", "least":
			// GREATEST(x, 1) >= 1 and LEAST(x, 1) <= 1 for every x that is
			// not NULL, when the bound is a number (strings compare as
			// strings then)
			first := true
			var b float64
			for _, a := range x.Args {
				v, ok := fo.fold(a, 0)
				if !ok || v.null || v.isStr || v.date || v.hex {
					continue
				}
				if first || (x.FnName.L == "greatest" && v.num > b) || (x.FnName.L == "least" && v.num < b) {
					b, first = v.num, false
				}
			}
			if first {
				return
			}
			if x.FnName.L == "greatest" {
				return b, 0, true, false
			}
			return 0, b, false, true
		}
	case *ast.AggregateFuncExpr:
		if strings.EqualFold(x.F, "count") {
			return 0, 0, true, false
		}
	case *ast.SubqueryExpr:
		// (SELECT COUNT(*) FROM ...) without GROUP BY is one row, never
		// below 0; at least 1 when the subquery holds the outer row of
		// the written table (SELECT COUNT(*) FROM t x WHERE x.id = t.id)
		sel, ok := x.Query.(*ast.SelectStmt)
		if !ok || sel.GroupBy != nil || sel.Having != nil || sel.Limit != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
			return
		}
		a, ok := sel.Fields.Fields[0].Expr.(*ast.AggregateFuncExpr)
		if !ok || !strings.EqualFold(a.F, "count") || a.Distinct {
			return
		}
		if fo.one != nil && len(a.Args) == 1 {
			if _, constArg := fo.fold(a.Args[0], 0); constArg && fo.one.inner == "" {
				q := quals{fo.one.name: true}
				if fo.one.alias != "" {
					q = quals{fo.one.alias: true}
				}
				if fo.selfRow(sel, q, &ast.TableName{Name: ast.NewCIStr(fo.one.name)}, "") {
					return 1, 0, true, false
				}
			}
		}
		return 0, 0, true, false
	case *ast.BinaryOperationExpr:
		// x | c >= c, x & c <= c as 64-bit unsigned integers
		if x.Op == opcode.Or || x.Op == opcode.And {
			for _, n := range []ast.ExprNode{x.L, x.R} {
				if v, ok := fo.fold(n, 0); ok && !v.null && num(v) >= 0 && num(v) < 1<<53 {
					c := float64(toUint(v))
					if x.Op == opcode.Or {
						return c, 0, true, false
					}
					return 0, c, true, true
				}
			}
		}
	}
	return
}

// templateLike reports whether every string a CONCAT of the row with
// constants can be matches a LIKE pattern (CONCAT(id, 'x') LIKE '%x'):
// the pattern matches the CONCAT's template, in which each operand that is
// not a constant is a gap that only a % of the pattern may cover. ok is
// false where that is not shown.
func (fo *folder) templateLike(e ast.ExprNode, pat string, esc rune, ci bool) bool {
	if f, ok := unparen(e).(*ast.FuncCallExpr); !ok || f.FnName.L != "concat" {
		return false // one gap: only a pattern of % matches it, which taut.go knows (name LIKE 'a%' is the usual filter)
	}
	var tmpl []rune // gap for an operand of the row
	const gap = rune(-1)
	var add func(n ast.ExprNode, depth int) bool
	add = func(n ast.ExprNode, depth int) bool {
		if depth > maxFoldDepth || len(tmpl) > maxFoldString {
			return false
		}
		n = unparen(n)
		if v, ok := fo.fold(n, 0); ok {
			if v.null {
				return false
			}
			if v.bin {
				ci = false
			}
			tmpl = append(tmpl, []rune(text(v))...)
			return true
		}
		if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == "concat" && f.Schema.L == "" {
			for _, a := range f.Args {
				if !add(a, depth+1) {
					return false
				}
			}
			return true
		}
		if len(tmpl) == 0 || tmpl[len(tmpl)-1] != gap {
			tmpl = append(tmpl, gap)
		}
		return true
	}
	if !add(e, 0) || len(pat) > maxFoldString || !utf8.ValidString(pat) {
		return false
	}
	if ci {
		for i, r := range tmpl {
			if r >= 'A' && r <= 'Z' {
				tmpl[i] = r + 'a' - 'A'
			}
		}
		pat = strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, pat)
	}
	p := []rune(pat)
	// memo[i][j]: the template from i matches the pattern from j (0
	// unknown, 1 yes, 2 no)
	memo := make([]uint8, (len(tmpl)+1)*(len(p)+1))
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := i*(len(p)+1) + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		var m bool
		switch {
		case j == len(p):
			m = i == len(tmpl)
		case p[j] == '%':
			m = match(i, j+1) || (i < len(tmpl) && match(i+1, j))
		case i == len(tmpl) || tmpl[i] == gap:
			m = false // a gap may be empty or long: only % covers it
		case p[j] == '_':
			m = match(i+1, j+1)
		case p[j] == esc && j+1 < len(p):
			m = tmpl[i] == p[j+1] && match(i+1, j+2)
		default:
			m = tmpl[i] == p[j] && match(i+1, j+1)
		}
		memo[k] = 2
		if m {
			memo[k] = 1
		}
		return m
	}
	return match(0, 0)
}

// concatConstLen returns the length (in characters when chars, else
// bytes) of the constants a CONCAT adds whatever its other operands are;
// 0 for anything else.
func (fo *folder) concatConstLen(e ast.ExprNode, chars bool) int {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.FnName.L != "concat" || f.Schema.L != "" {
		return 0
	}
	n := 0
	for _, a := range f.Args {
		if v, ok := fo.fold(a, 0); ok && !v.null {
			if chars {
				n += utf8.RuneCountInString(text(v))
			} else {
				n += len(text(v))
			}
		}
	}
	return n
}

// plainRegexp reports whether a REGEXP pattern is letters, digits and
// spaces only, which match themselves: no metacharacter, and none of
// LIKE's % and _ either (templateLike reads it as a LIKE pattern).
func plainRegexp(p string) bool {
	if p == "" || len(p) > 256 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ') {
			return false
		}
	}
	return true
}
