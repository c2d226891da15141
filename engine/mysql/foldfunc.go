package mysql

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// foldCast folds CAST/CONVERT to numbers and strings and BINARY x.
func (fo *folder) foldCast(x *ast.FuncCastExpr, d int) (folded, bool) {
	v, ok := fo.fold(x.Expr, d)
	if !ok || v.null || x.Tp == nil {
		return v, ok
	}
	switch x.Tp.GetType() {
	case mysql.TypeLonglong, mysql.TypeLong, mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24:
		n := num(v)
		if mysql.HasUnsignedFlag(x.Tp.GetFlag()) {
			return numF(float64(toUint(v)))
		}
		return numF(math.Round(n))
	case mysql.TypeNewDecimal, mysql.TypeDouble, mysql.TypeFloat:
		return numF(num(v))
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar, mysql.TypeBlob:
		s := strF(text(v))
		s.bin = x.FunctionType == ast.CastBinaryOperator || x.Tp.GetCharset() == "binary" || v.bin
		return s, true
	case mysql.TypeDate, mysql.TypeDatetime:
		if v.date && !v.isTime {
			return v, true
		}
		if v.isStr {
			return dateFolded(v.str, false)
		}
	}
	return folded{}, false
}

// maxFoldString bounds strings the folding builds (REPEAT, LPAD, SPACE).
const maxFoldString = 4096

