package pgsql

// The immutable builtins a constant condition may call, folded as
// PostgreSQL evaluates them (fold.go).

import (
	"crypto/md5"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// funcName returns a function's name when it is unqualified or in
// pg_catalog, else "".
func funcName(parts []*pg_query.Node) string {
	switch len(parts) {
	case 1:
		return parts[0].GetString_().GetSval()
	case 2:
		if parts[0].GetString_().GetSval() == "pg_catalog" {
			return parts[1].GetString_().GetSval()
		}
	}
	return ""
}

// foldFunc folds the immutable builtins listed here, on constant
// arguments: text (lower, upper, length, char_length, character_length,
// octet_length, btrim/ltrim/rtrim and TRIM, concat, replace, reverse, left,
// right, substr/substring, strpos/position, starts_with, repeat up to 4 KiB,
// md5, ascii, chr), numbers (abs, sign, ceil, ceiling, floor, round, trunc,
// mod) and function-style casts (bool('t'), int4('1'), text(1)). lower and
// upper fold ASCII text only (other letters follow the locale).
func (fo *folder) foldFunc(fc *pg_query.FuncCall, d int) cval {
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || fc.Over != nil || len(fc.AggOrder) > 0 || fc.FuncVariadic {
		return unknownVal
	}
	name := funcName(fc.Funcname)
	if name == "" || len(fc.Args) > 3 {
		return unknownVal
	}
	var a [3]cval
	for i, arg := range fc.Args {
		a[i] = fo.fold(arg, d)
		if a[i].kind == cvUnknown {
			return unknownVal
		}
	}
	n := len(fc.Args)
	if name == "concat" {
		var b strings.Builder
		for _, v := range a[:n] {
			switch v.kind {
			case cvNull:
			case cvStr:
				b.WriteString(v.str)
			default:
				v = castNamed(v, "text", nil)
				if v.kind != cvStr {
					return unknownVal
				}
				b.WriteString(v.str)
			}
		}
		return cval{kind: cvStr, str: b.String()}
	}
	switch name {
	case "bool", "int2", "int4", "int8", "numeric", "float8", "text", "varchar":
		if n == 1 {
			return castNamed(a[0], name, nil)
		}
		return unknownVal
	}
	if op, ok := comparisonFunc(name); ok && n == 2 {
		return applyOp(op, a[0], a[1])
	}
	for _, v := range a[:n] {
		if v.kind == cvNull {
			if _, known := foldedFuncs[name]; known {
				return v // these functions are strict: NULL in, NULL out
			}
			return unknownVal
		}
	}
	str := func(i int) (string, bool) {
		v := a[i]
		if v.kind == cvNum && v.isInt {
			return strconv.FormatInt(int64(v.num), 10), true
		}
		return v.str, v.kind == cvStr
	}
	num := func(i int) (float64, bool) {
		v := a[i]
		if v.kind == cvStr {
			v = coerce(v, cvNum)
		}
		return v.num, v.kind == cvNum
	}
	integer := func(i int) (int, bool) {
		f, ok := num(i)
		return int(f), ok && f == math.Trunc(f)
	}
	s0, ok0 := str(0)
	switch {
	case n == 1 && ok0:
		switch name {
		case "lower", "upper":
			if !isASCII(s0) {
				return unknownVal
			}
			if name == "lower" {
				return cval{kind: cvStr, str: strings.ToLower(s0)}
			}
			return cval{kind: cvStr, str: strings.ToUpper(s0)}
		case "length", "char_length", "character_length":
			return numVal(float64(utf8.RuneCountInString(s0)), true)
		case "octet_length":
			return numVal(float64(len(s0)), true)
		case "btrim":
			return cval{kind: cvStr, str: strings.Trim(s0, " ")}
		case "ltrim":
			return cval{kind: cvStr, str: strings.TrimLeft(s0, " ")}
		case "rtrim":
			return cval{kind: cvStr, str: strings.TrimRight(s0, " ")}
		case "reverse":
			r := []rune(s0)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return cval{kind: cvStr, str: string(r)}
		case "md5":
			sum := md5.Sum([]byte(s0))
			return cval{kind: cvStr, str: hex.EncodeToString(sum[:])}
		case "ascii":
			if s0 == "" {
				return numVal(0, true)
			}
			r, _ := utf8.DecodeRuneInString(s0)
			return numVal(float64(r), true)
		}
	}
	if n == 1 {
		x, ok := num(0)
		if ok {
			switch name {
			case "abs":
				return numVal(math.Abs(x), a[0].isInt)
			case "sign":
				return numVal(float64(sign(x)), a[0].isInt)
			case "ceil", "ceiling":
				return numVal(math.Ceil(x), a[0].isInt)
			case "floor":
				return numVal(math.Floor(x), a[0].isInt)
			case "round":
				return numVal(math.Round(x), a[0].isInt)
			case "trunc":
				return numVal(math.Trunc(x), a[0].isInt)
			case "chr":
				if i, ok := integer(0); ok && i > 0 && i <= utf8.MaxRune {
					return cval{kind: cvStr, str: string(rune(i))}
				}
			}
		}
		return unknownVal
	}
	s1, ok1 := str(1)
	switch name {
	case "btrim", "ltrim", "rtrim":
		if n == 2 && ok0 && ok1 {
			f := map[string]func(string, string) string{"btrim": strings.Trim, "ltrim": strings.TrimLeft, "rtrim": strings.TrimRight}[name]
			return cval{kind: cvStr, str: f(s0, s1)}
		}
	case "strpos", "position":
		if n == 2 && ok0 && ok1 {
			i := strings.Index(s0, s1)
			if i < 0 {
				return numVal(0, true)
			}
			return numVal(float64(utf8.RuneCountInString(s0[:i])+1), true)
		}
	case "starts_with":
		if n == 2 && ok0 && ok1 {
			return boolVal(strings.HasPrefix(s0, s1))
		}
	case "replace":
		s2, ok2 := str(2)
		if n == 3 && ok0 && ok1 && ok2 {
			if s1 == "" {
				return cval{kind: cvStr, str: s0}
			}
			return cval{kind: cvStr, str: strings.ReplaceAll(s0, s1, s2)}
		}
	case "left", "right":
		k, ok := integer(1)
		if n == 2 && ok0 && ok {
			r := []rune(s0)
			if k < 0 {
				k = max(len(r)+k, 0)
			}
			k = min(k, len(r))
			if name == "left" {
				return cval{kind: cvStr, str: string(r[:k])}
			}
			return cval{kind: cvStr, str: string(r[len(r)-k:])}
		}
	case "substr", "substring":
		start, ok := integer(1)
		if !ok0 || !ok {
			return unknownVal
		}
		r := []rune(s0)
		end := len(r) + 1
		if n == 3 {
			l, ok := integer(2)
			if !ok || l < 0 {
				return unknownVal
			}
			end = start + l
		}
		lo, hi := max(start, 1), min(end, len(r)+1)
		if hi <= lo {
			return cval{kind: cvStr}
		}
		return cval{kind: cvStr, str: string(r[lo-1 : hi-1])}
	case "repeat":
		k, ok := integer(1)
		if n == 2 && ok0 && ok {
			if k <= 0 {
				return cval{kind: cvStr}
			}
			if k <= 4096 && len(s0)*k <= 4096 {
				return cval{kind: cvStr, str: strings.Repeat(s0, k)}
			}
		}
	case "mod":
		if n == 2 {
			return applyOp("%", a[0], a[1])
		}
	}
	return unknownVal
}

// comparisonFunc reads the functions behind the comparison operators of
// the built-in types (int4eq(1, 1), texteq('a', 'a'), boolne, float8lt ...).
func comparisonFunc(name string) (string, bool) {
	for _, t := range []string{"int2", "int4", "int8", "text", "bool", "name", "numeric", "float4", "float8", "bpchar", "varchar", "bit", "varbit"} {
		if rest, ok := strings.CutPrefix(name, t); ok {
			op, ok := map[string]string{"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[rest]
			return op, ok
		}
	}
	return "", false
}

// foldedFuncs are the strict functions foldFunc knows.
var foldedFuncs = map[string]struct{}{
	"lower": {}, "upper": {}, "length": {}, "char_length": {}, "character_length": {}, "octet_length": {},
	"btrim": {}, "ltrim": {}, "rtrim": {}, "reverse": {}, "md5": {}, "ascii": {}, "abs": {}, "sign": {},
	"ceil": {}, "ceiling": {}, "floor": {}, "round": {}, "trunc": {}, "chr": {}, "strpos": {}, "position": {},
	"starts_with": {}, "replace": {}, "left": {}, "right": {}, "substr": {}, "substring": {}, "repeat": {}, "mod": {},
}

func sign(x float64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
