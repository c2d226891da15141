package pgsql

// Operators, comparisons and casts of constants, folded as PostgreSQL
// evaluates them (fold.go).

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// applyOp folds a binary operator on two known constants. An untyped
// string literal takes the other side's type ('1' = 1 is true in
// PostgreSQL).
func applyOp(op string, l, r cval) cval {
	if l.kind == cvUnknown || r.kind == cvUnknown {
		return unknownVal
	}
	if l.kind == cvNull || r.kind == cvNull {
		return cval{kind: cvNull}
	}
	l, r, ok := unify(l, r)
	if !ok {
		return unknownVal
	}
	switch op {
	case "^":
		if l.kind != cvNum {
			return unknownVal
		}
		return numVal(math.Pow(l.num, r.num), false)
	case "+", "-", "*", "/", "%":
		if l.kind != cvNum {
			return unknownVal
		}
		isInt := l.isInt && r.isInt
		switch op {
		case "+":
			return numVal(l.num+r.num, isInt)
		case "-":
			return numVal(l.num-r.num, isInt)
		case "*":
			return numVal(l.num*r.num, isInt)
		case "/":
			if r.num == 0 {
				return unknownVal // division by zero: an error
			}
			if isInt {
				return numVal(math.Trunc(l.num/r.num), true)
			}
			return numVal(l.num/r.num, false)
		default:
			if r.num == 0 || !isInt {
				return unknownVal
			}
			return numVal(math.Mod(l.num, r.num), true)
		}
	case "||":
		if l.kind == cvStr {
			return cval{kind: cvStr, str: l.str + r.str}
		}
		if l.kind == cvBits {
			return cval{kind: cvBits, str: l.str + r.str}
		}
		return unknownVal
	case "^@": // starts_with
		if l.kind != cvStr {
			return unknownVal
		}
		return boolVal(strings.HasPrefix(l.str, r.str))
	case "~~", "!~~", "~~*", "!~~*": // LIKE and ILIKE by their operator names
		if l.kind != cvStr || (strings.HasSuffix(op, "*") && (!isASCII(l.str) || !isASCII(r.str))) {
			return unknownVal
		}
		ls, rs := l.str, r.str
		if strings.HasSuffix(op, "*") {
			ls, rs = strings.ToLower(ls), strings.ToLower(rs)
		}
		m, ok := likeMatch(ls, rs, '\\')
		if !ok {
			return unknownVal
		}
		return boolVal(m != strings.HasPrefix(op, "!"))
	case "~", "~*", "!~", "!~*":
		if l.kind != cvStr || strings.ContainsRune(r.str, '\\') {
			return unknownVal // PostgreSQL's regular expressions differ from Go's in escapes
		}
		pat := r.str
		if strings.HasSuffix(op, "*") {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return unknownVal
		}
		return boolVal(re.MatchString(l.str) != strings.HasPrefix(op, "!"))
	}
	c, ok := compare(l, r)
	if !ok {
		return unknownVal
	}
	switch op {
	case "=":
		return boolVal(c == 0)
	case "<>", "!=":
		return boolVal(c != 0)
	case "<":
		return boolVal(c < 0)
	case ">":
		return boolVal(c > 0)
	case "<=":
		return boolVal(c <= 0)
	case ">=":
		return boolVal(c >= 0)
	}
	return unknownVal
}

// unify brings two known, non-NULL constants to one kind: an untyped
// string takes the other side's type.
func unify(l, r cval) (cval, cval, bool) {
	if l.kind != r.kind {
		l, r = coerce(l, r.kind), coerce(r, l.kind)
	}
	return l, r, l.kind == r.kind
}

func coerce(v cval, to cvKind) cval {
	if v.kind != cvStr || to == cvStr {
		return v
	}
	s := strings.TrimSpace(v.str)
	switch to {
	case cvNum:
		if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpP_") {
			return numVal(f, !strings.ContainsAny(s, ".eE"))
		}
	case cvBool:
		if b, ok := parseBool(s); ok {
			return boolVal(b)
		}
	case cvBits:
		if strings.Trim(v.str, "01") == "" {
			return cval{kind: cvBits, str: v.str}
		}
	}
	return unknownVal
}