// foldFunc folds the builtins of constants whose result the text decides.
func (fo *folder) foldFunc(x *ast.FuncCallExpr, d int) (folded, bool) {
	name := x.FnName.L
	if x.Schema.L != "" && x.Schema.L != "tidb" {
		return folded{}, false // a stored function of that name
	}
	args := x.Args
	// Functions that do not evaluate every argument.
	switch name {
	case "last_value":
		// MariaDB's LAST_VALUE(e1, ..., en): en (mariarewrite.go)
		if len(args) == 0 {
			return folded{}, false
		}
		return fo.fold(args[len(args)-1], d)
	case "if":
		if len(args) != 3 {
			return folded{}, false
		}
		c, ok := fo.fold(args[0], d)
		if !ok {
			return folded{}, false
		}
		if !c.null && truthy(c) {
			return fo.fold(args[1], d)
		}
		return fo.fold(args[2], d)
	case "ifnull", "nvl", "coalesce":
		for _, a := range args {
			v, ok := fo.fold(a, d)
			if !ok || !v.null {
				return v, ok
			}
		}
		return nullF, true
	case "isnull":
		if len(args) != 1 {
			return folded{}, false
		}
		if n, ok := fo.nullTest(args[0]); ok {
			return boolF(n), true
		}
		v, ok := fo.fold(args[0], d)
		return boolF(v.null), ok
	case "pi":
		if len(args) == 0 {
			return numF(math.Pi)
		}
		return folded{}, false
	}
	vals := make([]folded, len(args))
	anyNull := false
	for i, a := range args {
		if _, ok := a.(*ast.TrimDirectionExpr); ok {
			continue
		}
		v, ok := fo.fold(a, d)
		if !ok {
			if name == "char_func" && i == len(args)-1 {
				continue // USING charset
			}
			return folded{}, false
		}
		vals[i] = v
		anyNull = anyNull || v.null
	}
	arg := func(i int) folded { return vals[i] }
	argc := len(args)
	switch name {
	case ast.DateLiteral, ast.TimestampLiteral:
		if argc == 1 && vals[0].isStr {
			return dateFolded(vals[0].str, false)
		}
	case ast.TimeLiteral:
		if argc == 1 && vals[0].isStr {
			return dateFolded(vals[0].str, true)
		}
	case "nullif":
		if argc != 2 {
			break
		}
		if arg(0).null {
			return nullF, true
		}
		if arg(1).null {
			return arg(0), true
		}
		c, ok := compare(arg(0), arg(1))
		if !ok {
			break
		}
		if c == 0 {
			return nullF, true
		}
		return arg(0), true
	case "elt":
		if argc < 1 || arg(0).null {
			return nullF, argc >= 1
		}
		i := roundInt(num(arg(0)))
		if i < 1 || i >= argc {
			return nullF, true
		}
		return arg(i), true
	case "field":
		if argc < 2 || arg(0).null {
			return numF(0)
		}
		for i := 1; i < argc; i++ {
			if arg(i).null {
				continue
			}
			c, ok := compare(arg(0), arg(i))
			if !ok {
				return folded{}, false
			}
			if c == 0 {
				return numF(float64(i))
			}
		}
		return numF(0)
	case "char_func":
		var b []byte
		for i := 0; i < argc; i++ {
			if _, ok := args[i].(ast.ValueExpr); ok && i == argc-1 && (vals[i].isStr || vals[i].null) && argc > 1 {
				continue // the USING charset (or its absence)
			}
			if vals[i].null {
				continue // CHAR skips NULLs
			}
			n := toUint(vals[i])
			var tmp []byte
			for n > 0 {
				tmp = append([]byte{byte(n)}, tmp...)
				n >>= 8
			}
			if len(tmp) == 0 {
				tmp = []byte{0}
			}
			b = append(b, tmp...)
		}
		s := strF(string(b))
		s.bin = true
		return s, true
	}
	if anyNull {
		switch name {
		case "concat", "ascii", "ord", "length", "octet_length", "char_length", "character_length", "bit_length",
			"upper", "ucase", "lower", "lcase", "reverse", "hex", "unhex", "abs", "floor", "ceil", "ceiling", "round",
			"truncate", "sign", "mod", "strcmp", "instr", "locate", "position", "left", "right", "substr", "substring",
			"mid", "trim", "ltrim", "rtrim", "repeat", "space", "lpad", "rpad", "sqrt", "pow", "power", "replace",
			"greatest", "least", "find_in_set":
			return nullF, true
		}
	}
	switch name {
	case "concat":
		var sb strings.Builder
		bin := false
		for _, v := range vals {
			sb.WriteString(text(v))
			bin = bin || v.bin
			if sb.Len() > maxFoldString {
				return folded{}, false
			}
		}
		s := strF(sb.String())
		s.bin = bin
		return s, true
	case "concat_ws":
		if argc < 1 || arg(0).null {
			return nullF, argc >= 1
		}
		var parts []string
		for _, v := range vals[1:] {
			if !v.null {
				parts = append(parts, text(v))
			}
		}
		s := strings.Join(parts, text(arg(0)))
		if len(s) > maxFoldString {
			return folded{}, false
		}
		return strF(s), true
	case "ascii":
		if argc == 1 {
			t := text(arg(0))
			if t == "" {
				return numF(0)
			}
			return numF(float64(t[0]))
		}
	case "ord":
		if argc == 1 {
			t := text(arg(0))
			if t == "" {
				return numF(0)
			}
			if t[0] < utf8.RuneSelf || arg(0).bin {
				return numF(float64(t[0]))
			}
		}
	case "length", "octet_length":
		if argc == 1 {
			return numF(float64(len(text(arg(0)))))
		}
	case "bit_length":
		if argc == 1 {
			return numF(float64(8 * len(text(arg(0)))))
		}
	case "char_length", "character_length":
		if argc == 1 {
			if arg(0).bin {
				return numF(float64(len(text(arg(0)))))
			}
			return numF(float64(utf8.RuneCountInString(text(arg(0)))))
		}
	case "upper", "ucase", "lower", "lcase":
		if argc == 1 {
			v := arg(0)
			if v.bin {
				return v, true // a binary string has no case
			}
			if name == "upper" || name == "ucase" {
				return strF(strings.ToUpper(text(v))), true
			}
			return strF(strings.ToLower(text(v))), true
		}
	case "reverse":
		if argc == 1 && isASCII(text(arg(0))) {
			b := []byte(text(arg(0)))
			for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
				b[i], b[j] = b[j], b[i]
			}
			s := strF(string(b))
			s.bin = arg(0).bin
			return s, true
		}
	case "hex":
		if argc == 1 {
			v := arg(0)
			if v.isStr {
				return strF(strings.ToUpper(hexString(v.str))), true
			}
			if n := num(v); n >= 0 && n == math.Trunc(n) && n < 1<<53 {
				return strF(strings.ToUpper(strconv.FormatUint(uint64(n), 16))), true
			}
		}
	case "unhex":
		if argc == 1 {
			t := text(arg(0))
			if len(t)%2 == 1 {
				t = "0" + t
			}
			b := make([]byte, 0, len(t)/2)
			for i := 0; i+1 < len(t); i += 2 {
				n, err := strconv.ParseUint(t[i:i+2], 16, 8)
				if err != nil {
					return nullF, true
				}
				b = append(b, byte(n))
			}
			s := strF(string(b))
			s.bin = true
			return s, true
		}
	case "abs":
		if argc == 1 {
			return numF(math.Abs(num(arg(0))))
		}
	case "floor":
		if argc == 1 {
			return numF(math.Floor(num(arg(0))))
		}
	case "ceil", "ceiling":
		if argc == 1 {
			return numF(math.Ceil(num(arg(0))))
		}
	case "round", "truncate":
		if argc == 1 || argc == 2 {
			p := 0.0
			if argc == 2 {
				p = math.Round(num(arg(1)))
			}
			if p < -30 || p > 30 {
				break
			}
			m := math.Pow(10, p)
			f := num(arg(0)) * m
			if name == "round" {
				f = math.Round(f)
			} else {
				f = math.Trunc(f)
			}
			return numF(f / m)
		}
	case "sign":
		if argc == 1 {
			n := num(arg(0))
			switch {
			case n > 0:
				return numF(1)
			case n < 0:
				return numF(-1)
			}
			return numF(0)
		}
	case "mod":
		if argc == 2 {
			return applyOp(opcode.Mod, arg(0), arg(1))
		}
	case "sqrt":
		if argc == 1 {
			if n := num(arg(0)); n >= 0 {
				return numF(math.Sqrt(n))
			}
			return nullF, true
		}
	case "pow", "power":
		if argc == 2 {
			return numF(math.Pow(num(arg(0)), num(arg(1))))
		}
	case "greatest", "least":
		if argc < 2 {
			break
		}
		best := arg(0)
		allStr := true
		for _, v := range vals {
			allStr = allStr && v.isStr && !v.hex
		}
		for _, v := range vals[1:] {
			var c int
			var ok bool
			if allStr {
				c, ok = compare(v, best)
			} else {
				c, ok = numCompare(v, best)
			}
			if !ok {
				return folded{}, false
			}
			if (name == "greatest" && c > 0) || (name == "least" && c < 0) {
				best = v
			}
		}
		if !allStr {
			return numF(num(best))
		}
		return best, true
	case "strcmp":
		if argc == 2 {
			c, ok := compare(strF(text(arg(0))), strF(text(arg(1))))
			if !ok {
				break
			}
			return numF(float64(c))
		}
	case "instr", "locate", "position":
		if argc < 2 || argc > 3 {
			break
		}
		hay, needle := text(arg(1)), text(arg(0))
		if name == "instr" {
			hay, needle = text(arg(0)), text(arg(1))
		}
		start := 1
		if argc == 3 {
			start = roundInt(num(arg(2)))
			if start < 1 {
				return numF(0)
			}
		}
		if !isASCII(hay) || !isASCII(needle) || start > len(hay)+1 {
			break
		}
		if !(arg(0).bin || arg(1).bin) {
			hay, needle = strings.ToLower(hay), strings.ToLower(needle)
		}
		i := strings.Index(hay[start-1:], needle)
		if i < 0 {
			return numF(0)
		}
		return numF(float64(i + start))
	case "left", "right":
		if argc == 2 && isASCII(text(arg(0))) {
			t, n := text(arg(0)), roundInt(num(arg(1)))
			if n < 0 {
				n = 0
			}
			if n > len(t) {
				n = len(t)
			}
			if name == "left" {
				return strF(t[:n]), true
			}
			return strF(t[len(t)-n:]), true
		}
	case "substr", "substring", "mid":
		if (argc == 2 || argc == 3) && isASCII(text(arg(0))) {
			t := text(arg(0))
			pos := roundInt(num(arg(1)))
			switch {
			case pos == 0 || -pos > len(t):
				return strF(""), true
			case pos < 0:
				pos = len(t) + pos
			default:
				pos--
			}
			if pos > len(t) {
				return strF(""), true
			}
			out := t[pos:]
			if argc == 3 {
				n := roundInt(num(arg(2)))
				if n < 0 {
					n = 0
				}
				if n < len(out) {
					out = out[:n]
				}
			}
			return strF(out), true
		}
	case "trim", "ltrim", "rtrim":
		if argc >= 1 {
			t := text(arg(0))
			rem := " "
			dir := ast.TrimBoth
			if name == "ltrim" {
				dir = ast.TrimLeading
			} else if name == "rtrim" {
				dir = ast.TrimTrailing
			}
			if argc >= 2 {
				rem = text(arg(1))
			}
			if argc == 3 {
				if td, ok := args[2].(*ast.TrimDirectionExpr); ok && td.Direction != ast.TrimBothDefault {
					dir = td.Direction
				}
			}
			if rem == "" {
				return strF(t), true
			}
			if dir != ast.TrimTrailing {
				for strings.HasPrefix(t, rem) {
					t = t[len(rem):]
				}
			}
			if dir != ast.TrimLeading {
				for strings.HasSuffix(t, rem) {
					t = t[:len(t)-len(rem)]
				}
			}
			return strF(t), true
		}
	case "repeat":
		if argc == 2 {
			f := math.Round(num(arg(1)))
			if f <= 0 {
				return strF(""), true
			}
			if f > maxFoldString || int(f)*len(text(arg(0))) > maxFoldString {
				break
			}
			n := int(f)
			return strF(strings.Repeat(text(arg(0)), n)), true
		}
	case "space":
		if argc == 1 {
			f := math.Round(num(arg(0)))
			if f <= 0 {
				return strF(""), true
			}
			if f > maxFoldString {
				break
			}
			return strF(strings.Repeat(" ", int(f))), true
		}
	case "replace":
		if argc == 3 && isASCII(text(arg(0))) {
			s := strings.ReplaceAll(text(arg(0)), text(arg(1)), text(arg(2)))
			if len(s) > maxFoldString {
				break
			}
			return strF(s), true
		}
	case "find_in_set":
		if argc == 2 && isASCII(text(arg(0))) && isASCII(text(arg(1))) {
			if strings.Contains(text(arg(0)), ",") {
				return numF(0)
			}
			for i, p := range strings.Split(text(arg(1)), ",") {
				if strings.EqualFold(p, text(arg(0))) {
					return numF(float64(i + 1))
				}
			}
			return numF(0)
		}
	}
	return folded{}, false
}

// roundInt is a number rounded to an int, clamped to ±2^40 (beyond any
// string the folding builds), so that no conversion overflows.
func roundInt(f float64) int {
	f = math.Round(f)
	switch {
	case f > 1<<40:
		return 1 << 40
	case f < -(1 << 40):
		return -(1 << 40)
	}
	return int(f)
}

func hexString(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}