// parseBool reads boolean input as PostgreSQL's boolin does: any unique
// prefix of true/false/yes/no, on/off (at least "of"), 1/0, any case.
func parseBool(s string) (bool, bool) {
	s = strings.ToLower(s)
	if s == "" {
		return false, false
	}
	for _, w := range []struct {
		word string
		min  int
		val  bool
	}{{"true", 1, true}, {"false", 1, false}, {"yes", 1, true}, {"no", 1, false}, {"on", 2, true}, {"off", 2, false}, {"1", 1, true}, {"0", 1, false}} {
		if len(s) >= w.min && strings.HasPrefix(w.word, s) {
			return w.val, true
		}
	}
	return false, false
}

func compare(l, r cval) (int, bool) {
	switch l.kind {
	case cvNum:
		if l.inexact && r.inexact {
			return 0, false
		}
		switch {
		case l.num < r.num:
			return -1, true
		case l.num > r.num:
			return 1, true
		}
		return 0, true
	case cvStr, cvBits:
		// Byte order; equality is the same under every deterministic
		// collation, order may differ for non-ASCII text.
		return strings.Compare(l.str, r.str), true
	case cvBool:
		switch {
		case l.b == r.b:
			return 0, true
		case !l.b:
			return -1, true
		}
		return 1, true
	}
	return 0, false
}

// typeName returns a cast's target type, lower-cased, "" for an array, a
// type with modifiers we do not model, or one outside pg_catalog.
func typeName(t *pg_query.TypeName) (string, []*pg_query.Node) {
	if t == nil || len(t.ArrayBounds) > 0 || len(t.Names) == 0 || len(t.Names) > 2 {
		return "", nil
	}
	if len(t.Names) == 2 && t.Names[0].GetString_().GetSval() != "pg_catalog" {
		return "", nil
	}
	return strings.ToLower(t.Names[len(t.Names)-1].GetString_().GetSval()), t.Typmods
}

func castTo(v cval, t *pg_query.TypeName) cval {
	name, mods := typeName(t)
	return castNamed(v, name, mods)
}

func castNamed(v cval, name string, mods []*pg_query.Node) cval {
	if v.kind == cvUnknown {
		return v
	}
	if v.kind == cvNull {
		switch name {
		case "":
			return unknownVal
		}
		return v
	}
	switch name {
	case "bool", "boolean":
		switch v.kind {
		case cvBool:
			return v
		case cvStr:
			return coerce(v, cvBool)
		case cvNum:
			if v.isInt {
				return boolVal(v.num != 0)
			}
		}
	case "int2", "int4", "int8", "int", "integer", "smallint", "bigint":
		switch v.kind {
		case cvStr:
			s := strings.TrimSpace(v.str)
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return numVal(float64(i), true)
			}
		case cvNum:
			if v.isInt {
				return v
			}
			return numVal(math.Round(v.num), true) // numeric rounds half away from zero
		case cvBool:
			if name == "int4" || name == "int" || name == "integer" {
				if v.b {
					return numVal(1, true)
				}
				return numVal(0, true)
			}
		}
	case "numeric", "decimal", "float4", "float8", "real", "float", "double precision":
		if len(mods) > 0 {
			return unknownVal
		}
		switch v.kind {
		case cvStr:
			c := coerce(v, cvNum)
			c.isInt = false
			return c
		case cvNum:
			v.isInt = false
			return v
		}
	case "text", "varchar", "name":
		if len(mods) > 0 {
			return unknownVal // varchar(n) truncates
		}
		switch v.kind {
		case cvStr:
			return v
		case cvNum:
			if v.isInt {
				return cval{kind: cvStr, str: strconv.FormatInt(int64(v.num), 10)}
			}
		case cvBool:
			return cval{kind: cvStr, str: strconv.FormatBool(v.b)}
		}
	case "varbit", "bit":
		if v.kind == cvStr {
			v = coerce(v, cvBits)
		}
		if v.kind != cvBits {
			return unknownVal
		}
		if name == "bit" {
			// bit without a length is bit(1); an explicit cast pads or truncates.
			n := 1
			if len(mods) == 1 {
				n = int(mods[0].GetAConst().GetIval().GetIval())
			}
			if len(v.str) != n {
				return unknownVal
			}
		}
		return v
	}
	return unknownVal
}
